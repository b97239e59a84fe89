"""Static checks of a plan: consumes a parsed `Plan`, produces a list of `PlanProblem`s
(empty when the plan can run), each saying what is wrong and how to fix it, worded so
that it can be fed back to an LLM that wrote the plan.

Codes: too_many_steps (of the repaired plan; limits.py checks the plan as written),
duplicate_id, duplicate_variable, undefined_variable (no step binds it),
forward_reference (a later step binds it: repair.py reorders such plans), cycle (steps
read each other in a loop), type_mismatch and not_a_document (value_types.py),
bad_pattern, capture_groups, number_group, bad_expression, bad_scope, bad_rule, bad_field,
bad_period (a step's own fields, found by its tool's check through
shared/tools/registry.py: `check_step`), bad_template. Problems come in step order; those
of the whole plan (step None) first, the answer template's last.

A step's own fields are checked as its tool reads them, without running anything: a
pattern is vetted as the tools compile it (in a child process bounded in time and
memory, none compiled in this process), an expression or an ARBITRATE rule goes through
its tool's own parser, never evaluated. A finding names the step and the field and says
what is wrong without quoting the field's text: it goes back to the client in a 422, and
to the model beside its own reply.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import jinja2

from shared.config import MAX_STEPS
from shared.errors import PlanError
from shared.models import ExtractStep, Plan, PlanProblem, Step
from shared.plan.graph import binders, find_cycles, topological_order
from shared.plan.limits import too_many_steps
from shared.plan.value_types import infer_types, type_findings
from shared.render.sandbox import GLOBALS, template_reads
from shared.tools.registry import check_step

_ONE_VAR_RE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
RENDER_CONTEXT = frozenset({"question", "values", "missing", "tense", "period", "tenses", "periods"})
"""Names shared/render/ gives every answer template besides the step variables."""


def validate_plan(plan: Plan, max_steps: int = MAX_STEPS, *,
                  unknown: Collection[str] = ()) -> list[PlanProblem]:
    """Every problem the plan has: the whole plan's, then in step order, then the template's.

    `unknown` names variables whose kind of value is not known (parse.py's stand-ins for
    steps that did not parse), so that no type_mismatch is reported against them.
    """
    problems: list[PlanProblem] = []
    if len(plan.steps) > max_steps:
        problems.append(too_many_steps(len(plan.steps), max_steps))
    cycles = {min(c): c for c in find_cycles(plan)}
    in_cycle = {index for c in cycles.values() for index in c}
    kinds = infer_types(plan, topological_order(plan) or list(range(len(plan.steps))), unknown)
    typed: dict[int, list[tuple[str, str]]] = {}
    for index, code, message in type_findings(plan, kinds):
        typed.setdefault(index, []).append((code, message))
    first = binders(plan)
    ids: set[str] = set()
    bound: dict[str, Step] = {}  # variable -> the step that binds it, in plan order
    for index, step in enumerate(plan.steps):
        found = _check_step(step, ids, bound, first, index in in_cycle)
        if index in cycles:
            found.append(("cycle", _cycle(plan, cycles[index])))
        found += check_step(step) + typed.get(index, [])
        if isinstance(step, ExtractStep):
            found += _literal_source(step, bound)
        problems += [PlanProblem(step=step.id, code=c, message=m) for c, m in found]
        ids.add(step.id)
        bound.setdefault(step.var, step)
    return problems + _check_template(plan.answer, first)


def check_plan(plan: Plan, max_steps: int = MAX_STEPS) -> Plan:
    """`plan` itself when it passes every check; otherwise PlanError listing them all."""
    problems = validate_plan(plan, max_steps)
    if problems:
        raise PlanError(plan_invalid(len(problems)), problems)
    return plan


def plan_invalid(count: int) -> str:
    """The PlanError message for `count` problems."""
    return f"plan is invalid: {count} problem{'s' if count != 1 else ''}"


def _check_step(step: Step, ids: set[str], bound: dict[str, Step], first: dict[str, int],
                cyclic: bool) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if step.id in ids:
        found.append(("duplicate_id", f"step id {step.id!r} is used by an earlier step too; "
                      "give every step its own id (E1, E2, …)"))
    if step.var in bound and not (step.id in ids and step.output_var is None):
        found.append(("duplicate_variable", f"step {step.id} binds ${step.var}, which step "
                      f"{bound[step.var].id} already binds; give it a new output_var such as "
                      f"${step.var}_{step.id}"))
    for name in dict.fromkeys(step.references()):
        if name not in first:
            found.append(("undefined_variable", f"step {step.id} reads ${name}, but no step "
                          f"binds it; variables defined at this point: {_listing(bound)}. "
                          f"Refer to one of those, or add a step with output_var ${name} "
                          f"before {step.id}"))
        elif name not in bound and name != step.var and not cyclic:
            found.append(("forward_reference", f"step {step.id} reads ${name}, which a later "
                          f"step binds; put that step before {step.id} (steps run after the "
                          "steps they read)"))
    return found


def _cycle(plan: Plan, cycle: list[int]) -> str:
    steps = [plan.steps[i] for i in cycle]
    if len(steps) == 1:
        return (f"step {steps[0].id} reads ${steps[0].var}, its own output; read an earlier "
                "step's output instead")
    reads = ", ".join(f"{a.id} reads ${b.var}" for a, b in zip(steps, steps[1:] + steps[:1]))
    loop = " → ".join(s.id for s in steps + steps[:1])
    return (f"steps {loop} read each other's outputs in a loop ({reads}), so none of them "
            "can run first; make one of them read an earlier step instead")


def _literal_source(step: ExtractStep, bound: dict[str, Step]) -> list[tuple[str, str]]:
    if _ONE_VAR_RE.fullmatch(step.source.strip()):
        return []
    documents = [f"${name}" for name, s in bound.items() if s.operation == "GET"]
    return [("not_a_document", f"step {step.id}'s source is not one variable; an EXTRACT "
             "step reads the document a GET step fetched: write that step's output_var (e.g. "
             f"{(documents or ['$R1'])[-1]}), adding a GET step for the document if there "
             "is none")]


def _check_template(answer: str | None, bound: dict) -> list[PlanProblem]:
    if answer is None:
        return []
    try:  # the sandbox intercepts ** and *, so compiling never folds 2 ** 10**9
        reads = template_reads(answer)
    except jinja2.TemplateSyntaxError as e:
        hint = " (refer to variables by bare name: {{ Y }}, not {{ $Y }})" if "$" in answer else ""
        return [PlanProblem(step=None, code="bad_template", message=f"answer template does "
                            f"not parse: {e.message} (line {e.lineno}){hint}; fix its Jinja2 "
                            "syntax")]
    unknown = sorted(reads - set(bound) - GLOBALS - RENDER_CONTEXT)
    return [PlanProblem(step=None, code="bad_template", message=f"answer template uses "
                        f"{{{{ {name} }}}}, but no step binds ${name}; variables: "
                        f"{_listing(bound, dollar=False)}; use one of those or add a step "
                        f"with output_var ${name}") for name in unknown]


def _listing(bound: dict, dollar: bool = True) -> str:
    return ", ".join(("$" if dollar else "") + name for name in bound) or "none"

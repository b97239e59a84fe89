"""Static checks of a plan: consumes a parsed `Plan`, produces a list of `PlanProblem`s
(empty when the plan can run), each saying what is wrong and how to fix it, worded so
that it can be fed back to an LLM that wrote the plan.

Codes: duplicate_id, duplicate_variable, undefined_variable, bad_pattern,
capture_groups, not_a_document, bad_expression, bad_scope, bad_template.
Steps are checked in order: a step may only read variables that earlier steps bind.
"""

from __future__ import annotations

import re

import jinja2
import regex
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

from shared.errors import InputError, PlanError, ToolError
from shared.models import ComputeStep, ExtractStep, GetStep, Plan, PlanProblem, Step
from shared.search.dates import parse_scope
from shared.tools.compute import parse_expression
from shared.tools.extract import FLAGS

_ONE_VAR_RE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
RENDER_CONTEXT = frozenset({"question", "values", "missing"})
"""Names shared/render.py gives every answer template besides the step variables."""


def validate_plan(plan: Plan) -> list[PlanProblem]:
    """Every problem the plan has, in step order, then the answer template's."""
    problems: list[PlanProblem] = []
    ids: set[str] = set()
    bound: dict[str, Step] = {}  # variable -> the step that binds it, in plan order
    for step in plan.steps:
        found = _check_step(step, ids, bound)
        problems += [PlanProblem(step=step.id, code=c, message=m) for c, m in found]
        ids.add(step.id)
        bound.setdefault(step.var, step)
    return problems + _check_template(plan.answer, bound)


def check_plan(plan: Plan) -> Plan:
    """`plan` itself when it passes every check; otherwise PlanError listing them all."""
    problems = validate_plan(plan)
    if problems:
        raise PlanError(plan_invalid(len(problems)), problems)
    return plan


def plan_invalid(count: int) -> str:
    """The PlanError message for `count` problems."""
    return f"plan is invalid: {count} problem{'s' if count != 1 else ''}"


def _check_step(step: Step, ids: set[str], bound: dict[str, Step]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if step.id in ids:
        found.append(("duplicate_id", f"step id {step.id!r} is used by an earlier step too; "
                      "give every step its own id (E1, E2, …)"))
    if step.var in bound and not (step.id in ids and step.output_var is None):
        found.append(("duplicate_variable", f"step {step.id} binds ${step.var}, which step "
                      f"{bound[step.var].id} already binds; give it a new output_var such as "
                      f"${step.var}_{step.id}"))
    for name in dict.fromkeys(step.references()):
        if name not in bound:
            found.append(("undefined_variable", f"step {step.id} reads ${name}, but no earlier "
                          f"step binds it; variables defined at this point: {_listing(bound)}. "
                          f"Refer to one of those, or add a step with output_var ${name} "
                          f"before {step.id}"))
    if isinstance(step, ExtractStep):
        found += _check_extract(step, bound)
    elif isinstance(step, ComputeStep):
        try:
            parse_expression(step.expression)
        except ToolError as e:
            found.append(("bad_expression", e.message))
    elif step.temporal_scope is not None:
        try:
            parse_scope(step.temporal_scope)
        except InputError as e:
            found.append(("bad_scope", f"temporal_scope: {e}; or leave temporal_scope out"))
    return found


def _check_extract(step: ExtractStep, bound: dict[str, Step]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    documents = [f"${name}" for name, s in bound.items() if isinstance(s, GetStep)]
    m = _ONE_VAR_RE.fullmatch(step.source.strip())
    if m is None:
        found.append(("not_a_document", f"source {step.source!r} is not one variable; an "
                      "EXTRACT step reads the document a GET step fetched: write that step's "
                      f"output_var (e.g. {(documents or ['$R1'])[-1]}), adding a GET step for "
                      f"{step.source!r} if there is none"))
    elif (name := m[1] or m[2]) in bound and not isinstance(bound[name], GetStep):
        found.append(("not_a_document", f"source ${name} is bound by step {bound[name].id} "
                      f"({bound[name].operation}), not by a GET step; EXTRACT reads documents: "
                      f"use a GET step's output ({', '.join(documents) or 'none defined yet'})"))
    try:
        groups = regex.compile(step.pattern, FLAGS).groups
    except (regex.error, OverflowError, ValueError) as e:
        found.append(("bad_pattern", f"pattern `{step.pattern}` does not compile: {e}; fix the "
                      "regular expression (escape literal ( ) . $ % with a backslash)"))
        return found
    if groups != 1:
        found.append(("capture_groups", f"pattern `{step.pattern}` has {groups} capture groups; "
                      "it needs exactly one ( ) around the value to extract; make other "
                      "groups non-capturing with (?: )"))
    return found


def _check_template(answer: str | None, bound: dict) -> list[PlanProblem]:
    if answer is None:
        return []
    env = SandboxedEnvironment()
    try:
        ast = env.parse(answer)
    except jinja2.TemplateSyntaxError as e:
        hint = " (refer to variables by bare name: {{ Y }}, not {{ $Y }})" if "$" in answer else ""
        return [PlanProblem(step=None, code="bad_template", message=f"answer template does "
                            f"not parse: {e.message} (line {e.lineno}){hint}; fix its Jinja2 "
                            "syntax")]
    unknown = sorted(meta.find_undeclared_variables(ast) - set(bound) - set(env.globals)
                     - RENDER_CONTEXT)
    return [PlanProblem(step=None, code="bad_template", message=f"answer template uses "
                        f"{{{{ {name} }}}}, but no step binds ${name}; variables: "
                        f"{_listing(bound, dollar=False)}; use one of those or add a step "
                        f"with output_var ${name}") for name in unknown]


def _listing(bound: dict, dollar: bool = True) -> str:
    return ", ".join(("$" if dollar else "") + name for name in bound) or "none"

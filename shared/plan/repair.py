"""Repair: consumes a `Plan` (checked or not), produces the plan with the mistakes that
have one obvious fix fixed, and one sentence per repair for the run record.

In order: (a) an EXTRACT whose source is a document name rather than a `$VAR` gets the
GET step it lacks (`<id>_GET`, just before it), or, when the name is a variable written
without `$` (`R1`, `#E1`), reads that variable; (b) GET steps that name the same
document (same words, ignoring case and punctuation; same temporal_scope and top_k)
become one: the first is kept and every reference to the others, in steps and in the
answer template, reads its output; (c) steps that read a later step are moved after
it, unless steps read each other in a cycle; (d) when `plan.drop_unused` is set and
there is an answer template, steps that neither the template nor any kept step reads
are dropped. Repair never raises and is idempotent: repairing a repaired plan changes
nothing. `prepare_plan` repairs, then runs the static checks.
"""

from __future__ import annotations

import re

from shared.models import ExtractStep, GetStep, Plan
from shared.models.plan import VAR_RE
from shared.plan.graph import dependencies, topological_order
from shared.plan.rename import rename_variable, template_variables
from shared.plan.validate import MAX_STEPS, check_plan

_ROUNDS = 5


def repair_plan(plan: Plan) -> tuple[Plan, list[str]]:
    """The repaired plan and what was repaired, one sentence each (empty: nothing to do)."""
    repairs: list[str] = []
    for _ in range(_ROUNDS):  # one repair can enable another (a drop leaves a GET unique)
        made = len(repairs)
        for repair in (_add_missing_gets, _merge_same_gets, _reorder, _drop_unused):
            plan = repair(plan, repairs)
        if len(repairs) == made:
            break
    return plan, repairs


def prepare_plan(plan: Plan, max_steps: int = MAX_STEPS) -> tuple[Plan, list[str]]:
    """The repaired plan, once it passes the static checks, and its repairs; PlanError
    listing the problems of the repaired plan otherwise."""
    repaired, repairs = repair_plan(plan)
    return check_plan(repaired, max_steps), repairs


def _add_missing_gets(plan: Plan, repairs: list[str]) -> Plan:
    steps: list = []
    before = len(repairs)
    taken = {s.id for s in plan.steps} | {s.var for s in plan.steps}
    for step in plan.steps:
        literal = step.source.strip() if isinstance(step, ExtractStep) else ""
        if not literal or VAR_RE.fullmatch(literal):
            steps.append(step)
            continue
        name = literal.removeprefix("#")
        binder = next((s for s in plan.steps if s.var == name and s is not step), None)
        if binder is not None:
            steps.append(step.model_copy(update={"source": f"${name}"}))
            repairs.append(f"EXTRACT step {step.id} read {literal!r}, which is step "
                           f"{binder.id}'s variable written without $: it now reads ${name}")
            continue
        same = next((s for s in [*plan.steps, *steps] if isinstance(s, GetStep)
                     and s.top_k == 1 and _words(s.source) == _words(literal)), None)
        if same is not None:
            steps.append(step.model_copy(update={"source": f"${same.var}"}))
            repairs.append(f"EXTRACT step {step.id} read {literal!r}, a document name rather "
                           f"than a step's output: it now reads ${same.var}, the document "
                           f"GET step {same.id} fetches")
            continue
        get = GetStep(id=_free_id(step.id, taken), operation="GET", source=literal)
        taken.add(get.id)
        steps += [get, step.model_copy(update={"source": f"${get.var}"})]
        repairs.append(f"EXTRACT step {step.id} read {literal!r}, a document name rather "
                       f"than a step's output: added GET step {get.id} to fetch that "
                       f"document, and {step.id} now reads ${get.var}")
    return plan.model_copy(update={"steps": steps}) if len(repairs) > before else plan


def _free_id(extract_id: str, taken: set[str]) -> str:
    base = extract_id.replace("-", "_")  # the id is also the variable name: no "-"
    candidate, n = f"{base[:28]}_GET", 2
    while candidate in taken:
        candidate, n = f"{base[:26]}_GET{n}", n + 1
    return candidate


def _merge_same_gets(plan: Plan, repairs: list[str]) -> Plan:
    merged = True
    while merged:
        merged = False
        binds = [s.var for s in plan.steps]
        first: dict[tuple, GetStep] = {}
        for step in plan.steps:
            if not isinstance(step, GetStep) or binds.count(step.var) != 1:
                continue
            key = (_words(step.source), (step.temporal_scope or "").strip(), step.top_k)
            kept = first.setdefault(key, step)
            if kept is step:
                continue
            rest = plan.model_copy(update={"steps": [s for s in plan.steps if s is not step]})
            renamed = rename_variable(rest, step.var, kept.var)
            if renamed is None:
                continue
            repairs.append(f"GET steps {kept.id} and {step.id} fetch the same document "
                           f"({kept.source!r}): kept {kept.id} and dropped {step.id}; what "
                           f"read ${step.var} now reads ${kept.var}")
            plan, merged = renamed, True
            break
    return plan


def _words(source: str) -> str:
    return " ".join(re.sub(r"[^\w$]+", " ", source.casefold()).split())


def _reorder(plan: Plan, repairs: list[str]) -> Plan:
    order = topological_order(plan)
    if order is None or order == list(range(len(plan.steps))):
        return plan
    steps = [plan.steps[i] for i in order]
    repairs.append("moved steps so that each runs after the steps whose outputs it reads; "
                   f"the order is now {', '.join(s.id for s in steps)}")
    return plan.model_copy(update={"steps": steps})


def _drop_unused(plan: Plan, repairs: list[str]) -> Plan:
    used = template_variables(plan.answer) if plan.drop_unused and plan.answer else None
    if not used:
        return plan  # without a template that reads something, nothing is known unused
    deps = dependencies(plan)
    live = [i for i, s in enumerate(plan.steps) if s.var in used]
    keep = set(live)
    while live:
        for d in deps[live.pop()]:
            if d not in keep:
                keep.add(d)
                live.append(d)
    if not keep or len(keep) == len(plan.steps):
        return plan
    dropped = [s for i, s in enumerate(plan.steps) if i not in keep]
    repairs.append(f"dropped step{'s' if len(dropped) > 1 else ''} "
                   f"{', '.join(s.id for s in dropped)}: neither the answer template nor "
                   f"any other step reads {', '.join('$' + s.var for s in dropped)}")
    return plan.model_copy(update={"steps": [s for i, s in enumerate(plan.steps) if i in keep]})

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
nothing. Each repair is one pass over the steps (dicts keyed on variables and on what a
GET fetches), so repair takes time linear in the plan's size. `prepare_plan` rejects a
plan written with more than `max_steps` steps (limits.py), repairs, then runs the static
checks.
"""

from __future__ import annotations

import re
from collections import Counter

from shared.config import MAX_STEPS
from shared.models import ExtractStep, GetStep, Plan
from shared.models.plan import VAR_RE
from shared.plan.graph import dependencies, topological_order
from shared.plan.limits import check_step_count
from shared.plan.rename import rename_variables, template_variables
from shared.plan.validate import check_plan

_ROUNDS = 5
_NOT_WORDS_RE = re.compile(r"[^\w$]+")


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
    when the plan as written has more than `max_steps` steps, or listing the problems of
    the repaired plan."""
    check_step_count(len(plan.steps), max_steps)
    repaired, repairs = repair_plan(plan)
    return check_plan(repaired, max_steps), repairs


def _add_missing_gets(plan: Plan, repairs: list[str]) -> Plan:
    if not any(isinstance(s, ExtractStep) and not VAR_RE.fullmatch(s.source.strip())
               for s in plan.steps):
        return plan
    steps: list = []
    before = len(repairs)
    taken = {s.id for s in plan.steps} | {s.var for s in plan.steps}
    binding: dict[str, list] = {}  # variable -> the first two steps that bind it
    documents: dict[str, GetStep] = {}  # words of a source -> the first GET of them
    for s in plan.steps:
        if len(first_two := binding.setdefault(s.var, [])) < 2:
            first_two.append(s)
        if isinstance(s, GetStep) and s.top_k == 1:
            documents.setdefault(_words(s.source), s)
    for step in plan.steps:
        literal = step.source.strip() if isinstance(step, ExtractStep) else ""
        if not literal or VAR_RE.fullmatch(literal):
            steps.append(step)
            continue
        name = literal.removeprefix("#")
        binder = next((s for s in binding.get(name, ()) if s is not step), None)
        if binder is not None:
            steps.append(step.model_copy(update={"source": f"${name}"}))
            repairs.append(f"EXTRACT step {step.id} read {literal!r}, which is step "
                           f"{binder.id}'s variable written without $: it now reads ${name}")
            continue
        same = documents.get(_words(literal))
        if same is not None:
            steps.append(step.model_copy(update={"source": f"${same.var}"}))
            repairs.append(f"EXTRACT step {step.id} read {literal!r}, a document name rather "
                           f"than a step's output: it now reads ${same.var}, the document "
                           f"GET step {same.id} fetches")
            continue
        get = GetStep(id=_free_id(step.id, taken), operation="GET", source=literal)
        taken.add(get.id)
        documents[_words(literal)] = get
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
    binds = Counter(s.var for s in plan.steps)
    first: dict[tuple, GetStep] = {}
    same: dict[int, GetStep] = {}  # position of a GET -> the earlier GET it repeats
    for index, step in enumerate(plan.steps):
        if isinstance(step, GetStep) and binds[step.var] == 1:
            kept = first.setdefault(same_document(step), step)
            if kept is not step:
                same[index] = kept
    if not same:
        return plan
    renamed, made = rename_variables(plan, {plan.steps[i].var: k.var for i, k in same.items()})
    dropped = {i for i in same if plan.steps[i].var in made}
    for index in sorted(dropped):
        step, kept = plan.steps[index], same[index]
        repairs.append(f"GET steps {kept.id} and {step.id} fetch the same document "
                       f"({kept.source!r}): kept {kept.id} and dropped {step.id}; what "
                       f"read ${step.var} now reads ${kept.var}")
    return renamed.model_copy(update={"steps": [
        s for i, s in enumerate(renamed.steps) if i not in dropped]}) if dropped else plan


def same_document(step: GetStep) -> tuple:
    """What two GET steps share when they fetch the same document (repair merges them):
    the source's words (case and punctuation ignored), temporal_scope and top_k."""
    return (_words(step.source), (step.temporal_scope or "").strip(), step.top_k)


def _words(source: str) -> str:
    return " ".join(_NOT_WORDS_RE.sub(" ", source.casefold()).split())


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

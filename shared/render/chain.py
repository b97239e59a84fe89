"""Step chains: consumes a plan and its step results, produces what each step's value
rests on — the steps it read, the documents behind it (one list per item when a list
value has a document per item), the GET/SEARCH steps at the start of its chain, and,
for a step that failed because an input failed, the step whose failure started it.

A step's own `document`/`documents` are its evidence. A step without them (COMPUTE, IF,
MERGE, ARBITRATE, FILTER, VALIDATE) inherits the evidence of its inputs: the action_ids
in `StepResult.inputs`, or the variables it reads in the plan when those are not
recorded. An EXTRACT fallback rests on nothing: the document did not state it.
"""

from __future__ import annotations

from shared.models import Evidence, Plan, StepResult

FETCHING = ("GET", "SEARCH")
PASSED_ON = ("INPUT_FAILED", "INPUT_MISSING", "NO_INPUTS")
"""Error codes of a step that failed only because the steps it reads failed."""


def read_by(plan: Plan, results: dict[str, StepResult], step_id: str) -> list[str]:
    """Ids of the steps whose values step `step_id` read."""
    producers = plan.producers()
    known = {s.id for s in plan.steps}
    r = results.get(step_id)
    if r is not None and r.inputs:
        ids = [aid.rsplit(":", 1)[-1] for aid in r.inputs]
        return [i for i in ids if i in known and i != step_id]
    step = next((s for s in plan.steps if s.id == step_id), None)
    refs = step.references() if step is not None else []
    ids = [producers[v] for v in refs if v in producers]
    return list(dict.fromkeys(i for i in ids if i != step_id))


def own_evidence(r: StepResult) -> list[Evidence]:
    docs = list(r.documents)
    if r.document is not None and r.document not in docs:
        docs.insert(0, r.document)
    return docs


def evidence(plan: Plan, results: dict[str, StepResult]) -> dict[str, list[Evidence]]:
    """Step id -> the documents its value rests on."""
    memo: dict[str, list[Evidence]] = {}

    def of(step_id: str, seen: frozenset[str]) -> list[Evidence]:
        if step_id in memo:
            return memo[step_id]
        r = results.get(step_id)
        found: list[Evidence] = []
        if r is not None and r.confidence != "fallback":
            found = own_evidence(r)
            if not found:
                for sid in read_by(plan, results, step_id):
                    if sid not in seen:
                        found += [e for e in of(sid, seen | {sid}) if e not in found]
        memo[step_id] = found
        return found

    return {s.id: of(s.id, frozenset({s.id})) for s in plan.steps}


def item_evidence(r: StepResult) -> list[Evidence] | None:
    """The document of each item of a list value, when the step gave one per item."""
    if isinstance(r.value, list) and r.value and len(r.documents) == len(r.value):
        return list(r.documents)
    return None


def upstream(plan: Plan, results: dict[str, StepResult], step_id: str) -> list[str]:
    """Every step id the value of `step_id` depends on, itself first, nearest first."""
    order, queue = [step_id], [step_id]
    while queue:
        for sid in read_by(plan, results, queue.pop(0)):
            if sid not in order:
                order.append(sid)
                queue.append(sid)
    return order


def fetching(plan: Plan, results: dict[str, StepResult], step_id: str) -> list[str]:
    """Ids of the GET and SEARCH steps at the start of the chain of `step_id`."""
    ops = {s.id: s.operation for s in plan.steps}
    return [sid for sid in upstream(plan, results, step_id) if ops.get(sid) in FETCHING]


def root_failure(plan: Plan, results: dict[str, StepResult], step_id: str) -> str:
    """The id of the step whose failure made `step_id` fail: itself unless it failed
    only because an input failed (or never ran)."""
    current, seen = step_id, {step_id}
    while True:
        failed = [sid for sid in read_by(plan, results, current) if sid not in seen
                  and (results.get(sid) is None or results[sid].status != "ok")]
        r = results.get(current)
        if not failed or (r is not None and r.status == "error"
                          and r.error_code not in PASSED_ON):
            return current
        current = failed[0]
        seen.add(current)


def document_texts(plan: Plan, results: dict[str, StepResult], step_id: str) -> list[str]:
    """The fetched texts the chain of `step_id` read (a GET's value: a text or a list)."""
    texts: list[str] = []
    ops = {s.id: s.operation for s in plan.steps}
    for sid in upstream(plan, results, step_id):
        r = results.get(sid)
        if ops.get(sid) == "GET" and r is not None and r.status == "ok":
            texts += [str(v) for v in r.value] if isinstance(r.value, list) else [str(r.value)]
    return texts

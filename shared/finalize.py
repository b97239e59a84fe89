"""Finalize a query: read its step results by action_id, render and store the Answer.

Runs once per query (the run store's terminal guard makes a redelivered finalizer a
no-op). Consumes the plan and StepResults from the run store; produces the Answer.
"""

from __future__ import annotations

from shared.models import Answer
from shared.render import render_answer
from shared.store import RunStore


def finalize_query(store: RunStore, query_id: str) -> Answer | None:
    """Render and store the answer; None when the query was already terminal or unknown."""
    record = store.record(query_id)
    if record is None:
        return None
    store.count_finalizer_run(query_id)
    if record.status in ("done", "failed"):
        return None
    if record.plan is None:
        store.fail(query_id, "finalizer found no plan for this query")
        return None
    store.set_status(query_id, "finalizing")
    answer = render_answer(record.plan, {s.step_id: s for s in record.steps}, record.question)
    return answer if store.finish(query_id, answer) else None




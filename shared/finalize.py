"""Finalize a query: read its step results by action_id, render and store the Answer.

Runs once per query (the run store's terminal guard makes a redelivered finalizer a
no-op). Consumes the plan and StepResults from the run store; produces the Answer.

Auto mode: when the answer is incomplete (a step failed, a value is missing) and the
caller can continue with a ReAct loop (`continue_with`), the answer is not stored; the
loop gets the query instead, seeded with the evidence the steps gathered, and its answer
becomes the query's.
"""

from __future__ import annotations

from typing import Callable

from shared.models import TERMINAL, Answer, Query
from shared.render import render_answer
from shared.render.isolated import Renderer
from shared.render.sandbox import RENDER_BUDGET_S
from shared.store import RunStore


def finalize_query(store: RunStore, query_id: str,
                   continue_with: Callable[[Query], object] | None = None,
                   render_budget_s: float = RENDER_BUDGET_S,
                   renderer: Renderer | None = None, task_id: str = "") -> Answer | None:
    """Render and store the answer; None when the query was already terminal or unknown,
    or when an incomplete auto-mode answer was handed to `continue_with` (the loop)."""
    record = store.record(query_id)
    if record is None:
        return None
    try:
        if record.status in TERMINAL or record.iterations:
            return None  # terminal, or an auto-mode query the ReAct loop already took over
        if record.plan is None:
            store.fail(query_id, "finalizer found no plan for this query")
            return None
        store.set_status(query_id, "finalizing")
        answer = render_answer(record.plan, {s.step_id: s for s in record.steps},
                               record.question, budget_s=render_budget_s,
                               renderer=renderer)
    finally:
        # Counted once a run is past rendering (or ended early, or raised) and before the
        # answer is stored, once per finalize task (`task_id`): a run killed mid-render or
        # whose ack a Redis crash lost, given back and run again, is not counted twice; a
        # run of another finalize task would be (there is one: queues.finalize_task_id).
        store.count_finalizer_run(query_id, task_id)
    if record.mode == "auto" and not answer.complete and continue_with is not None:
        query = store.query(query_id)
        if query is not None:
            continue_with(query)  # sends ReAct iteration 1 once, however often we run
            return None
    return answer if store.finish(query_id, answer) else None

"""Finalize a query: read its step results by action_id, render and store the Answer.

Runs once per query (the run store's terminal guard makes a redelivered finalizer a
no-op). Consumes the plan and StepResults from the run store; produces the Answer.

The texts a GET read are stored by reference (shared/stores/texts.py); the finalizer reads them
back (`texts`) so a template sees what the step read (`{{ R1 | length }}` counts the
document, not its quote); a text whose version is gone is a gap (DOCUMENT_CHANGED), not
its quote. An answer longer than `CHORDAL_MAX_STEP_BYTES` (a template that prints whole
documents) is stored cut to it, saying so.

Auto mode: when the answer is incomplete (a step failed, a value is missing) and the
caller can continue with a ReAct loop (`continue_with`), the answer is not stored; the
loop gets the query instead, seeded with the evidence the steps gathered, and its answer
becomes the query's.
"""

from __future__ import annotations

import uuid
from typing import Callable

from shared.errors import ToolError
from shared.models import TERMINAL, Answer, Query, StepResult
from shared.render import render_answer
from shared.render.isolated import Renderer
from shared.render.sandbox import RENDER_BUDGET_S
from shared.stores.runs import RunStore
from shared.stores.texts import TextReader


def finalize_query(store: RunStore, query_id: str,
                   continue_with: Callable[[Query], object] | None = None,
                   render_budget_s: float = RENDER_BUDGET_S,
                   renderer: Renderer | None = None, task_id: str = "",
                   texts: TextReader | None = None) -> Answer | None:
    """Render and store the answer; None when the query was already terminal or unknown,
    or when an incomplete auto-mode answer was handed to `continue_with` (the loop)."""
    record = store.start_finalizing(query_id)  # and `finalizing`, when it renders
    if record is None:
        return None
    # Counted once a run is past rendering (or ended early, or raised), by the script
    # that stores the answer or before anything else is sent, once per finalize task
    # (`task_id`; a run without one counts as a task of its own): a run killed mid-render
    # or whose ack a Redis crash lost, given back and run again, is not counted twice; a
    # run of another finalize task would be (there is one: naming.finalize_task_id).
    task_id = task_id or uuid.uuid4().hex
    answer, continues = None, False
    try:
        if record.status in TERMINAL or record.iterations:
            return None  # terminal, or an auto-mode query the ReAct loop already took over
        if record.plan is None:
            store.fail(query_id, "finalizer found no plan for this query")
            return None
        answer = render_answer(record.plan, {s.step_id: _read_back(s, texts)
                                             for s in record.steps},
                               record.question, budget_s=render_budget_s,
                               renderer=renderer)
        answer = _bounded(answer, store.max_step_bytes, query_id)
        continues = record.mode == "auto" and not answer.complete and continue_with is not None
    finally:
        if answer is None or continues:
            store.count_finalizer_run(query_id, task_id)
    if continues:
        query = store.query(query_id)
        if query is not None:
            continue_with(query)  # sends ReAct iteration 1 once, however often we run
            return None
    return answer if store.finish(query_id, answer, finalizer_task=task_id) else None


def _read_back(result: StepResult, texts: TextReader | None) -> StepResult:
    """`result` with the texts it holds by reference read back; a text whose version is
    gone makes it an error (DOCUMENT_CHANGED), so the answer states a gap."""
    if texts is None or not result.texts or result.status != "ok":
        return result
    try:
        return texts.resolve(result, result.step_id)
    except ToolError as exc:
        return result.model_copy(update={"status": "error", "value": None,
                                         "error_code": exc.code, "error_message": exc.message})


def _bounded(answer: Answer, max_bytes: int, query_id: str) -> Answer:
    """`answer` with its text cut to `max_bytes` (UTF-8), saying where the rest is."""
    data = answer.text.encode("utf-8")
    if len(data) <= max_bytes:
        return answer
    cut = data[:max_bytes].decode("utf-8", "ignore")
    return answer.model_copy(update={"text": (
        f"{cut}\n[answer cut at {max_bytes:,} bytes (CHORDAL_MAX_STEP_BYTES) of "
        f"{len(data):,}; the texts its steps read: chordal show {query_id} --text STEP]")})

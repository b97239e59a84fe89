"""Run one plan step: StepTask in, StepResult out, stored under its action_id.

The executor tasks are thin wrappers around `run_step`. It never raises (but for
Celery's soft time limit, which the task records as TIME_LIMIT): a tool that fails, an
input that is missing and an unexpected crash all become a StepResult with
`status="error"` and an error code, so the join always reaches the finalizer. A step
that already has a stored result (a redelivered task) returns that result unchanged,
which keeps what the task returns deterministic. The texts a step reads by reference
(a GET's documents) are read back before its tool runs (shared/stores/texts.py). A step nothing waits for any more (its
query is terminal, or the final plan left it out after a rejected reply sent it) is
skipped before it starts: nothing is run or stored.

`tool_result`, `error_result` and `failure_result` are the one way Chordal makes a
StepResult from a tool's output or an error, ReAct actions (shared/react/act.py) included.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from celery import current_task
from celery.exceptions import SoftTimeLimitExceeded

from shared import naming
from shared.errors import ToolError, ToolFailure, TransientToolError
from shared.models import StepResult, StepTask
from shared.search import SearchBackend
from shared.stores.runs import RunStore
from shared.stores.texts import TextReader
from shared.tools.base import ToolOutput
from shared.tools.registry import TOLERATES_FAILED_INPUTS, run_tool

log = logging.getLogger(__name__)

TRANSIENT_RETRIES = 2
"""Extra attempts for a TransientToolError, with exponential backoff."""
KEPT_CANDIDATES = 8
"""The most documents a GET's result keeps of those it considered (chosen and fitting
first, then the refused ones nearest): the rest would make a query's record grow with
the corpus."""


def _inputs(store: RunStore, task: StepTask, backend: SearchBackend,
            read: dict[str, str] | None = None) -> dict[str, StepResult]:
    """The results of the steps `task` reads; `read`: their stored JSON as the step's
    start read it (a step missing there is read again)."""
    results = {}
    tolerant = task.step.operation in TOLERATES_FAILED_INPUTS
    for var, step_id in task.inputs.items():
        raw = (read or {}).get(step_id)
        result = StepResult.model_validate_json(raw) if raw else store.step(task.query_id, step_id)
        if result is None:
            raise ToolError("INPUT_MISSING", f"${var} (step {step_id}) has no result yet; "
                            "the step ran before its input, which is a dispatch bug")
        if result.status != "ok" and not tolerant:
            raise ToolError("INPUT_FAILED", f"${var} is unavailable because step {step_id} "
                            f"failed ({result.error_code}: {result.error_message})")
        if result.status == "ok" and result.texts:
            result = TextReader(backend, store.r, store.text_cache_s).resolve(result, task.step.id)
        results[var] = result
    return results


def running_task() -> dict:
    """`worker` (the Celery node name) and `task_id` of the task running this code, for a
    StepResult; empty outside a task."""
    request = getattr(current_task, "request", None)
    found = {"worker": getattr(request, "hostname", None), "task_id": getattr(request, "id", None)}
    return {k: v for k, v in found.items() if isinstance(v, str) and v}


def step_base(task: StepTask, **fields) -> dict:
    """The fields every StepResult of `task` starts from (action_id, step_id, operation,
    and the worker and task running it)."""
    return dict(action_id=naming.action_id(task.query_id, task.step.id), step_id=task.step.id,
                operation=task.step.operation, **running_task(), **fields)


def tool_result(base: dict, out: ToolOutput, started: float) -> StepResult:
    """The `ok` StepResult of a tool's output; `started` is the `time.perf_counter()`
    reading when the tool started."""
    text = "" if out.value is None else str(out.value)
    return StepResult(**base, status="ok", value=out.value, confidence=out.confidence,
                      document=out.document, documents=out.documents, note=out.note,
                      inputs=out.inputs, candidates=out.candidates[:KEPT_CANDIDATES],
                      quote=out.quote,
                      quantity=out.quantity, quantities=out.quantities,
                      duration_ms=(time.perf_counter() - started) * 1000,
                      result_length=len(text), finished_at=time.time())


def error_result(base: dict, code: str, message: str, started: float | None = None,
                 candidates: list | None = None) -> StepResult:
    """The `error` StepResult with `code` and `message`; `started` as in `tool_result`
    (none: the step never ran, its duration is 0)."""
    duration_ms = 0.0 if started is None else (time.perf_counter() - started) * 1000
    return StepResult(**base, status="error", error_code=code, error_message=message,
                      candidates=(candidates or [])[:KEPT_CANDIDATES], duration_ms=duration_ms,
                      finished_at=time.time())


def failure_result(base: dict, exc: Exception, started: float | None = None) -> StepResult:
    """The `error` StepResult of what a tool raised: a ToolFailure's own code, message
    and candidates, TOOL_CRASHED for anything else (a tool bug)."""
    if isinstance(exc, ToolFailure):
        return error_result(base, exc.code, exc.message, started, exc.candidates)
    return error_result(base, "TOOL_CRASHED", f"{type(exc).__name__}: {exc}", started)


def execute(task: StepTask, store: RunStore, backend: SearchBackend,
            attempt: int = 1, sleep: Callable[[float], None] = time.sleep,
            read: dict[str, str] | None = None) -> StepResult:
    """Run the step's tool and turn whatever happens into a StepResult (not stored). A
    soft time limit propagates: the executor task reports it as TIME_LIMIT. `read`: the
    stored JSON of the steps it reads, as its start read them."""
    base = step_base(task, attempt=attempt, started_at=time.time())
    started = time.perf_counter()
    for retry in range(TRANSIENT_RETRIES + 1):
        try:
            return tool_result(base, run_tool(task.step, _inputs(store, task, backend, read),
                                              backend), started)
        except SoftTimeLimitExceeded:
            raise
        except TransientToolError as exc:
            if retry < TRANSIENT_RETRIES:
                sleep(0.2 * 2 ** retry)
                continue
            return error_result(base, exc.code, f"{exc.message} (after {retry + 1} attempts)",
                                started, exc.candidates)
        except Exception as exc:  # a tool bug must not stall the query
            if not isinstance(exc, ToolError):
                log.exception("step %s crashed", base["action_id"])
            return failure_result(base, exc, started)
    raise AssertionError("unreachable")


def run_step(task: StepTask, store: RunStore, backend: SearchBackend,
             max_deliveries: int = 3,
             put: Callable[[str, StepResult], StepResult] | None = None) -> StepResult | None:
    """Execute a step once per action_id and store its result; return the stored result,
    or None when nothing waits for the step (skipped: the query is terminal, or its
    final plan left the step out after it was sent). `put` stores the result (the
    store's `put_step` unless given: the executor's also reads the graph)."""
    # the results it reads come with its start (one round trip)
    existing, delivery, read = store.start_step(task.query_id, task.step.id,
                                                sorted(set(task.inputs.values())))
    if existing is not None:
        return existing
    if not delivery:
        return None
    if delivery > max_deliveries:
        result = error_result(step_base(task, attempt=delivery), "REDELIVERY_CAP",
                              f"delivered {delivery} times without finishing (cap "
                              f"{max_deliveries}); the worker running it keeps dying")
    else:
        result = execute(task, store, backend, attempt=delivery, read=read)
    return (put or store.put_step)(task.query_id, result)

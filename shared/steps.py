"""Run one plan step: StepTask in, StepResult out, stored under its action_id.

The executor tasks are thin wrappers around `run_step`. It never raises: a tool that
fails, an input that is missing and an unexpected crash all become a StepResult with
`status="error"` and an error code, so the chord always reaches the finalizer. A step
that already has a stored result (a redelivered task) returns that result unchanged,
which keeps the value returned into the chord deterministic.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from shared import queues
from shared.errors import ToolError, TransientToolError
from shared.models import StepResult, StepTask
from shared.search import SearchBackend
from shared.store import RunStore
from shared.tools.registry import TOLERATES_FAILED_INPUTS, run_tool

log = logging.getLogger(__name__)

TRANSIENT_RETRIES = 2
"""Extra attempts for a TransientToolError, with exponential backoff."""


def _inputs(store: RunStore, task: StepTask) -> dict[str, StepResult]:
    results = {}
    tolerant = task.step.operation in TOLERATES_FAILED_INPUTS
    for var, step_id in task.inputs.items():
        result = store.step(task.query_id, step_id)
        if result is None:
            raise ToolError("INPUT_MISSING", f"${var} (step {step_id}) has no result yet; "
                            "the step ran before its input, which is a dispatch bug")
        if result.status != "ok" and not tolerant:
            raise ToolError("INPUT_FAILED", f"${var} is unavailable because step {step_id} "
                            f"failed ({result.error_code}: {result.error_message})")
        results[var] = result
    return results


def execute(task: StepTask, store: RunStore, backend: SearchBackend,
            attempt: int = 1, sleep: Callable[[float], None] = time.sleep) -> StepResult:
    """Run the step's tool and turn whatever happens into a StepResult (not stored)."""
    step = task.step
    aid = queues.action_id(task.query_id, step.id)
    base = dict(action_id=aid, step_id=step.id, operation=step.operation, attempt=attempt,
                started_at=time.time())
    started = time.perf_counter()
    for retry in range(TRANSIENT_RETRIES + 1):
        try:
            out = run_tool(task.step, _inputs(store, task), backend)
            text = "" if out.value is None else str(out.value)
            return StepResult(**base, status="ok", value=out.value, confidence=out.confidence,
                              document=out.document, documents=out.documents, note=out.note,
                              inputs=out.inputs, candidates=out.candidates,
                              duration_ms=(time.perf_counter() - started) * 1000,
                              result_length=len(text), finished_at=time.time())
        except TransientToolError as exc:
            if retry == TRANSIENT_RETRIES:
                code, message = exc.code, f"{exc.message} (after {retry + 1} attempts)"
                candidates = exc.candidates
            else:
                sleep(0.2 * 2 ** retry)
                continue
        except ToolError as exc:
            code, message, candidates = exc.code, exc.message, exc.candidates
        except Exception as exc:  # a tool bug must not crash the chord
            log.exception("step %s crashed", aid)
            code, message, candidates = "TOOL_CRASHED", f"{type(exc).__name__}: {exc}", []
        return StepResult(**base, status="error", error_code=code, error_message=message,
                          candidates=candidates,
                          duration_ms=(time.perf_counter() - started) * 1000,
                          finished_at=time.time())
    raise AssertionError("unreachable")


def run_step(task: StepTask, store: RunStore, backend: SearchBackend,
             max_deliveries: int = 3) -> StepResult:
    """Execute a step once per action_id and store its result; return the stored result."""
    existing = store.step(task.query_id, task.step.id)
    if existing is not None:
        return existing
    aid = queues.action_id(task.query_id, task.step.id)
    delivery = store.count_delivery(aid)
    if delivery > max_deliveries:
        result = StepResult(action_id=aid, step_id=task.step.id, operation=task.step.operation,
                            status="error", error_code="REDELIVERY_CAP", attempt=delivery,
                            error_message=f"delivered {delivery} times without finishing "
                            f"(cap {max_deliveries}); the worker running it keeps dying",
                            finished_at=time.time())
    else:
        result = execute(task, store, backend, attempt=delivery)
    return store.put_step(task.query_id, result)

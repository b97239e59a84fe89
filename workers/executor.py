"""Executor tasks: one per operation (`chordal.get`, `chordal.extract`, `chordal.compute`).

Each takes a StepTask, runs it through `shared.steps.run_step` (which stores the full
StepResult under the action_id and never raises) and returns the small deterministic
reference `{"action_id", "status"}` into the chord.
"""

from __future__ import annotations

from celery.exceptions import SoftTimeLimitExceeded

from shared import queues
from shared.models import StepResult, StepTask
from shared.steps import run_step
from workers.app import app, log, run_store, search_backend, settings


def _run(task_payload: dict) -> dict:
    task = StepTask.model_validate(task_payload)
    store = run_store()
    try:
        result = run_step(task, store, search_backend(), settings.max_deliveries)
    except SoftTimeLimitExceeded:
        aid = queues.action_id(task.query_id, task.step.id)
        result = store.put_step(task.query_id, StepResult(
            action_id=aid, step_id=task.step.id, operation=task.step.operation,
            status="error", error_code="TIME_LIMIT",
            error_message=f"step exceeded the {settings.task_time_limit_s}s task time limit"))
    if result.status == "error":
        log.warning("step %s failed: %s %s", result.action_id, result.error_code,
                    result.error_message)
    return result.reference()


def _shadow(task, args, kwargs, options):
    """Flower lists tasks by this name: `chordal.get qid:E1`."""
    payload = args[0] if args else {}
    step = payload.get("step", {}) if isinstance(payload, dict) else {}
    return f"{task.name} {payload.get('query_id', '?')}:{step.get('id', '?')}"


@app.task(name=queues.TASK_GET, shadow_name=_shadow)
def get(task: dict) -> dict:
    return _run(task)


@app.task(name=queues.TASK_EXTRACT, shadow_name=_shadow)
def extract(task: dict) -> dict:
    return _run(task)


@app.task(name=queues.TASK_COMPUTE, shadow_name=_shadow)
def compute(task: dict) -> dict:
    return _run(task)

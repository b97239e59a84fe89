"""Executor tasks: one per operation (`chordal.get`, `chordal.extract`, …; see
shared/queues.py), all on the `execute` queue.

Each takes a StepTask, runs it through `shared.steps.run_step` (which stores the full
StepResult under the action_id and never raises), adds the dependents that are now
ready to the query's chord, and returns the small deterministic reference
`{"action_id", "status"}`.
"""

from __future__ import annotations

import functools

from celery.exceptions import SoftTimeLimitExceeded

from shared import queues
from shared.dispatch import next_steps
from shared.errors import StoreError
from shared.models import Plan, StepResult, StepTask
from shared.outage import rides_out
from shared.steps import run_step
from workers.app import app, log, run_store, search_backend, settings
from workers.canvas import step_signature


@functools.lru_cache(maxsize=1024)
def _plan(query_id: str) -> Plan:
    """Plans never change once dispatched, so each worker reads a query's plan once."""
    plan = run_store().plan(query_id)
    if plan is None:
        raise StoreError(f"query {query_id} has no stored plan")
    return plan


def _run(task, payload: dict) -> dict:
    step_task = StepTask.model_validate(payload)
    store = run_store()
    try:
        result = run_step(step_task, store, search_backend(), settings.max_deliveries)
    except SoftTimeLimitExceeded:
        aid = queues.action_id(step_task.query_id, step_task.step.id)
        result = store.put_step(step_task.query_id, StepResult(
            action_id=aid, step_id=step_task.step.id, operation=step_task.step.operation,
            status="error", error_code="TIME_LIMIT",
            error_message=f"step exceeded the {settings.task_time_limit_s}s task time limit"))
    if result.status == "error":
        log.warning("step %s failed: %s %s", result.action_id, result.error_code,
                    result.error_message)
    plan = _plan(step_task.query_id)
    for ready in next_steps(store, plan, step_task.query_id, step_task.step.id, task.request.id):
        task.add_to_chord(step_signature(ready))
    return result.reference()


def _register(name: str):
    # No shadow name: Flower labels its Prometheus series with the task name, so a name
    # per action_id would make one series per step. The action_id leads the StepTask
    # payload instead, which Flower shows and searches (README, "Monitoring").
    # Redis errors are waited out in the task (a Celery retry cannot be sent while Redis
    # is down); StoreError (no plan stored yet) is retried by Celery.
    @app.task(name=name, bind=True, autoretry_for=(StoreError,),
              retry_backoff=True, retry_backoff_max=30, max_retries=5)
    @rides_out(lambda: settings.redis_outage_s)
    def step(self, task: dict) -> dict:
        return _run(self, task)
    return step


TASKS = {operation: _register(name) for operation, name in queues.STEP_TASKS.items()}

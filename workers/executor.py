"""Executor tasks: one per operation (`chordal.get`, `chordal.extract`, …; see
shared/queues.py), all on the `execute` queue.

Each takes a StepTask, runs it through `shared.steps.run_step` (which stores the full
StepResult under the action_id and never raises), sends the dependents that are now
ready, sends the finalizer when it stored the plan's last result (the join,
shared/dispatch.py), and returns the small reference `{"action_id", "status"}` (shown
by Flower; not stored).
"""

from __future__ import annotations

import functools

from celery.exceptions import SoftTimeLimitExceeded

from shared import queues
from shared.dispatch import joined, next_steps
from shared.errors import StoreError
from shared.models import Plan, StepTask
from shared.steps import error_result, run_step, step_base
from workers.app import log, run_store, search_backend, settings
from workers.boundary import chordal_task
from workers.canvas import send_finalize, send_step


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
        result = run_step(step_task, store, search_backend(), settings().max_deliveries)
    except SoftTimeLimitExceeded:
        result = store.put_step(step_task.query_id, error_result(
            step_base(step_task), "TIME_LIMIT",
            f"step exceeded the {settings().task_time_limit_s}s task time limit"))
    if result.status == "error":
        log.warning("step %s failed: %s %s", result.action_id, result.error_code,
                    result.error_message)
    plan, owner = _plan(step_task.query_id), task.request.id or ""
    stored = store.stored_steps(step_task.query_id)  # once: what follows and the join
    for ready in next_steps(store, plan, step_task.query_id, step_task.step.id, owner, stored):
        send_step(ready)
    if joined(store, plan, step_task.query_id, owner, stored):
        send_finalize(step_task.query_id)
    return result.reference()


def _register(name: str):
    # No shadow name: Flower labels its Prometheus series with the task name, so a name
    # per action_id would make one series per step. The action_id leads the StepTask
    # payload instead, which Flower shows and searches (README, "Monitoring").
    # Redis errors are waited out in the task (a Celery retry cannot be sent while Redis
    # is down); StoreError (no plan stored yet) is retried by Celery.
    @chordal_task(name, retries=True, ignore_result=True)
    def step(self, task: dict) -> dict:
        return _run(self, task)
    return step


for _name in queues.STEP_TASKS.values():
    _register(_name)

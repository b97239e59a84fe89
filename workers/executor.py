"""Executor tasks: one per operation (`chordal.get`, `chordal.extract`, …; see
shared/naming.py), all on the `execute` queue.

Each takes a StepTask, runs it through `shared.journey.steps.run_step` (which stores the full
StepResult under the action_id and never raises), then reads the query's dispatch
graph and sends the steps that read it and are now ready, and the finalizer when the
graph is closed and every step the plan keeps has reported (the join,
shared/journey/dispatch.py); it returns the small reference `{"action_id", "status"}` (shown
by Flower; not stored), status `skipped` for a step nothing waits for any more.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from celery.exceptions import SoftTimeLimitExceeded

from shared import naming
from shared.journey.dispatch import joined, next_steps, send_steps
from shared.stores.graph import GraphView
from shared.models import GraphStep, StepResult, StepTask
from shared.stores.step_results import StoredStep
from shared.journey.steps import error_result, run_step, step_base
from workers.app import log, run_store, search_backend, settings
from workers.boundary import chordal_task
from workers.canvas import send_finalize, send_step

_CLOSED: OrderedDict[str, dict[str, GraphStep]] = OrderedDict()
_CLOSED_KEPT = 1024
_CLOSED_LOCK = threading.Lock()  # executors run in a thread pool


def _remember(query_id: str, view: GraphView) -> GraphView:
    """A closed graph never changes again, so each worker reads its steps once (the
    stored ids and the query's state are read every time)."""
    if view.closed:
        with _CLOSED_LOCK:
            _CLOSED[query_id] = view.steps
            while len(_CLOSED) > _CLOSED_KEPT:
                _CLOSED.popitem(last=False)
    return view


def _run(task, payload: dict) -> dict:
    step_task = StepTask.model_validate(payload)
    store = run_store()
    query_id = step_task.query_id
    owner = task.request.id or ""
    seen: list[StoredStep] = []

    def put(qid: str, result: StepResult) -> StepResult:
        """Store the result, read the graph right after and claim what follows and the
        join, in one script."""
        stored = store.put_step_and_dispatch(qid, result, owner, _CLOSED.get(qid))
        seen.append(stored)
        return stored.result
    try:
        result = run_step(step_task, store, search_backend(), settings().max_deliveries, put)
    except SoftTimeLimitExceeded:
        result = put(query_id, error_result(
            step_base(step_task), "TIME_LIMIT",
            f"step exceeded the {settings().task_time_limit_s}s task time limit"))
    if result is None:  # nothing waits for it: no result, nothing follows from it
        log.info("step %s skipped: its query is terminal or its plan left it out",
                 step_task.action_id)
        return {"action_id": step_task.action_id, "status": "skipped"}
    if result.status == "error":
        log.warning("step %s failed: %s %s", result.action_id, result.error_code,
                    result.error_message)
    # what follows and the join, from the graph as it stood after the result was stored
    # (claimed by the script that stored it; a redelivery that found it stored already
    # reads the graph and claims now)
    if seen:
        _remember(query_id, seen[-1].view)
        follow, join = seen[-1].send, seen[-1].joined
    else:
        view = _remember(query_id, store.graph(query_id, _CLOSED.get(query_id)))
        follow = next_steps(store, view, query_id, step_task.step.id, owner)
        join = joined(store, view, query_id, owner)
    send_steps(store, query_id, follow, send_step)
    if join:
        send_finalize(query_id)
    return result.reference()


def _register(name: str):
    # No shadow name: Flower labels its Prometheus series with the task name, so a name
    # per action_id would make one series per step. The action_id leads the StepTask
    # payload instead, which Flower shows and searches (docs/monitoring.md).
    # Redis errors are waited out in the task (a Celery retry cannot be sent while Redis
    # is down); StoreError is retried by Celery.
    @chordal_task(name, retries=True, ignore_result=True)
    def step(self, task: dict) -> dict:
        return _run(self, task)
    return step


for _name in naming.STEP_TASKS.values():
    _register(_name)

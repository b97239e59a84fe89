"""Send the tasks of one query: each step once it is ready, and the finalizer (see
shared/journey/dispatch.py for when, and the claims that make it once).

Every message carries everything its task needs: a step reads its inputs from the run
store by action_id, never from the return value of another task, and no task's result
is stored in Celery's result backend. Sent from a worker, its `task-sent` event goes out
with the worker's other task events (workers/events.py).
"""

from __future__ import annotations

from shared import naming
from shared.models import FinalizeTask, StepTask
from workers.app import app
from workers.events import sent_events


def send_step(task: StepTask) -> None:
    app.send_task(naming.STEP_TASKS[task.step.operation], args=(task.model_dump(mode="json"),),
                  **sent_events())


def send_finalize(query_id: str) -> None:
    """The query's one finalize task (its id is the query's, so a second send is the
    same task run again, never a second finalizer run)."""
    app.send_task(naming.TASK_FINALIZE, task_id=naming.finalize_task_id(query_id),
                  kwargs={"task": FinalizeTask(query_id=query_id).model_dump()},
                  **sent_events())

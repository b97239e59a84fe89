"""Send the tasks of one query: each step once it is ready, and the finalizer (see
shared/journey/dispatch.py for when, and the claims that make it once).

Every message carries everything its task needs: a step reads its inputs from the run
store by action_id, never from the return value of another task, and no task's result
is stored in Celery's result backend. Sent from a worker, its `task-sent` event goes out
with the worker's other task events (workers/events.py).

What Flower shows of a task's arguments (its `argsrepr` and `kwargsrepr`) is written
here with `repr`, cut at Celery's own bound: the arguments are plain JSON data, so the
line-sized copy that Celery's `saferepr` walks them in Python to make (about 50 µs a
step) says the same, the action_id first.
"""

from __future__ import annotations

from shared import naming
from shared.models import FinalizeTask, StepTask
from workers.app import app
from workers.events import sent_events

REPR_CHARS = 1024
"""The longest argument repr a message carries (Celery's `argsrepr_maxsize`)."""
SENT = {"declare": ()}
"""`send_task` options of a step's and a finalizer's message: no queue declared before
the publish, which kombu checks against its cache for every message (the message goes
to its queue by name, a Redis list the push creates; each worker declares the queues it
consumes as it starts)."""


def short_repr(value: object) -> str:
    """`repr(value)`, cut to REPR_CHARS with `...` as Celery cuts it."""
    text = repr(value)
    return text if len(text) <= REPR_CHARS else text[:REPR_CHARS - 3] + "..."


def send_step(task: StepTask) -> None:
    args = (task.model_dump(mode="json"),)
    app.send_task(naming.STEP_TASKS[task.step.operation], args=args,
                  argsrepr=short_repr(args), kwargsrepr="{}", **SENT, **sent_events())


def send_finalize(query_id: str) -> None:
    """The query's one finalize task (its id is the query's, so a second send is the
    same task run again, never a second finalizer run)."""
    kwargs = {"task": FinalizeTask(query_id=query_id).model_dump()}
    app.send_task(naming.TASK_FINALIZE, task_id=naming.finalize_task_id(query_id),
                  kwargs=kwargs, argsrepr="()", kwargsrepr=short_repr(kwargs), **SENT,
                  **sent_events())

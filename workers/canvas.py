"""Send the tasks of one query: its root steps, each step that gets ready, the finalizer
(see shared/plan/compile.py for the flow, shared/dispatch.py for the claims).

Every message carries everything its task needs: a step reads its inputs from the run
store by action_id, never from the return value of another task, and no task's result
is stored in Celery's result backend.
"""

from __future__ import annotations

from shared import queues
from shared.dispatch import root_tasks
from shared.models import FinalizeTask, Plan, StepTask
from workers.app import app


def send_step(task: StepTask) -> None:
    app.send_task(queues.STEP_TASKS[task.step.operation], args=(task.model_dump(mode="json"),))


def send_finalize(query_id: str) -> None:
    """The query's one finalize task (its id is the query's, so a second send is the
    same task run again, never a second finalizer run)."""
    app.send_task(queues.TASK_FINALIZE, task_id=queues.finalize_task_id(query_id),
                  kwargs={"task": FinalizeTask(query_id=query_id).model_dump()})


def send_plan(query_id: str, plan: Plan) -> None:
    """What the planner sends once the plan is recorded: the steps that read nothing (a
    plan has at least one step, so the join always has a step to report)."""
    for task in root_tasks(query_id, plan):
        send_step(task)

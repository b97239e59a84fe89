"""Signatures of Chordal's tasks and the canvas of one query (see shared/plan/compile.py).

All step signatures are immutable: a step reads its inputs from the run store by
action_id, never from the return value of another task.
"""

from __future__ import annotations

from celery import chord, group

from shared import queues
from shared.dispatch import step_tasks
from shared.models import FinalizeTask, Plan, StepTask
from shared.plan.compile import roots
from workers.app import app


def step_signature(task: StepTask):
    return app.signature(queues.STEP_TASKS[task.step.operation],
                         args=(task.model_dump(mode="json"),), immutable=True)


def build_canvas(query_id: str, plan: Plan):
    """chord(group(root steps), finalize): later steps join the chord as they get ready."""
    tasks = step_tasks(query_id, plan)
    header = group(*[step_signature(tasks[s]) for s in roots(plan)])
    finalize = app.signature(queues.TASK_FINALIZE, immutable=True,
                             kwargs={"task": FinalizeTask(query_id=query_id).model_dump()})
    return chord(header, finalize)

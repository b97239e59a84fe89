"""Build and claim the work an executor receives: a plan and a query id in, `StepTask`s out.

`step_tasks` builds one StepTask per step (the canvas compiles them into the chord);
`next_steps` is what a finished step hands on: its dependents that are now ready, each
claimed in the run store (`claimed_dispatch:<step>`) so only one task dispatches it,
however often the finishing task is redelivered.
"""

from __future__ import annotations

from shared import queues
from shared.models import Plan, StepTask
from shared.plan.compile import ready_after
from shared.store import RunStore


def step_task(query_id: str, plan: Plan, step_id: str) -> StepTask:
    """The StepTask an executor receives for one step of the plan."""
    producers = plan.producers()
    step = plan.step(step_id)
    return StepTask(query_id=query_id, step=step,
                    inputs={v: producers[v] for v in step.references() if v in producers})


def step_tasks(query_id: str, plan: Plan) -> dict[str, StepTask]:
    """step id -> the StepTask an executor receives for it."""
    return {s.id: step_task(query_id, plan, s.id) for s in plan.steps}


def next_steps(store: RunStore, plan: Plan, query_id: str, finished: str,
               owner: str) -> list[StepTask]:
    """The dependents of `finished` that are now ready and that `owner` may dispatch."""
    ready = ready_after(plan, finished, store.stored_steps(query_id))
    return [step_task(query_id, plan, d) for d in ready
            if store.claim(query_id, queues.dispatch_claim(d), owner)]

"""Build and claim the work of one query: a plan and a query id in, `StepTask`s out, and
the join that sends the finalizer (shared/plan/compile.py tells the whole flow).

`root_tasks` are the steps the planner sends; `next_steps` is what a finished step
hands on: its dependents that are now ready, each claimed in the run store
(`claimed_dispatch:<step>`) so only one task dispatches it, however often the finishing
task is redelivered; `joined` is true for the one task that stored the plan's last
result (`claimed_finalize`), which sends the finalizer.
"""

from __future__ import annotations

from shared import queues
from shared.models import Plan, StepTask
from shared.plan.compile import ready_after, roots
from shared.store import RunStore


def step_task(query_id: str, plan: Plan, step_id: str) -> StepTask:
    """The StepTask an executor receives for one step of the plan."""
    producers = plan.producers()
    step = plan.step(step_id)
    return StepTask(query_id=query_id, step=step,
                    inputs={v: producers[v] for v in step.references() if v in producers})


def root_tasks(query_id: str, plan: Plan) -> list[StepTask]:
    """The StepTasks of the steps that read nothing: what the planner sends."""
    return [step_task(query_id, plan, s) for s in roots(plan)]


def next_steps(store: RunStore, plan: Plan, query_id: str, finished: str, owner: str,
               stored: set[str]) -> list[StepTask]:
    """The dependents of `finished` that are now ready and that `owner` may dispatch;
    `stored`: the ids of the steps with a result, read after `finished` stored its own."""
    ready = ready_after(plan, finished, stored)
    return [step_task(query_id, plan, d) for d in ready
            if store.claim(query_id, queues.dispatch_claim(d), owner)]


def joined(store: RunStore, plan: Plan, query_id: str, owner: str, stored: set[str]) -> bool:
    """True when every step of `plan` is in `stored` (as `next_steps`) and `owner` holds the claim
    to send the finalizer (the first task to see it so, and that task again when it is
    redelivered). Counting stored results, which are written once per step, counts a
    step once however often it ran."""
    return ({s.id for s in plan.steps} <= stored
            and store.claim(query_id, queues.finalize_claim(), owner))

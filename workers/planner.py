"""Planner task `chordal.plan`: Query in; plan checked, recorded and dispatched as a canvas.

The schedule from `shared.plan.compile` becomes one canvas: the branches of a stage are
chains in a group; the group is the header of a chord whose body is the next stage, and
the last chord's body is the finalizer. Step signatures are immutable (`si`): steps read
their inputs from the run store by action_id, not from the previous task's return value.
"""

from __future__ import annotations

from celery import chain, chord, group

from shared import queues
from shared.errors import InputError, PlanError
from shared.models import FinalizeTask, Plan, Query
from shared.plan.compile import compile_plan
from shared.planning import make_plan, step_tasks
from workers.app import app, log, run_store, search_backend, settings


def build_canvas(query_id: str, plan: Plan):
    tasks = step_tasks(query_id, plan)

    def sig(step_id: str):
        t = tasks[step_id]
        return app.signature(queues.STEP_TASKS[t.step.operation],
                             args=(t.model_dump(mode="json"),), immutable=True)

    def branch(ids: list[str]):
        return sig(ids[0]) if len(ids) == 1 else chain(*[sig(i) for i in ids])

    body = app.signature(queues.TASK_FINALIZE, immutable=True,
                         kwargs={"task": FinalizeTask(query_id=query_id).model_dump()})
    for stage in reversed(compile_plan(plan)):
        body = chord(group(*[branch(b) for b in stage]), body)
    return body


@app.task(name=queues.TASK_PLAN, ignore_result=True)
def plan(query: dict) -> None:
    q = Query.model_validate(query)
    store = run_store()
    if store.count_delivery(f"{q.id}:plan") > settings.max_deliveries:
        store.fail(q.id, "planner delivered too often without finishing (redelivery cap)")
        return
    if store.status(q.id) in ("done", "failed"):
        return
    store.set_status(q.id, "planning")
    try:
        p = make_plan(q, search_backend())
    except PlanError as exc:
        store.fail(q.id, exc.message, problems=exc.problems)
        return
    except InputError as exc:
        store.fail(q.id, str(exc))
        return
    except Exception as exc:
        log.exception("planning %s failed", q.id)
        store.fail(q.id, f"planner failed: {type(exc).__name__}: {exc}")
        return
    store.save_plan(q.id, p)
    if not store.claim(q.id, "dispatch"):
        return  # a redelivered planner: the canvas is already out
    store.set_status(q.id, "executing")
    build_canvas(q.id, p).apply_async()

"""Planner task `chordal.plan`: Query in; plan checked, recorded and dispatched as one
chord (see shared/plan/compile.py for how the plan DAG maps onto it)."""

from __future__ import annotations

from shared import queues
from shared.errors import InputError, PlanError
from shared.models import Query
from shared.planning import make_plan
from workers.app import app, log, run_store, search_backend, settings
from workers.canvas import build_canvas


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
        p, repairs = make_plan(q, search_backend(), settings.max_steps)
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
    store.save_plan(q.id, p, repairs)
    if not store.claim(q.id, "dispatch"):
        return  # a redelivered planner: the canvas is already out
    store.set_status(q.id, "executing")
    build_canvas(q.id, p).apply_async()

"""Planner task `chordal.plan`: Query in; plan checked, recorded, and its root steps sent
(see shared/plan/compile.py for how the plan DAG runs and joins).

With an LLM configured the plan comes from the model (every call is recorded in the run
store); a model that fails after its retries fails the query with the reason. Without
one, the heuristic planner may abstain: the query is then `done` with an incomplete
answer that says what was not found and which documents came closest."""

from __future__ import annotations

from shared import queues
from shared.errors import InputError, LLMError, NoAnswer, PlanError
from shared.llm.heuristic import abstention
from shared.models import TERMINAL, Query
from shared.planning import make_plan
from workers.app import llm_client, log, run_store, search_backend, settings
from workers.boundary import chordal_task, ends_query, past_cap
from workers.canvas import send_plan
from workers.react import start_loop


@chordal_task(queues.TASK_PLAN, ignore_result=True)
def plan(self, query: dict) -> None:
    q = Query.model_validate(query)
    store = run_store()
    if past_cap(store, queues.plan_action_id(q.id), q.id, "the planner"):
        return
    if store.status(q.id) in TERMINAL:
        return
    if q.mode == "react":
        start_loop(q)  # no plan: the ReAct loop (workers/react.py) answers
        return
    with ends_query(self, q.id, "planner failed"):
        store.set_status(q.id, "planning")
        try:
            p, repairs = make_plan(q, search_backend(), settings().max_steps, llm=llm_client(),
                                   plan_attempts=settings().plan_attempts,
                                   max_plan_chars=settings().max_plan_chars,
                                   on_call=lambda call: store.add_llm_call(q.id, call))
        except NoAnswer as exc:  # the heuristic planner abstains: an honest "not found"
            store.finish(q.id, abstention(exc))
            return
        except PlanError as exc:
            store.fail(q.id, exc.message, problems=exc.problems)
            return
        except InputError as exc:
            store.fail(q.id, str(exc))
            return
        except LLMError as exc:
            log.warning("LLM planning of %s failed: %s", q.id, exc.message)
            store.fail(q.id, f"LLM planning failed: {exc.message}")
            return
        store.save_plan(q.id, p, repairs)
        # owned by this delivery: run again after a Redis outage, it may send what it claimed
        if not store.claim(q.id, queues.dispatch_claim(), self.request.id or ""):
            return  # another delivery of the query: its steps are already out
        store.set_status(q.id, "executing")
        send_plan(q.id, p)

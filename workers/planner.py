"""Planner task `chordal.plan`: Query in; plan checked, recorded, and its steps sent as
they become ready (shared/journey/dispatch.py: the dispatch graph and the join).

With an LLM that streams, steps go out while the model writes the plan (streamed
planning, CHORDAL_LLM_STREAM), at most CHORDAL_MAX_STEPS of them over all its replies;
the plan is closed, and the finalizer can be sent, only once the whole reply is
checked. A query that fails while planning says when its replies spent that budget. A
redelivered planner first sends what an earlier delivery added to the graph and did not
send; if that one had closed the plan, there is nothing left to plan. A first delivery
skips that: nothing can be in the graph before the delivery that adds to it was
counted.

With an LLM configured the plan comes from the model (every call is recorded in the run
store); a model that fails after its retries fails the query with the reason. Without
one, the heuristic planner may abstain: the query is then `done` with an incomplete
answer that says what was not found and which documents came closest."""

from __future__ import annotations

from shared.broker import lanes
from shared import naming
from shared.journey.dispatch import PlanDispatch
from shared.errors import InputError, LLMError, NoAnswer, PlanError
from shared.planners.heuristic import abstention
from shared.models import TERMINAL, Query
from shared.journey.planning import make_plan
from workers.app import llm_client, log, run_store, search_backend, settings
from workers.boundary import chordal_task, counted, ends_query, within_cap
from workers.canvas import send_finalize, send_step
from workers.react import start_loop


@chordal_task(naming.TASK_PLAN, ignore_result=True)
def plan(self, query: dict) -> None:
    q = Query.model_validate(query)
    store = run_store()
    if q.queue_wait_s is not None:  # a batch query: its place, to the next batch's
        lanes.feed(store.r, settings().plan_lane_depth)
    if q.mode == "react":  # no plan: the ReAct loop (workers/react.py) answers
        if counted(store, naming.plan_action_id(q.id), q.id, "the planner") \
                and store.status(q.id) not in TERMINAL:
            start_loop(q)
        return
    # a first delivery leaves the queue as it is counted (a batch query's run deadline
    # starts there); a later one sends what an earlier one left first
    delivery, left = store.count_and_leave_queue(q, "planning", naming.plan_action_id(q.id))
    if not within_cap(store, delivery, q.id, "the planner"):
        return
    if delivery > 1 and store.status(q.id) in TERMINAL:
        return
    with ends_query(self, q.id, "planner failed"):
        # owned by this delivery: run again after a crash, it may send what it claimed
        dispatch = PlanDispatch(store, q.id, self.request.id or "", send_step, send_finalize,
                                settings().max_steps, first=delivery == 1)
        if delivery > 1:
            if dispatch.resume():
                return  # an earlier delivery closed the plan; its steps are out
            left = store.leave_queue(q, "planning")
        if left is None:
            return  # it has ended, or waited in the queue past its budget: failed saying so
        q = left
        llm, calls = llm_client(), []

        def on_call(call) -> None:
            calls.append(call)
            store.add_llm_call(q.id, call)

        def ended() -> str | None:  # planning stops once the sweeper (or anyone) ends q
            status = store.status(q.id)
            return f"the query is already {status}" if status in TERMINAL else None
        try:
            p, repairs = make_plan(q, search_backend(), settings().max_steps, llm=llm,
                                   plan_attempts=settings().plan_attempts,
                                   max_plan_chars=settings().max_plan_chars,
                                   on_call=on_call, ended=ended,
                                   sink=dispatch if llm is not None else None)
            streamed = any(getattr(c, "streamed", False) for c in calls)
            dispatch.close(p, repairs, "streamed" if streamed else "whole", "executing")
        except NoAnswer as exc:  # the heuristic planner abstains: an honest "not found"
            store.finish(q.id, abstention(exc), planner="heuristic")
        except PlanError as exc:
            store.fail(q.id, exc.message + dispatch.spent_note(), problems=exc.problems)
        except InputError as exc:
            store.fail(q.id, str(exc))
        except LLMError as exc:
            log.warning("LLM planning of %s failed: %s", q.id, exc.message)
            store.fail(q.id, f"LLM planning failed: {exc.message}{dispatch.spent_note()}")

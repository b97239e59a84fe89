"""Choose and check the plan for a query: Query in, checked Plan out.

A plan given with the query is repaired and checked; without one the heuristic planner
builds one from the search store (no LLM is configured in this version) and the plan
records which planner ran. Raises PlanError (with per-step problems) or InputError.
"""

from __future__ import annotations

from shared.llm.heuristic import heuristic_plan
from shared.models import Plan, Query, StepTask
from shared.plan.compile import ready_after
from shared.plan.repair import prepare_plan
from shared.search import SearchBackend
from shared.store import RunStore


def make_plan(query: Query, backend: SearchBackend, max_steps: int = 20) -> tuple[Plan, list[str]]:
    """The plan to run and the repairs made to it; PlanError when it cannot run."""
    plan = query.plan if query.plan is not None else heuristic_plan(query.question, backend)
    plan, repairs = prepare_plan(plan, max_steps)
    return plan, query.repairs + repairs


def step_tasks(query_id: str, plan: Plan) -> dict[str, StepTask]:
    """step id -> the StepTask an executor receives for it."""
    producers = plan.producers()
    return {s.id: StepTask(query_id=query_id, step=s,
                           inputs={v: producers[v] for v in s.references() if v in producers})
            for s in plan.steps}


def next_steps(store: RunStore, plan: Plan, query_id: str, finished: str,
               owner: str) -> list[StepTask]:
    """The dependents of `finished` that are now ready and that `owner` may dispatch."""
    ready = ready_after(plan, finished, store.stored_steps(query_id))
    tasks = step_tasks(query_id, plan)
    return [tasks[d] for d in ready if store.claim(query_id, f"dispatch:{d}", owner)]

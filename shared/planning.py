"""Choose and check the plan for a query: Query in, checked Plan out.

A plan given with the query is checked as it is; without one the heuristic planner
builds one from the search store (no LLM is configured in this version) and the plan
records which planner ran. Raises PlanError (with per-step problems) or InputError.
"""

from __future__ import annotations

from shared.models import Query, StepTask, Plan
from shared.plan.validate import check_plan
from shared.search import SearchBackend
from shared.llm.heuristic import heuristic_plan


def make_plan(query: Query, backend: SearchBackend) -> Plan:
    if query.plan is not None:
        return check_plan(query.plan)
    return check_plan(heuristic_plan(query.question, backend))


def step_tasks(query_id: str, plan: Plan) -> dict[str, StepTask]:
    """step id -> the StepTask an executor receives for it."""
    producers = plan.producers()
    return {s.id: StepTask(query_id=query_id, step=s,
                           inputs={v: producers[v] for v in s.references() if v in producers})
            for s in plan.steps}

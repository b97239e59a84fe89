"""Choose and check the plan for a query: Query in, checked Plan out.

A plan given with the query is repaired and checked; without one, the LLM planner
writes it when an `LLMClient` is passed (shared/planners/llm.py: up to `plan_attempts`
plans, the problems of each failed one sent back), else the heuristic planner builds one
from the search store. The plan records which planner ran (`user`, `llm`, `heuristic`).
Raises PlanError (with per-step problems), InputError, or LLMError when the model
endpoint fails after its retries. Turning the plan into executor work is dispatch.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.config import MAX_PLAN_CHARS, MAX_STEPS
from shared.errors import StoreError
from shared.llm.client import LLMClient
from shared.planners.heuristic import heuristic_plan
from shared.planners.llm import QueryWatch, StepSink, llm_plan
from shared.models import LLMCall, Plan, Query
from shared.plan.repair import prepare_plan
from shared.search import Document, SearchBackend

PROMPT_DOCUMENTS = 8
"""Titles of the best-matching documents listed to the LLM planner."""
PAGES_PER_DOCUMENT = 4
"""Pages searched per title listed: a filing's pages may fill the first places."""


def make_plan(query: Query, backend: SearchBackend, max_steps: int = MAX_STEPS, *,
              llm: LLMClient | None = None, plan_attempts: int = 3,
              on_call: Callable[[LLMCall], None] | None = None,
              max_plan_chars: int = MAX_PLAN_CHARS, sink: StepSink | None = None,
              ended: Callable[[], str | None] | None = None) -> tuple[Plan, list[str]]:
    """The plan to run and the repairs made to it; PlanError when it cannot run.

    With `llm`, a query without a plan is planned by the model (`on_call` receives each
    LLMCall; a reply whose plan is longer than `max_plan_chars` fails its attempt;
    with `sink`, steps are offered to it while the reply streams, llm/planner.py),
    stopping at the query's deadline or once `ended` gives a reason (LLMReplyStopped);
    without it, by the heuristic planner. A given plan was checked against the size
    limit where it entered (the producer); here it is held to `max_steps` again.
    """
    if query.plan is None and llm is not None:
        plan, repairs = llm_plan(query.question, llm, attempts=plan_attempts, on_call=on_call,
                                 documents=candidate_documents(query.question, backend),
                                 max_steps=max_steps, max_chars=max_plan_chars, sink=sink,
                                 watch=QueryWatch(query.deadline_at, ended))
    else:
        plan = query.plan if query.plan is not None else heuristic_plan(query.question, backend)
        plan, repairs = prepare_plan(plan, max_steps)
        repairs = query.repairs + repairs
    if query.domain:  # the query's domain wins over the planner's choice
        plan = plan.model_copy(update={"domain": query.domain})
    return plan, repairs


def candidate_documents(question: str, backend: SearchBackend,
                        limit: int = PROMPT_DOCUMENTS) -> list[str]:
    """`Title (period …, published …)` of the documents that best match `question`, for
    the LLM's prompt; empty when the search store cannot answer (the model then plans
    without them)."""
    try:
        hits = backend.search(question, limit * PAGES_PER_DOCUMENT)
    except StoreError:
        return []
    docs: dict[str, Document] = {}
    for hit in hits:  # the store ranks pages: a document's best page places it
        docs.setdefault(hit.document.id, hit.document)
    return [f"{d.title} (period {d.period or 'none'}, published "
            f"{d.date or 'on an unknown date'})" for d in list(docs.values())[:limit]]


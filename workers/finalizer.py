"""Finalizer task `chordal.finalize`: renders the answer once every step of the plan has
stored its result (sent by the step that stored the last, shared/journey/dispatch.py)."""

from __future__ import annotations

from shared import naming
from shared.journey.finalize import finalize_query
from shared.models import FinalizeTask
from shared.render.isolated import renderer
from shared.stores.texts import TextReader
from workers.app import llm_client, log, run_store, search_backend, settings
from workers.boundary import chordal_task, ends_query
from workers.react import start_loop


@chordal_task(naming.TASK_FINALIZE, ignore_result=True)
def finalize(self, task: dict) -> None:
    """The answer is built from the run store."""
    t = FinalizeTask.model_validate(task)
    with ends_query(self, t.query_id, "finalizer failed"):
        # auto mode continues an incomplete answer with ReAct when an LLM is configured
        answer = finalize_query(run_store(), t.query_id,
                                continue_with=start_loop if llm_client() is not None else None,
                                render_budget_s=settings().render_budget_s,
                                renderer=renderer(settings().render_memory_mb),
                                task_id=self.request.id or "",
                                texts=TextReader(search_backend(), run_store().r,
                                                 run_store().text_cache_s))
        if answer is not None:
            log.info("query %s done (complete=%s)", t.query_id, answer.complete)

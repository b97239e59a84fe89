"""Finalizer task `chordal.finalize`: the chord callback that renders the answer."""

from __future__ import annotations

from shared import queues
from shared.finalize import finalize_query
from shared.models import FinalizeTask
from shared.outage import REDIS_DOWN, rides_out
from shared.render.isolated import renderer
from workers.app import app, llm_client, log, run_store, settings
from workers.react import start_loop


@app.task(name=queues.TASK_FINALIZE, bind=True, ignore_result=True)
@rides_out(lambda: settings.redis_outage_s)
def finalize(self, *chord_results, task: dict) -> None:
    """`chord_results` are the step references; the answer is built from the run store."""
    t = FinalizeTask.model_validate(task)
    try:
        # auto mode continues an incomplete answer with ReAct when an LLM is configured
        answer = finalize_query(run_store(), t.query_id,
                                continue_with=start_loop if llm_client() is not None else None,
                                render_budget_s=settings.render_budget_s,
                                renderer=renderer(settings.render_memory_mb),
                                task_id=self.request.id or "")
    except REDIS_DOWN:
        raise  # rides_out runs the task again once Redis answers
    except Exception as exc:  # the query must end, whatever broke
        log.exception("finalizing %s failed", t.query_id)
        run_store().fail(t.query_id, f"finalizer failed: {type(exc).__name__}: {exc}")
        return
    if answer is not None:
        log.info("query %s done (complete=%s)", t.query_id, answer.complete)

"""React task `chordal.react_step` on queue `react`: one task per ReAct iteration.

Takes a ReactTask (query, n), runs `shared.react.loop.react_step` while holding the
iteration's lease (shared/react/leases.py), and, when the loop goes on, sends iteration
n+1 itself with `apply_async` — the chain grows one step at a time, never prebuilt. A
claim per iteration (`react:{n+1}` in the run store) makes exactly one task send it, so
a redelivered or re-sent task never enqueues twice; the iteration's state is in the run
store, so such a task just moves on. `start_loop` hands a query to the loop (the
planner for mode=react, the finalizer for an incomplete answer in mode=auto).

The loops whose worker died mid-iteration are sent again by the ReAct resumer
(workers/services/resumer.py).
"""

from __future__ import annotations

import functools

from shared import naming
from shared.errors import ChordalError, StoreError
from shared.models import Query, ReactTask
from shared.react.leases import Leases
from shared.react.loop import react_step as run_iteration
from shared.react.tools import load_tool_modules
from workers.app import llm_client, run_store, search_backend, settings
from workers.boundary import chordal_task, ends_query, past_cap
from workers.events import sent_events

load_tool_modules(settings().tool_modules)
NO_LLM = ("a ReAct loop needs an LLM: set CHORDAL_LLM_BASE_URL (an OpenAI-compatible "
          "endpoint) and CHORDAL_LLM_MODEL for the workers")


@functools.cache
def leases() -> Leases:
    return Leases(run_store().r, settings().react_lease_s)


def send(query: Query, n: int) -> None:
    """Enqueue iteration `n` of the query's loop."""
    react_step.apply_async(args=(ReactTask(query=query, n=n).model_dump(mode="json"),),
                           queue=naming.QUEUE_REACT, ignore_result=True, **sent_events())


def start_loop(query: Query) -> bool:
    """Send iteration 1 unless it was sent before; the lease covers a crash meanwhile."""
    with leases().held(query.id, 0, "start"):
        if not run_store().claim(query.id, naming.react_claim(1)):
            return False
        started = run_store().leave_queue(query, "executing")
        if started is not None:  # else it has ended, or waited in the queue past its budget
            send(started, 1)
        return started is not None


# No shadow name (see workers/executor.py): the ReactTask payload leads with its
# action_id `QUERY_ID:R3`, which Flower shows and searches.
@chordal_task(naming.TASK_REACT, retries=True, ignore_result=True)
def react_step(self, task: dict) -> None:
    t = ReactTask.model_validate(task)
    q, n, store = t.query, t.n, run_store()
    with leases().held(q.id, n, self.request.id or "local"):
        if past_cap(store, naming.react_action_id(q.id, n), q.id, f"ReAct iteration {n}"):
            return
        client = llm_client()
        if client is None:
            store.fail(q.id, NO_LLM)
            return
        # the iteration's state is in the run store: a retried or re-run task moves on
        with ends_query(self, q.id, f"ReAct iteration {n} crashed"):
            try:
                outcome = run_iteration(q, n, store, client, search_backend(), settings())
            except StoreError:
                raise  # retried by Celery
            except ChordalError as exc:
                store.fail(q.id, f"ReAct iteration {n}: {exc}")
                return
            if outcome == "continue" and store.claim(q.id, naming.react_claim(n + 1)):
                send(q, n + 1)

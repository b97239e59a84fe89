"""Submit queries: record each in the run store as `queued`, then send `chordal.plan`.

Consumes Query models; produces nothing but messages. Sends with `ignore_result=True`
so the producer never subscribes to a result channel, and skips ids already submitted,
so re-running a producer after a crash does not duplicate work. A message that cannot
be published withdraws its record, so the same query can be submitted again.
"""

from __future__ import annotations

import time

import redis
from celery import Celery

from shared import naming
from shared.errors import StoreError
from shared.models import Query
from shared.stores.runs import RunStore


def submit(query: Query, store: RunStore, app: Celery) -> bool:
    """Enqueue one query; False when its id was already submitted."""
    if not query.created_at:
        query = query.model_copy(update={"created_at": time.time()})
    if not store.create(query):
        return False
    try:
        app.send_task(naming.TASK_PLAN, args=(query.model_dump(mode="json"),),
                      queue=naming.QUEUE_PLAN, ignore_result=True)
    except Exception as exc:  # kombu's OperationalError and friends, after its retries
        try:
            withdrawn = store.withdraw(query.id)
        except redis.RedisError:
            withdrawn = False
        after = ("it was withdrawn, so submitting it again sends it" if withdrawn else
                 "it stays recorded as queued, and the deadline sweeper fails it")
        raise StoreError(f"could not send query {query.id} to the broker "
                         f"({type(exc).__name__}: {exc}); {after}") from exc
    return True

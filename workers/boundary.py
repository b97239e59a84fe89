"""The task boundary every Chordal task shares: registration with its retry options,
riding out Redis outages, the redelivery cap, and the query an unexpected error ends.

- `chordal_task(name, retries=...)` registers a bound task on the app: a Redis connection error
  inside it is waited out and the task runs again (shared/broker/outage.py); with `retries`,
  a StoreError is retried by Celery with backoff.
- `counted(store, key, query_id, what)` counts one more delivery of the task's work
  and, past `CHORDAL_MAX_DELIVERIES`, fails the query (a worker that keeps dying on it);
  `past_cap` says only whether it did; `within_cap` does the same for a delivery
  counted elsewhere.
- `with ends_query(task, query_id, what):` as the last statement of a task: whatever
  unexpected error it raises fails the query `{what}: {type}: {message}`, logged once,
  here. A Redis outage, and the errors the task retries, pass through.
"""

from __future__ import annotations

import contextlib

from shared.errors import StoreError
from shared.broker.outage import REDIS_DOWN, rides_out
from shared.stores.runs import RunStore
from workers.app import app, log, run_store, settings

RETRIES = dict(autoretry_for=(StoreError,), retry_backoff=True, retry_backoff_max=30,
               max_retries=5)
"""What a task with `retries` retries (a StoreError: e.g. no plan stored yet), and how."""


def chordal_task(name: str, *, retries: bool = False, **options):
    """Register the decorated `fn(self, …)` as task `name` (see the module docstring)."""
    def register(fn):
        body = rides_out(lambda: settings().redis_outage_s)(fn)
        return app.task(name=name, bind=True, **(RETRIES if retries else {}), **options)(body)
    return register


def counted(store: RunStore, key: str, query_id: str, what: str) -> int:
    """Count one more delivery of `key` and return its number; past the cap, fail the
    query, say so, and return 0."""
    return within_cap(store, store.count_delivery(key), query_id, what)


def within_cap(store: RunStore, delivery: int, query_id: str, what: str) -> int:
    """`delivery`, the number of a delivery counted; past the cap, fail the query, say
    so, and return 0."""
    if delivery <= settings().max_deliveries:
        return delivery
    store.fail(query_id, f"{what} was delivered more than {settings().max_deliveries} times "
                         "without finishing (redelivery cap); the worker running it keeps dying")
    return 0


def past_cap(store: RunStore, key: str, query_id: str, what: str) -> bool:
    """`counted`, as True when it was past the cap."""
    return not counted(store, key, query_id, what)


@contextlib.contextmanager
def ends_query(running, query_id: str, what: str):
    """Fail the query when the block raises an unexpected error (the module docstring);
    `running` is the bound task, whose retried errors pass through."""
    try:
        yield
    except (*REDIS_DOWN, *getattr(running, "autoretry_for", ())):
        raise  # rides_out runs the task again once Redis answers; Celery retries the rest
    except Exception as exc:  # the query must end, whatever broke
        log.exception("%s (query %s)", what, query_id)
        run_store().fail(query_id, f"{what}: {type(exc).__name__}: {exc}")

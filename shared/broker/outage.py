"""Riding out a Redis outage inside a task: consumes a callable that talks to Redis,
produces its result once Redis answers again.

A task that meets a Redis connection error (a restart, a network blip, the embedded
Redis killed and started again on its AOF) must not fail, and must not rely on Celery's
retry either: a retry is a new message, which cannot be sent while Redis is down (Celery
then rejects the original, and the work is lost). So the call waits, with backoff from
`FIRST_WAIT_S` doubling to `MAX_WAIT_S`, and runs again, for up to `outage_s` seconds
(`CHORDAL_REDIS_OUTAGE_S`); past that the error propagates. Running again is safe:
every task is idempotent (the run store's claims and guards), as redelivery requires.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Callable, TypeVar

import redis
from kombu.exceptions import OperationalError

from shared.access.urls import mask_url

REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, OperationalError)
"""Errors that mean Redis did not answer (kombu wraps redis-py's as OperationalError)."""
FIRST_WAIT_S = 0.5
MAX_WAIT_S = 5.0
T = TypeVar("T")
log = logging.getLogger("chordal.outage")


def riding_out(call: Callable[[], T], outage_s: float, what: str) -> T:
    """`call()`, run again after each Redis connection error until `outage_s` seconds of
    waiting have passed; `what` names it in the log."""
    waited, wait = 0.0, FIRST_WAIT_S
    while True:
        try:
            return call()
        except REDIS_DOWN as exc:
            if waited >= outage_s:
                raise
            log.warning("Redis does not answer (%s: %s); %s runs again in %.1f s",
                        type(exc).__name__, mask_url(str(exc)), what, wait)
            time.sleep(wait)
            waited += wait
            wait = min(wait * 2, MAX_WAIT_S)


def rides_out(outage_s: Callable[[], float]):
    """Decorator form of `riding_out` for a task body; `outage_s()` reads the setting."""
    def wrap(fn):
        @functools.wraps(fn)
        def body(*args, **kwargs):
            return riding_out(lambda: fn(*args, **kwargs), outage_s(), fn.__name__)
        return body
    return wrap

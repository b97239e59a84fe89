"""No-op round trips, timed the same way for every worker: each no-op task pushes its
argument to a reply list the bench names (`RPUSH`), and the bench waits for the list
(`BLPOP`, or its length for many), so Chordal's workers, which store no Celery result
and refuse messages that ask for one (shared/broker/admission.py), and the bare Celery worker
(bench/bare_celery.py) are timed alike.

Consumes a `send(reply_key, i)` that sends one no-op task, and a redis-py client on the
same Redis; produces seconds and tasks per second.
"""

from __future__ import annotations

import time
import uuid
from typing import Callable

import redis

Send = Callable[[str, int], object]


def reply_key() -> str:
    return f"bench:noop-reply:{uuid.uuid4().hex[:12]}"


def round_trip(send: Send, r: redis.Redis, timeout: float = 30) -> float:
    """Seconds from sending one no-op to its reply."""
    key = reply_key()
    t0 = time.perf_counter()
    send(key, 1)
    if not r.blpop([key], timeout=timeout):
        raise RuntimeError(f"no reply from the no-op task in {timeout:.0f} s (is its worker "
                           "running, and does it admit the task?)")
    return time.perf_counter() - t0


def rate(send: Send, r: redis.Redis, n: int, timeout: float = 300) -> float:
    """No-op tasks per second, `n` sent at once, until the last replied."""
    key = reply_key()
    t0 = time.perf_counter()
    for i in range(n):
        send(key, i)
    deadline = time.monotonic() + timeout
    while r.llen(key) < n:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {r.llen(key)} of {n} no-op tasks replied in "
                               f"{timeout:.0f} s")
        time.sleep(0.002)
    elapsed = time.perf_counter() - t0
    r.delete(key)
    return n / elapsed

"""The cap on LLM calls in flight across all workers: a Redis semaphore with leases.

Consumes a Redis client, the cap (`Settings.llm_max_concurrency`) and a lease length;
produces slots, held with `with limit.slot(timeout_s): ...`. Celery rate limits are per
worker, so the one shared cap lives in Redis, in the sorted set `naming.llm_slots_key()`:

    member  a random token per held slot
    score   when the slot's lease runs out (Redis server time, seconds)

Taking a slot is one Lua script: drop the expired leases, then add a lease if fewer than
`limit` remain. While a slot is held a daemon thread renews its lease every third of
`lease_s`; a worker that crashes stops renewing, so its slot frees itself at most
`lease_s` later. Blocking acquire polls with jittered backoff until `timeout_s`, then
raises `LLMError` naming the setting to raise. All clocks are Redis's (`TIME`), so
workers on machines whose clocks disagree share one notion of "expired".
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid
from collections.abc import Iterator

import redis

from shared import naming
from shared.errors import LLMError

_NOW = "local t = redis.call('TIME') local now = tonumber(t[1]) + tonumber(t[2]) / 1000000 "
ACQUIRE_LUA = _NOW + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
return 1
"""
RENEW_LUA = _NOW + """
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
return 1
"""


class ConcurrencyLimit:
    """At most `limit` slots held at once by everyone sharing `key` in one Redis."""

    def __init__(self, client: redis.Redis, limit: int, *, lease_s: float = 30.0,
                 key: str | None = None):
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.client = client
        self.limit = limit
        self.lease_s = lease_s
        self.key = key or naming.llm_slots_key()
        self._acquire = client.register_script(ACQUIRE_LUA)
        self._renew = client.register_script(RENEW_LUA)

    def try_acquire(self) -> str | None:
        """A slot's token if one is free now, else None. Nobody renews it: use `slot()`."""
        token = uuid.uuid4().hex
        taken = self._acquire(keys=[self.key], args=[self.limit, self.lease_s, token])
        return token if taken else None

    def acquire(self, timeout_s: float) -> str:
        """A slot's token, waiting up to `timeout_s`; LLMError when none frees up."""
        deadline = time.monotonic() + timeout_s
        pause = 0.02
        while True:
            token = self.try_acquire()
            if token is not None:
                return token
            left = deadline - time.monotonic()
            if left <= 0:
                raise LLMError(
                    f"no LLM slot came free within {timeout_s:g}s: {self.limit} calls are in "
                    f"flight across all workers (CHORDAL_LLM_MAX_CONCURRENCY={self.limit}); "
                    "raise it if the endpoint can take more, or add endpoint capacity")
            time.sleep(min(left, pause * (0.5 + random.random())))  # jitter: no lockstep
            pause = min(pause * 2, 0.5)

    def renew(self, token: str) -> bool:
        """Extend the lease of `token` by `lease_s`; False when it has already expired."""
        return bool(self._renew(keys=[self.key], args=[self.lease_s, token]))

    def release(self, token: str) -> None:
        self.client.zrem(self.key, token)

    @contextlib.contextmanager
    def slot(self, timeout_s: float) -> Iterator[str]:
        """Hold one slot for the `with` block, renewing its lease until the block ends."""
        token = self.acquire(timeout_s)
        stop = threading.Event()
        renewer = threading.Thread(target=self._keep, args=(token, stop), daemon=True,
                                   name="llm-slot-lease")
        renewer.start()
        try:
            yield token
        finally:
            stop.set()
            renewer.join()
            self.release(token)

    def _keep(self, token: str, stop: threading.Event) -> None:
        while not stop.wait(self.lease_s / 3):
            try:
                self.renew(token)
            except redis.RedisError:
                pass  # a blip; the next renewal or the lease's expiry sorts it out

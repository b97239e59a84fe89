"""Leases of running ReAct iterations, and resuming the loops whose worker died.

Consumes the run store's Redis; produces, for every iteration being run, a member
`query_id|n|token` of the sorted set `naming.react_leases_key()` scored by the time
its lease expires. The worker running the iteration renews the lease every third of
`lease_s` from a heartbeat thread and removes it once the next iteration is sent (or
the loop ended). A worker that is SIGKILLed stops renewing, so its lease expires
`lease_s` later; any react worker's resumer then re-sends the loop from the run store
(`resume_stalled`). Messages waiting in the queue hold no lease, so a deep queue is
never mistaken for a dead worker.

Why not wait for Redis to redeliver: with late acks the killed task's message comes
back only after the broker's visibility timeout (an hour by default, at least 60 s),
and every task that worker had reserved waits as long.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable, Iterator

import redis

from shared import naming
from shared.models import TERMINAL, Query
from shared.stores.runs import RunStore

from .loop import next_iteration

CLAIM_LUA = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


def member(query_id: str, n: int, token: str) -> str:
    return f"{query_id}|{n}|{token}"


def parse_member(m: str) -> tuple[str, int, str]:
    query_id, n, token = m.split("|", 2)
    return query_id, int(n), token


class Leases:
    def __init__(self, client: redis.Redis, lease_s: float):
        self.r = client
        self.lease_s = lease_s
        self.key = naming.react_leases_key()
        self._claim = client.register_script(CLAIM_LUA)

    def renew(self, m: str) -> None:
        self.r.zadd(self.key, {m: time.time() + self.lease_s})

    def release(self, m: str) -> None:
        self.r.zrem(self.key, m)

    def expired(self, now: float | None = None) -> list[str]:
        return self.r.zrangebyscore(self.key, "-inf", time.time() if now is None else now)

    def claim(self, m: str, now: float | None = None) -> bool:
        """True for the one resumer that extends the expired lease `m` (others see it live)."""
        now = time.time() if now is None else now
        return bool(self._claim(keys=[self.key], args=[m, now, now + self.lease_s]))

    @contextlib.contextmanager
    def held(self, query_id: str, n: int, token: str) -> Iterator[str]:
        """Hold the lease of iteration `n` while the block runs, renewing it meanwhile."""
        m = member(query_id, n, token)
        self.renew(m)
        stop = threading.Event()

        def heartbeat() -> None:
            while not stop.wait(self.lease_s / 3):
                with contextlib.suppress(redis.RedisError):
                    self.renew(m)

        beat = threading.Thread(target=heartbeat, name=f"react-lease-{query_id}", daemon=True)
        beat.start()
        try:
            yield m
        finally:
            stop.set()
            beat.join()
            with contextlib.suppress(redis.RedisError):
                self.release(m)


def resume_stalled(store: RunStore, leases: Leases, send: Callable[[Query, int], None],
                   max_iterations: int, now: float | None = None) -> list[tuple[str, int]]:
    """Re-send every loop whose lease expired, from its last stored iteration; return the
    (query_id, iteration) pairs sent. A duplicate send is harmless: the iteration's task
    finds it stored and moves on, and only one task ever sends the next one."""
    sent = []
    for m in leases.expired(now):
        if not leases.claim(m, now):
            continue
        query_id = parse_member(m)[0]
        query = store.query(query_id)
        if query is not None and store.status(query_id) not in TERMINAL:
            n = next_iteration(store.iterations(query_id), max_iterations)
            send(query, n)
            sent.append((query_id, n))
        leases.release(m)
    return sent

"""`GET /health`: is Redis reachable, and which workers consume each queue.

Consumes the Redis URL; produces a `Health`. Redis gets a PING with a short timeout on
every call. Workers are counted with one Celery `inspect().active_queues()` broadcast,
which waits its whole timeout for replies, so the count is cached for `ttl_s` and shared
by concurrent callers: a load balancer polling /health costs one broadcast per `ttl_s`.
"""

from __future__ import annotations

import threading
import time

from producers.api_models import Health
from shared.queues import ROLE_QUEUES
from shared.stack.embedded import redis_answers
from shared.stack.workers import control_app

QUEUES: tuple[str, ...] = ROLE_QUEUES["all"]


class WorkerCensus:
    """Workers per queue, from a control broadcast at most once every `ttl_s`."""

    def __init__(self, redis_url: str, ttl_s: float = 5.0, reply_timeout_s: float = 0.5):
        self.redis_url = redis_url
        self.ttl_s = ttl_s
        self.reply_timeout_s = reply_timeout_s
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._taken = float("-inf")
        self._app = None

    def counts(self) -> dict[str, int]:
        with self._lock:  # one broadcast at a time; the others take its answer
            if time.monotonic() - self._taken >= self.ttl_s:
                self._counts = self._broadcast()
                self._taken = time.monotonic()
            return dict(self._counts)

    def _broadcast(self) -> dict[str, int]:
        if self._app is None:
            self._app = control_app(self.redis_url)
        try:
            replies = self._app.control.inspect(timeout=self.reply_timeout_s).active_queues()
        except Exception:  # noqa: BLE001 - broker trouble means "no worker seen"
            replies = None
        counts = dict.fromkeys(QUEUES, 0)
        for queues in (replies or {}).values():
            for name in {q["name"] for q in queues or []}:
                counts[name] = counts.get(name, 0) + 1
        return counts

    def close(self) -> None:
        if self._app is not None:
            self._app.close()


def check_health(redis_url: str, census: WorkerCensus) -> Health:
    """Redis first (without it nothing works and a broadcast would hang), then workers."""
    if not redis_answers(redis_url, timeout=0.5):
        return Health(status="down", redis=False,
                      problems=["Redis does not answer: check CHORDAL_REDIS_URL and that "
                                "Redis is running"])
    workers = census.counts()
    idle = [q for q in QUEUES if not workers.get(q)]
    problems = [f"no worker consumes queue {q!r}: its queries wait until one starts "
                f"(chordal worker --role {_role(q)})" for q in idle]
    return Health(status="degraded" if idle else "ok", redis=True, workers=workers,
                  problems=problems)


def _role(queue: str) -> str:
    return next(role for role, qs in ROLE_QUEUES.items() if qs == (queue,))

"""`GET /health`: is Redis reachable, and which workers consume each queue.

Consumes the Redis URL and `worker_dead_after_s`; produces a `Health`. Redis gets a PING
with a short timeout, then workers are counted by their heartbeats (shared/broker/recovery.py,
`census`: one round trip, no control broadcast, which the `producers` ACL user may not
send), as `chordal status` and the workers page count them.
"""

from __future__ import annotations

import redis

from producers.api.models import Health
from shared.broker.census import QUEUES, census
from shared.naming import ROLE_QUEUES
from shared.stack.embedded import redis_answers


def check_health(redis_url: str, client: redis.Redis, dead_after_s: float) -> Health:
    """Redis first (without it nothing works), then live workers per queue."""
    if not redis_answers(redis_url, timeout=0.5):
        return Health(status="down", redis=False,
                      problems=["Redis does not answer: check CHORDAL_REDIS_URL and that "
                                "Redis is running"])
    workers = dict.fromkeys(QUEUES, 0) | census(client, dead_after_s).live
    idle = [q for q in QUEUES if not workers.get(q)]
    problems = [f"no worker consumes queue {q!r}: its queries wait until one starts "
                f"(chordal worker --role {_role(q)})" for q in idle]
    return Health(status="degraded" if idle else "ok", redis=True, workers=workers,
                  problems=problems)


def _role(queue: str) -> str:
    return next(role for role, qs in ROLE_QUEUES.items() if qs == (queue,))

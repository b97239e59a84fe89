"""The census of the workers: consumes the broker's Redis (the workers set with each
instance's last heartbeat, the messages held, the messages refused, the queues' lengths);
produces who is alive per queue, who went silent, what is held and refused
(`chordal status`, `GET /health`, the workers page), and how many messages wait in each
queue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import redis
from kombu.utils.encoding import bytes_to_str

from shared import naming
from shared.broker.admission import Refused, refused_counts
from shared.broker.recovery import HELD, WORKERS, consumed_queues

QUEUES = naming.ROLE_QUEUES["all"]


@dataclass(frozen=True)
class Census:
    live: dict[str, int]
    """Queue -> worker instances consuming it that beat within dead_after_s."""
    silent: int
    """Instances whose heartbeat is older; a live worker gives their tasks back soon."""
    held: int
    """Tasks received and not finished, over all workers."""
    refused: tuple[Refused, ...] = ()
    """Messages workers took and refused to run, counted by queue, task and reason
    (shared/broker/admission.py)."""


def census(client: redis.Redis, dead_after_s: float, now: float | None = None) -> Census:
    """Who is alive, and what workers refused, for `chordal status` (one round trip)."""
    with client.pipeline(transaction=False) as pipe:
        pipe.zrange(WORKERS, 0, -1, withscores=True)
        pipe.hlen(HELD)
        pipe.hgetall(naming.refused_key())
        members, held, refused = pipe.execute()
    return count_live(members, held, dead_after_s, now, refused)


def count_live(members: list[tuple], held: int, dead_after_s: float,
               now: float | None = None, refused: dict | None = None) -> Census:
    """The census of `members` (the workers set read with its scores), `held` tasks and
    the `refused` counts (the refused hash as read)."""
    now = time.time() if now is None else now
    live: dict[str, int] = {}
    silent = 0
    for member, beat in members:
        if beat < now - dead_after_s:
            silent += 1
        else:
            for queue in consumed_queues(bytes_to_str(member)):
                live[queue] = live.get(queue, 0) + 1
    return Census(dict(sorted(live.items())), silent, held,
                  tuple(refused_counts(refused or {})))


def queue_depths(client: redis.Redis) -> dict[str, int]:
    """Messages waiting in each queue (the length of its Redis list), in one round trip."""
    with client.pipeline(transaction=False) as p:
        for q in QUEUES:
            p.llen(q)
        return dict(zip(QUEUES, p.execute()))

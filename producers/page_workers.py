"""The Workers page's data: consumes the broker's Redis; produces what `chordal status`
prints about workers, from the same functions (`census`: live workers per queue, tasks
held, silent workers; `queue_depths`), and one line per worker instance: its node name,
queues, pid, last heartbeat and the tasks it holds (shared/recovery.py records them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import redis
from kombu.utils.encoding import bytes_to_str

from producers.batch_follow import queue_depths
from shared.recovery import WORKERS, Census, census, consumed_queues, held_messages
from shared.store import RunStore


@dataclass
class Instance:
    node: str
    queues: list[str]
    pid: str
    beat_age_s: float
    silent: bool
    held: list[str] = field(default_factory=list)
    """`task name task id` of each message it holds."""


@dataclass
class WorkersView:
    census: Census
    depths: dict[str, int]
    instances: list[Instance]
    dead_after_s: float


def instances(client: redis.Redis, dead_after_s: float, now: float) -> list[Instance]:
    """Every worker instance, silent ones last, with the messages it holds."""
    held: dict[str, list[str]] = {}
    for h in held_messages(client):
        held.setdefault(h.instance, []).append(f"{h.task} {h.task_id}")
    out = []
    for member, beat in client.zrange(WORKERS, 0, -1, withscores=True):
        name = bytes_to_str(member)
        node, _, pid, _ = (name.split("|") + ["", "", "", ""])[:4]
        out.append(Instance(node, consumed_queues(name), pid, max(now - beat, 0.0),
                            beat < now - dead_after_s, sorted(held.get(name, []))))
    return sorted(out, key=lambda i: (i.silent, i.node, i.pid))


def workers_view(runs: RunStore, dead_after_s: float) -> WorkersView:
    now = time.time()
    return WorkersView(census(runs.r, dead_after_s, now), queue_depths(runs),
                       instances(runs.r, dead_after_s, now), dead_after_s)

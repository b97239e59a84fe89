"""The Workers page's data: consumes the broker's Redis; produces what `chordal status`
prints about workers, from the same functions (`count_live`, the heart of `census`: live
workers per queue, tasks held, silent workers, messages refused; `queue_depths`), and
one line per worker instance: its node name, queues, pid, last heartbeat and the tasks
it holds (shared/broker/recovery.py records them), all from one read of the workers set, held
tasks and refused counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kombu.utils.encoding import bytes_to_str

from shared import naming
from shared.broker.census import Census, count_live, queue_depths
from shared.broker.recovery import HELD, WORKERS, Held, consumed_queues
from shared.stores.runs import RunStore


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


def workers_view(runs: RunStore, dead_after_s: float) -> WorkersView:
    """One read of the workers set and the held tasks, so the census and the instance
    lines below it tell the same moment."""
    now = time.time()
    with runs.r.pipeline(transaction=False) as pipe:
        pipe.zrange(WORKERS, 0, -1, withscores=True)
        pipe.hgetall(HELD)
        pipe.hgetall(naming.refused_key())
        members, raw_held, refused = pipe.execute()
    held = [Held.parse(bytes_to_str(tag), bytes_to_str(value)) for tag, value in raw_held.items()]
    return WorkersView(count_live(members, len(held), dead_after_s, now, refused),
                       queue_depths(runs.r),
                       instances(members, held, dead_after_s, now), dead_after_s)


def instances(members: list[tuple], held: list[Held], dead_after_s: float,
              now: float) -> list[Instance]:
    """Every worker instance, silent ones last, with the messages it holds."""
    by_instance: dict[str, list[str]] = {}
    for h in held:
        by_instance.setdefault(h.instance, []).append(f"{h.task} {h.task_id}")
    out = []
    for member, beat in members:
        name = bytes_to_str(member)
        node, _, pid, _ = (name.split("|") + ["", "", "", ""])[:4]
        out.append(Instance(node, consumed_queues(name), pid, max(now - beat, 0.0),
                            beat < now - dead_after_s, sorted(by_instance.get(name, []))))
    return sorted(out, key=lambda i: (i.silent, i.node, i.pid))

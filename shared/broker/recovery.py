"""Give a dead worker's messages back to their queues within seconds.

With late acks on the Redis transport, a message a worker took sits in kombu's
`unacked` hash until the worker acknowledges it. A worker that is SIGKILLed (or whose
machine dies) never does, and kombu puts the message back only once it is
`CHORDAL_VISIBILITY_TIMEOUT_S` old: an hour by default, far past any query's deadline.
Kombu cannot do better alone, because `unacked` does not say which worker holds what.

This module records it. Consumes the broker's Redis; produces, in the same Redis:
- `naming.workers_key()`: every worker instance (`node|queues|pid|token`) scored by its last
  heartbeat (`Presence.beat`, every `dead_after_s / 5` seconds);
- `naming.held_messages_key()`: delivery tag -> `instance|queue|task name|task id` for
  every message a worker received and has not finished (`Presence.hold` when the
  message arrives; forgotten when it is acknowledged, shared/broker/transport.py `ACK_LUA`).

`recover_dead_workers`, which every worker runs (workers/services/recovery.py), takes each
instance whose heartbeat is `dead_after_s` old and, for each message it held, moves the
message from `unacked` back to the head of its queue: kombu's own restore, done early.
One Redis transaction watches both hashes, so a message is restored only while the dead
instance still holds it, once, however many workers recover at the same time, and never
after a live worker took it. Re-running a restored task is safe (steps store
first-write-wins, the finalizer's terminal guard, the join counts stored steps).

A message is recorded as held in the same transaction that records it unacknowledged
(shared/broker/transport.py), and before that it sits in its worker's in-flight list, which a
dead worker's recovery pushes back too: so a worker killed at any moment, or cut off
the network with a message on its way, leaves nothing to the visibility timeout. (A
worker consuming several queues, `--role all`, takes messages with BRPOP and records
them held at `task_received`: a kill in between leaves that message to the visibility
timeout.) ReAct iterations have their own leases (shared/react/leases.py) and are not
recorded here.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass

import redis
from kombu.utils.encoding import bytes_to_str

from shared import naming
from shared.broker.transport import restore_inflight

HELD = naming.held_messages_key()
WORKERS = naming.workers_key()


def instance_name(node: str, consumes: list[str]) -> str:
    """`node|queues|pid|token`: the queues say what the worker does (`chordal status`),
    and the pid and token make a name no other worker process ever had, since the node
    name can come back after a restart (same container hostname)."""
    return f"{node}|{','.join(sorted(consumes))}|{os.getpid()}|{uuid.uuid4().hex[:8]}"


def consumed_queues(instance: str) -> list[str]:
    """The queues an `instance_name` says its worker consumes."""
    return [q for q in instance.split("|")[1].split(",") if q]


@dataclass(frozen=True)
class Held:
    tag: str
    instance: str
    queue: str
    task: str
    task_id: str

    @classmethod
    def parse(cls, tag: str, value: str) -> Held:
        instance, queue, task, task_id = value.rsplit("|", 3)
        return cls(tag, instance, queue, task, task_id)


class Presence:
    """One worker process's heartbeat and the record of the messages it holds.

    A message recorded as held must be recorded by an instance in the workers set, or
    no recovery gives it back. The record adds the instance to the set (a heartbeat)
    unless the instance is surely in it (`listed`): it beat less than `dead_after_s / 2`
    ago by its own clock. Recovery removes only an instance whose heartbeat is
    `dead_after_s` old by the recovering worker's clock (`recover_dead_workers`), so
    with clocks less than `dead_after_s / 2` apart a removed instance is never
    `listed`, and records with a heartbeat again from then on."""

    def __init__(self, client: redis.Redis, instance: str, dead_after_s: float):
        self.r = client
        self.instance = instance
        self.dead_after_s = dead_after_s
        self.listed_until = 0.0
        """Until when (Unix time, this process's clock) the instance is surely in the
        workers set: `dead_after_s / 2` after its last heartbeat; 0 once it leaves."""

    @property
    def beat_every_s(self) -> float:
        return self.dead_after_s / 5

    def beat(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        self.r.zadd(WORKERS, {self.instance: now})
        self.listed_until = now + self.dead_after_s / 2

    def listed(self) -> bool:
        """Whether this instance is surely in the workers set now (see the class)."""
        return time.time() < self.listed_until

    def leave(self) -> bool:
        """Leave the workers set at a clean shutdown, so nobody counts this worker as
        alive for `dead_after_s` after it stopped; True when it left. It stays, for
        recovery to give back after `dead_after_s`, while it still holds a message or
        has one in its in-flight list (one transaction watches both)."""
        inflight = naming.inflight_key(self.instance)
        left = False
        self.listed_until = 0.0  # a message recorded from now on puts it back in the set

        def transaction(pipe) -> None:
            nonlocal left
            holds = any(bytes_to_str(v).startswith(self.instance + "|")
                        for v in pipe.hgetall(HELD).values())
            left = not holds and not pipe.llen(inflight)
            pipe.multi()
            if left:
                pipe.zrem(WORKERS, self.instance)

        self.r.transaction(transaction, HELD, inflight)
        return left

    def hold(self, tag: str, queue: str, task: str, task_id: str) -> None:
        """Record a message just received, with a heartbeat unless the instance is
        surely in the workers set (`listed`), so a recorded instance is in it."""
        value = naming.held_value(self.instance, queue, task, task_id)
        if self.listed():
            self.r.hset(HELD, tag, value)
            return
        with self.r.pipeline(transaction=False) as pipe:
            pipe.zadd(WORKERS, {self.instance: time.time()})
            pipe.hset(HELD, tag, value)
            pipe.execute()


def release(client: redis.Redis, tag: str) -> None:
    """Forget a message whose task returned (kombu acknowledges it next); any process of
    the worker may call it (a prefork child runs the task, its parent received it)."""
    client.hdel(HELD, tag)


def dead_instances(client: redis.Redis, dead_after_s: float,
                   now: float | None = None) -> list[str]:
    now = time.time() if now is None else now
    return [bytes_to_str(m) for m in client.zrangebyscore(WORKERS, "-inf", now - dead_after_s)]


def held_messages(client: redis.Redis) -> list[Held]:
    """Every message any worker instance records as held."""
    return [Held.parse(bytes_to_str(tag), bytes_to_str(value))
            for tag, value in client.hgetall(HELD).items()]


def restore_held(channel, held: Held) -> bool:
    """Move `held`'s message from `unacked` back to its queue if `held.instance` still
    holds it; True when it was restored. `channel` is a kombu Redis channel."""
    restored = False

    def transaction(pipe) -> None:
        nonlocal restored
        restored = False
        owner = pipe.hget(HELD, held.tag)
        if owner is None or Held.parse(held.tag, bytes_to_str(owner)).instance != held.instance:
            pipe.multi()
            return  # finished, or already given back and taken by a live worker
        raw = pipe.hget(channel.unacked_key, held.tag)
        pipe.multi()
        pipe.hdel(HELD, held.tag)
        if raw is not None:  # None: acknowledged before its worker died
            message, exchange, routing_key = json.loads(bytes_to_str(raw))
            channel.qos._remove_from_indices(held.tag, pipe)
            channel._do_restore_message(message, exchange, routing_key, pipe)
            restored = True

    with channel.conn_or_acquire() as client:
        client.transaction(transaction, HELD, channel.unacked_key)
    return restored


def recover_dead_workers(channel, dead_after_s: float, now: float | None = None) -> list[Held]:
    """Restore every message the dead worker instances held, and those they had taken
    off their queue and not yet recorded (their in-flight lists, shared/broker/transport.py),
    forget those instances, and return what was restored (an instance's in-flight
    messages as one Held without a tag, its task_id saying how many)."""
    now = time.time() if now is None else now
    with channel.conn_or_acquire() as client:
        dead = set(dead_instances(client, dead_after_s, now))
        if not dead:
            return []
        restored = [h for h in held_messages(client)
                    if h.instance in dead and restore_held(channel, h)]
        for instance in sorted(dead):
            if moved := restore_inflight_of(channel, instance):
                restored.append(Held("", instance, consumed_queues(instance)[0],
                                     "(taken, not yet received)", f"{moved} message(s)"))
        # an instance that beat meanwhile stays: it may record messages without a
        # heartbeat of their own (`Presence.listed`)
        client.eval(FORGET_DEAD_LUA, 1, WORKERS, now - dead_after_s, *sorted(dead))
    return restored


FORGET_DEAD_LUA = """
for i = 2, #ARGV do
  local beat = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if beat and tonumber(beat) <= tonumber(ARGV[1]) then redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return 1
"""
"""Remove from the workers set (KEYS[1]) each instance (ARGV[2:]) whose heartbeat is
still at or before ARGV[1]."""


def restore_inflight_of(channel, instance: str) -> int:
    """Push back what `instance` took into its in-flight list (only a worker consuming
    one queue has one, shared/broker/transport.py); how many."""
    consumed = consumed_queues(instance)
    return restore_inflight(channel, instance, consumed[0]) if len(consumed) == 1 else 0


def give_back_unstarted(channel, instance: str, running: set[str]) -> list[Held]:
    """Restore every message `instance` holds but is not running (delivery tags in
    `running`), and return them. For a worker whose broker connection dropped: Celery
    then forgets the messages it had received and not started, expecting the broker to
    deliver them again, which the Redis transport does only after the visibility
    timeout. A message restored while its task still starts after all (a thread pool's
    backlog) runs twice, which every task allows (first write wins, claims)."""
    with channel.conn_or_acquire() as client:
        held = held_messages(client)
    return [h for h in held if h.instance == instance and h.tag not in running
            and restore_held(channel, h)]


def restore_unacked_before(channel, before: float) -> int:
    """Give back every message delivered before `before` (a Unix time) and not
    acknowledged: for a Redis restarted from its AOF after a crash, which lost up to a
    second of writes, acknowledgements among them. A message whose ack was lost would
    otherwise wait out the visibility timeout although its worker lives on. This is
    kombu's own visibility-timeout restore, done at once; the tasks that run again are
    idempotent like every redelivery. Returns how many were given back."""
    with channel.conn_or_acquire() as client:
        tags = client.zrangebyscore(channel.unacked_index_key, "-inf", before)
        for tag in tags:
            channel.qos.restore_by_tag(tag, client, leftmost=True)
        if tags:
            client.hdel(HELD, *tags)
    return len(tags)

"""Kombu's Redis transport with four defects of kombu/Celery 5.7.0 closed: with it, a
worker whose broker connection drops keeps running and keeps the message it was
receiving at that moment, a message on its way to a worker whose host is cut off the
network is kept, not lost on the wire, and a queue entry that is not a message kombu can
read is dropped, not left to end the worker that takes it.

What a worker takes: each message is delivered marked with the queue it was taken from
(`message.taken_from`; its delivery info says what its sender wrote), so the worker runs
only that queue's tasks (workers/consumer.py). An entry that is not a message kombu can
read (shared/broker/admission.py `kombu_payload`: not JSON, no delivery tag, a compressed
body, ...) made kombu raise out of the worker's event loop, ending the worker, and
recovery gave it back to end the next one; here it is dropped as it is taken (out of
the in-flight list, counted as refused, logged once by its size).

On the wire: kombu takes a message with BRPOP, which removes it from the queue before
the reply travels; a reply that never arrives (the worker's link is down, its host gone)
leaves the message nowhere. Here a worker that consumes one queue (every Chordal role
does) takes it with BLMOVE into its own in-flight list (`naming.inflight_key`), so Redis
holds the message until the worker records it: one script (`RECORD_LUA`, atomic as a
transaction, one round trip) writes kombu's `unacked` record, the held-task record
(shared/broker/recovery.py) and removes it from the in-flight list. The acknowledgement
(`ACK_LUA`) forgets the `unacked` record and the held record in one script, so a task
costs one round trip to record and one to acknowledge. A worker found dead has its in-flight list pushed back to its queue with the
messages it held (`recover_dead_workers`); a worker that reconnects pushes back its own
(`restore_inflight`). Priorities have no sub-queues (`priority_steps` [0]: one list per
queue, as BLMOVE takes one source); a single question's messages (priority 0) are
pushed to the end of the list that is taken next, a batch's (`naming.BATCH_PRIORITY`)
to the other end, and a batch's plan messages wait in their batch's lane until
shared/broker/lanes.py moves them to the `plan` queue, round robin. A worker consuming several
queues (`--role all`), and any process whose `Custody` names no owner, uses BRPOP as
before.

Lost message: kombu takes a message off its queue (BRPOP) and then, in a second
command, records it in the `unacked` hash. A connection that drops between the two
leaves the message in the worker's hands only, and kombu drops it there: the query it
belonged to waited for its deadline. Here such a message is kept in the process
(`Custody`) and pushed back to the head of its queue once the worker is connected again
(`restore_orphans`, called by workers/services/giveback.py).

On connection loss, Celery's consumer collects the broken connection, which detaches
its channel from the transport, and goes on to use that channel: closing it (which
asks Redis to take the unacknowledged messages back) and acknowledging tasks that
finish afterwards. Each needs the detached connection's host, fails with
`AttributeError: 'NoneType' object has no attribute 'hostname'` (or `'client'`), and
Celery treats that as unrecoverable: the worker process ends. Here a detached channel
raises a Redis `ConnectionError` instead, which kombu and Celery handle as the
connection loss it is: the restore is skipped (the messages stay in Redis' `unacked`
hash; the reconnected worker gives back those it was not running, workers/services/)
and the acknowledgement is logged as failed (Redis delivers the message again after the
visibility timeout, or `chordal up` after a restart; a rerun is harmless).

`install()` (shared/broker/app.py calls it) maps kombu's `redis` and `rediss` schemes to this
transport, so URLs keep their meaning (`rediss://` keeps kombu's TLS handling, which
keys on the scheme's name); everything else is kombu's own transport.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from time import monotonic, time

import redis
from kombu import transport as kombu_transport
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import dumps

from shared.broker import admission
from shared import naming

log = logging.getLogger("chordal.transport")

RECORD_LUA = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], '[' .. ARGV[4] .. ', ' .. ARGV[3] .. ']')
redis.call('LREM', KEYS[3], 1, ARGV[4])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
  if ARGV[6] ~= '' then redis.call('ZADD', KEYS[5], ARGV[2], ARGV[6]) end
end
return 1
"""
"""kombu's `unacked` record and its index entry, the message out of the in-flight list,
and (ARGV[5] not empty) the held record, with a heartbeat when ARGV[6] names the
instance (it is not surely in the workers set: shared/broker/recovery.py `Presence`), so a
holder is in the workers set. KEYS: unacked index, unacked, in-flight list, held,
workers; ARGV: delivery tag, time, the exchange and routing key as the end of kombu's
`unacked` value (`"exchange", "routing key"`), the message as taken, the held value,
the instance or ''. The `unacked` value is kombu's `[message, exchange, routing key]`
with the message as taken: the message is not encoded again, nor sent twice."""
ACK_LUA = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""
"""An acknowledged message forgotten: its `unacked` record, index entry and held record.
KEYS: unacked index, unacked, held; ARGV: the delivery tag."""


class Custody:
    """What the channels of one process hold on to: the worker instance they take
    messages for (`owner`; None in a process that is no worker: BRPOP, nothing recorded
    held) and the messages taken off a queue as a connection dropped (the orphans),
    kept until a connection pushes them back. One per process (`Transport.custody`):
    a message orphaned by one connection goes back through the next, and every
    connection of a worker takes for that worker."""

    def __init__(self) -> None:
        self.owner: str | None = None
        self.listed: Callable[[], bool] = lambda: False
        """Whether `owner` is surely in the workers set now (shared/broker/recovery.py
        `Presence.listed`); when not, the record of a message puts it there."""
        self._orphans: list[tuple[dict, str, str]] = []
        self._lock = threading.Lock()

    def claim(self, owner: str, listed: Callable[[], bool] | None = None) -> None:
        """Take messages for worker instance `owner` (shared/broker/recovery.py): into its
        in-flight list, recorded as held by it as they arrive."""
        self.owner = owner
        if listed is not None:
            self.listed = listed

    def keep(self, payload: dict, exchange: str, routing_key: str) -> None:
        """Keep a message taken off its queue and recorded nowhere."""
        with self._lock:
            self._orphans.append((payload, exchange, routing_key))

    def orphans(self) -> int:
        """How many received messages wait to be pushed back to their queue."""
        with self._lock:
            return len(self._orphans)

    def restore(self, channel) -> int:
        """Push every orphan back to the head of its queue through `channel` (a
        connected kombu Redis channel), once: a copy in `unacked` (the record was
        written, only its reply lost) is removed in the same transaction. Returns how
        many; what cannot be pushed stays for the next call."""
        with self._lock:
            taken, self._orphans[:] = list(self._orphans), []
        done = 0
        try:
            with channel.conn_or_acquire() as client:
                for payload, exchange, routing_key in taken:
                    with client.pipeline() as pipe:  # one transaction
                        # recorded after all (only the reply was lost): take that copy out
                        channel.qos._remove_from_indices(
                            payload["properties"]["delivery_tag"], pipe)
                        channel._do_restore_message(payload, exchange, routing_key, pipe)
                        pipe.execute()
                    done += 1
        finally:
            with self._lock:
                self._orphans[:0] = taken[done:]
        return done


class QoS(kombu_redis.QoS):
    def restore_visible(self, *args, **kwargs):
        """kombu makes every consumer, also a control client waiting for the replies to
        a ping or an inspect (Flower, `chordal up` waiting for its workers), take
        `unacked_mutex` and give back tasks unacknowledged past the
        visibility timeout: that needs `unacked` and every task queue, which the
        `producers` and `monitoring` ACL users must not have (shared/access/acl.py).
        Only channels that consume a task queue restore; every worker does."""
        if frozenset(naming.TASK_QUEUES).isdisjoint(self.channel.active_queues):
            return None
        return super().restore_visible(*args, **kwargs)

    def append(self, message, delivery_tag):
        try:
            self._record(message, delivery_tag)
        except redis.ConnectionError:  # taken off the queue, not recorded as unacked
            delivery = message.delivery_info
            self.channel.custody.keep(message._raw, delivery["exchange"], delivery["routing_key"])
            raise  # the consumer never sees it and reconnects

    def _record(self, message, delivery_tag) -> None:
        """kombu's append (the `unacked` record and its index entry), and for a message
        taken into the in-flight list, in the same transaction: out of that list, and
        recorded as held by this instance (with a heartbeat unless it is surely in the
        workers set, as `Presence.hold` does for the messages of a worker that consumes
        several queues)."""
        received = getattr(self.channel, "_received", None)
        if received is None:
            return super().append(message, delivery_tag)
        owner = self.channel.custody.owner
        delivery = message.delivery_info
        exchange, routing_key = delivery["exchange"], delivery["routing_key"]
        headers = (message._raw or {}).get("headers") or {}
        held = routing_key != naming.QUEUE_REACT  # ReAct iterations have leases instead
        value = naming.held_value(owner, routing_key, headers.get("task", ""),
                                  headers.get("id", "")) if held else ""
        with self.channel.conn_or_acquire() as client:
            self.channel.script(client, RECORD_LUA)(
                keys=[self.unacked_index_key, self.unacked_key, naming.inflight_key(owner),
                      naming.held_messages_key(), naming.workers_key()],
                args=[delivery_tag, time(), dumps([exchange, routing_key])[1:-1],
                      received, value, "" if self.channel.custody.listed() else owner],
                client=client)
        message.held_recorded = held  # so the heartbeat does not record it again
        virtual.QoS.append(self, message, delivery_tag)

    def ack(self, delivery_tag):
        """kombu's, and the held record forgotten in the same script (a worker's only:
        other processes hold nothing)."""
        if self.channel.custody.owner is None:
            return super().ack(delivery_tag)
        with self.channel.conn_or_acquire() as client:
            self.channel.script(client, ACK_LUA)(
                keys=[self.unacked_index_key, self.unacked_key, naming.held_messages_key()],
                args=[delivery_tag], client=client)
        virtual.QoS.ack(self, delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        """kombu's, and the held record forgotten (a message given back to its queue is
        held by whoever takes it next)."""
        super().reject(delivery_tag, requeue)
        if self.channel.custody.owner is not None:
            with self.channel.conn_or_acquire() as client:
                client.hdel(naming.held_messages_key(), delivery_tag)


def orphans() -> int:
    """How many received messages of this process wait to be pushed back to their queue."""
    return Transport.custody.orphans()


def restore_orphans(channel) -> int:
    """Push the orphans of `channel`'s process back through it (`Custody.restore`)."""
    return channel.custody.restore(channel)


def restore_inflight(channel, instance: str, queue: str) -> int:
    """Push what `instance` took into its in-flight list and never recorded back to the
    head of `queue`, in one transaction; how many. For a dead instance, and for this
    one after a reconnect (a BLMOVE whose reply the dropped connection lost)."""
    key = naming.inflight_key(instance)
    moved = 0

    def transaction(pipe) -> None:
        nonlocal moved
        items = pipe.lrange(key, 0, -1)
        moved = len(items)
        pipe.multi()
        if items:  # the list's oldest first, each to the head, as BRPOP takes them
            pipe.rpush(queue, *reversed(items))
        pipe.delete(key)

    with channel.conn_or_acquire() as client:
        client.transaction(transaction, key)
    return moved


class Channel(kombu_redis.Channel):
    QoS = QoS
    priority_steps = [0]
    _moving_from: str | None = None
    _received: bytes | None = None
    _shared_client: redis.Redis | None = None

    def __init__(self, *args, **kwargs):
        self._scripts: dict[str, object] = {}
        super().__init__(*args, **kwargs)

    @property
    def custody(self) -> Custody:
        return self.connection.custody

    def script(self, client, source: str):
        """`source` as a redis-py Script (EVALSHA, loaded again after a Redis restart)."""
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = client.register_script(source)
        return script

    def _create_client(self, asynchronous=False):
        """kombu's, with one client kept per connection pool on the synchronous side:
        kombu builds a redis-py client for every publish, event, record and
        acknowledgement, and building one costs about 0.15 ms of CPU (its table of some
        170 response callbacks), more than sending the command. A redis-py client is
        safe to share between threads (each command takes a connection from the pool
        and gives it back); a new pool (after a fork, or a close) gets a new client."""
        if asynchronous:
            return super()._create_client(asynchronous=True)
        pool = self.pool  # a closed channel's builds a new pool, or raises (_connparams)
        client = self._shared_client
        if client is None or client.connection_pool is not pool:
            client = self._shared_client = super()._create_client()
        return client

    def _inflight_queue(self) -> str | None:
        """The one queue this channel takes into the in-flight list, or None (BRPOP)."""
        active = list(self.active_queues)
        if self.custody.owner is None or self.global_keyprefix or list(self.priority_steps) != [0] \
                or len(active) != 1:
            return None
        return active[0]

    def _brpop_start(self, timeout=None):
        queue = self._inflight_queue()
        self._moving_from = queue
        if queue is None:
            return super()._brpop_start(timeout)
        timeout = self.brpop_timeout if timeout is None else timeout
        self._in_poll = self.client.connection
        self._brpop_sent_at = monotonic()
        inflight = naming.inflight_key(self.custody.owner)
        self.client.connection.send_command("BLMOVE", queue, inflight, "RIGHT", "LEFT",
                                            timeout or 0)

    def basic_consume(self, queue, *args, **kwargs):
        """kombu's, with each message delivered marked with the queue it was taken from
        (`message.taken_from`): its delivery info is whatever its sender wrote, and the
        worker runs only the queue's own tasks (workers/consumer.py)."""
        deliver = kwargs["callback"]

        def taken(message):
            message.taken_from = queue
            return deliver(message)
        kwargs["callback"] = taken
        return super().basic_consume(queue, *args, **kwargs)

    def _brpop_read(self, **options):
        """kombu's, with BLMOVE for a channel taking into its in-flight list, and a
        payload that is not a message kombu can read dropped (`_drop`) instead of
        delivered: kombu would raise out of the worker's event loop and end the worker."""
        command = "BRPOP" if self._moving_from is None else "BLMOVE"
        try:
            try:
                reply = self.client.parse_response(self.client.connection, command, **options)
            except self.connection_errors:
                self.client.connection.disconnect()
                raise
            if not reply:
                raise virtual.Empty()
            if self._moving_from is None:
                dest, item = reply
                queue = bytes_to_str(dest).rsplit(self.sep, 1)[0]
                self._queue_cycle.rotate(queue)
            else:
                queue, item = self._moving_from, reply
            payload = admission.kombu_payload(item)
            if payload is None:
                self._drop(queue, item)
                raise virtual.Empty()
            self._received = item if self._moving_from is not None else None
            try:
                self.connection._deliver(payload, queue)
            finally:
                self._received = None
            return True
        finally:
            self._in_poll = None
            self._flush_brpop_reauth()

    def _drop(self, queue: str, item: bytes) -> None:
        """Count `item` as refused when it was taken from a task queue (and take it out
        of the in-flight list, in the same transaction), never to be delivered again;
        logged once, by its size only."""
        refused = admission.Refusal(admission.MALFORMED, admission.NOT_A_MESSAGE)
        with self.conn_or_acquire() as client, client.pipeline() as pipe:
            if self._moving_from is not None:
                pipe.lrem(naming.inflight_key(self.custody.owner), 1, item)
            if queue in naming.TASK_QUEUES:  # a control reply queue's reader may not write
                admission.count_refusal(pipe, queue, refused)
            pipe.execute()
        log.warning("refused a message of %d bytes on queue %s: %s; dropped, never run",
                    len(item), queue, refused.reason)

    def _put(self, queue, message, **kwargs):
        """kombu's, with lanes: a batch query's `chordal.plan` message goes to its batch's
        plan lane (shared/broker/lanes.py), any other message of a task queue below
        `naming.BATCH_PRIORITY` (a single question's) to the head of its queue, taken
        next, ahead of the batch messages waiting there."""
        if queue not in naming.TASK_QUEUES:
            return super()._put(queue, message, **kwargs)
        lane = (message.get("headers") or {}).get(naming.LANE_HEADER)
        if lane and queue == naming.QUEUE_PLAN:
            commands = [("lpush", naming.plan_lane_key(str(lane)), dumps(message)),
                        ("zadd", naming.plan_lanes_key(), {str(lane): 0}, True)]  # NX
        elif self._get_message_priority(message, reverse=False) < naming.BATCH_PRIORITY:
            commands = [("rpush", queue, dumps(message))]
        else:
            return super()._put(queue, message, **kwargs)
        batch = kwargs.pop("_publish_batch", None)
        if batch is not None:
            for name, *args in commands:
                batch.add(name, *args)
            return None
        if len(commands) == 1:  # one command: no transaction to wrap it in
            name, *args = commands[0]
            with self.conn_or_acquire() as client:
                getattr(client, name)(*args)
            return None
        with self.conn_or_acquire() as client, client.pipeline() as pipe:
            for name, *args in commands:
                getattr(pipe, name)(*args)
            pipe.execute()
        return None

    def _connparams(self, asynchronous=False):
        if self.connection is None or self.connection.client is None:
            raise redis.ConnectionError("the broker connection of this channel was closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
    custody = Custody()
    """The process's custody, the same through every connection (`Custody`)."""


def install() -> None:
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = f"{__name__}:Transport"
        # kombu caches what a name resolved to; forget an earlier resolution
        kombu_transport._transport_cache.pop(scheme, None)

"""Kombu's Redis transport with two defects of kombu/Celery 5.7.0 closed: a worker whose
broker connection drops no longer exits, and no longer loses the message it was
receiving at that moment.

Lost message: kombu takes a message off its queue (BRPOP) and then, in a second
command, records it in the `unacked` hash. A connection that drops between the two
leaves the message in the worker's hands only, and kombu drops it there: the query it
belonged to waited for its deadline. Here such a message is kept in the process
(`orphans`) and pushed back to the head of its queue once the worker is connected again
(`restore_orphans`, called by workers/presence.py).

On connection loss, Celery's consumer collects the broken connection, which detaches
its channel from the transport, and goes on to use that channel: closing it (which
asks Redis to take the unacknowledged messages back) and acknowledging tasks that
finish afterwards. Each needs the detached connection's host, fails with
`AttributeError: 'NoneType' object has no attribute 'hostname'` (or `'client'`), and
Celery treats that as unrecoverable: the worker process ends. Here a detached channel
raises a Redis `ConnectionError` instead, which kombu and Celery handle as the
connection loss it is: the restore is skipped (the messages stay in Redis' `unacked`
hash; the reconnected worker gives back those it was not running, workers/presence.py)
and the acknowledgement is logged as failed (Redis delivers the message again after the
visibility timeout, or `chordal up` after a restart; a rerun is harmless).

`install()` (shared/broker.py calls it) maps kombu's `redis` and `rediss` schemes to this
transport, so URLs keep their meaning (`rediss://` keeps kombu's TLS handling, which
keys on the scheme's name); everything else is kombu's own transport.
"""

from __future__ import annotations

import threading

import redis
from kombu import transport as kombu_transport
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis


_orphans: list[tuple[dict, str, str]] = []
_orphans_lock = threading.Lock()


class QoS(kombu_redis.QoS):
    def append(self, message, delivery_tag):
        try:
            super().append(message, delivery_tag)
        except redis.ConnectionError:  # taken off the queue, not recorded as unacked
            delivery = message.delivery_info
            with _orphans_lock:
                _orphans.append((message._raw, delivery["exchange"], delivery["routing_key"]))
            raise  # the consumer never sees it and reconnects


def orphans() -> int:
    """How many received messages wait to be pushed back to their queue."""
    with _orphans_lock:
        return len(_orphans)


def restore_orphans(channel) -> int:
    """Push every orphaned message back to the head of its queue through `channel` (a
    connected kombu Redis channel), once: a copy in `unacked` (the record was written,
    only its reply lost) is removed in the same transaction. Returns how many; what
    cannot be pushed stays for the next call."""
    with _orphans_lock:
        taken, _orphans[:] = list(_orphans), []
    done = 0
    try:
        with channel.conn_or_acquire() as client:
            for payload, exchange, routing_key in taken:
                with client.pipeline() as pipe:  # one transaction
                    # recorded after all (only the reply was lost): take that copy out
                    channel.qos._remove_from_indices(payload["properties"]["delivery_tag"], pipe)
                    channel._do_restore_message(payload, exchange, routing_key, pipe)
                    pipe.execute()
                done += 1
    finally:
        with _orphans_lock:
            _orphans[:0] = taken[done:]
    return done


class Channel(kombu_redis.Channel):
    QoS = QoS

    def _connparams(self, asynchronous=False):
        if self.connection is None or self.connection.client is None:
            raise redis.ConnectionError("the broker connection of this channel was closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel


def install() -> None:
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = f"{__name__}:Transport"
        # kombu caches what a name resolved to; forget an earlier resolution
        kombu_transport._transport_cache.pop(scheme, None)

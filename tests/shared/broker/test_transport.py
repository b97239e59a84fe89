"""The Redis transport's one change (shared/broker/transport.py), against a real Redis: a channel
Celery detached from its connection (what the consumer does when the broker connection
drops) raises a connection error, which Celery survives, where kombu's raises an
AttributeError, which ends the worker; the messages it held stay in `unacked`."""

from __future__ import annotations

import socket
import threading

import pytest
import redis
from kombu import Connection, Queue
from kombu.common import ignore_errors

from shared.broker import transport
from shared import naming


def detached(url: str, transport_cls: str):
    """A connection holding a message unacknowledged, detached as Celery's consumer
    leaves it on connection loss (`collect()`); returns both."""
    conn = Connection(url, transport=transport_cls)
    channel = conn.default_channel
    queue = Queue("execute")(channel)
    queue.declare()
    conn.Producer(channel).publish({"n": 1}, routing_key="execute", serializer="json")
    message = queue.get(no_ack=False)
    channel.client.connection_pool.disconnect()
    channel._pool = None
    conn.transport.client = None
    return conn, message


def test_kombus_own_transport_still_has_the_defect(redis_server):
    """When this fails, kombu fixed it upstream and shared/broker/transport.py can go."""
    conn, message = detached(redis_server.url, "kombu.transport.redis:Transport")
    with pytest.raises(AttributeError, match="hostname"):
        message.ack()
    with pytest.raises(AttributeError, match="hostname"):
        ignore_errors(conn, conn.default_channel.close)


def test_a_detached_channel_fails_as_a_lost_connection_and_keeps_its_messages(redis_server):
    conn, message = detached(redis_server.url, "shared.broker.transport:Transport")
    with pytest.raises(redis.ConnectionError):
        message.ack()
    assert isinstance(redis.ConnectionError(), conn.connection_errors)
    ignore_errors(conn, conn.default_channel.close)  # what Celery does: no error escapes
    with Connection(redis_server.url) as conn:
        held = conn.default_channel.client.hkeys("unacked")
    assert held == [message.delivery_tag.encode()]


def test_install_maps_both_redis_schemes_and_keeps_rediss_tls(redis_server):
    transport.install()
    for scheme in ("redis", "rediss"):
        conn = Connection(f"{scheme}://127.0.0.1:1/0")
        assert conn.transport_cls == scheme  # the name kombu's TLS handling keys on
        assert type(conn.transport) is transport.Transport
    assert Connection("rediss://127.0.0.1:1/0").ssl  # kombu still turns TLS on


class CuttingProxy:
    """A TCP proxy to Redis that drops every connection, and refuses new ones, once a
    reply carrying `marker` has gone to the client (or, with `deliver` False, instead of
    sending it: a reply lost on the wire): the broker connection lost just after a
    message was taken off its queue."""

    def __init__(self, port: int, marker: bytes, deliver: bool = True):
        self.target, self.marker, self.deliver = port, marker, deliver
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut = threading.Event()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut.is_set():
                client.close()
                continue
            server = socket.create_connection(("127.0.0.1", self.target))
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, watch: bool) -> None:
        try:
            while data := src.recv(65536):
                if self.cut.is_set():
                    return  # nothing reaches Redis once the cut began
                if watch and self.marker in data:
                    self.cut.set()  # before the client can answer the reply it gets
                    if self.deliver:  # else the reply is lost on the wire
                        dst.sendall(data)
                    for s in self.sockets:
                        s.shutdown(socket.SHUT_RDWR)
                    return
                dst.sendall(data)
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()


def test_a_message_taken_as_the_connection_drops_goes_back_to_its_queue(redis_server):
    proxy = CuttingProxy(redis_server.port, b"orphan-marker")
    conn = Connection(f"redis://127.0.0.1:{proxy.port}/0", transport="shared.broker.transport:Transport")
    try:
        channel = conn.default_channel
        queue = Queue("execute")(channel)
        queue.declare()
        conn.Producer(channel).publish({"n": 1}, routing_key="execute", serializer="json",
                                       headers={"test": "orphan-marker"})  # plain in the reply
        received = []
        consumer = conn.Consumer(queue, callbacks=[lambda body, m: received.append(body)])
        with consumer, pytest.raises(conn.connection_errors):
            conn.drain_events(timeout=5)
        assert received == [] and transport.orphans() == 1
        with Connection(redis_server.url) as direct:
            r = direct.default_channel.client
            assert r.llen("execute") == 0  # taken off: kombu alone would have lost it
            assert transport.restore_orphans(direct.default_channel) == 1
            assert transport.orphans() == 0
            assert r.hlen("unacked") == 0 and r.llen("execute") == 1  # once
            again = Queue("execute")(direct.default_channel).get(no_ack=True)
            assert again.payload == {"n": 1}
    finally:
        proxy.close()
        ignore_errors(conn, conn.release)


def test_a_message_whose_reply_is_lost_on_the_wire_waits_in_flight_and_goes_back_once(
        redis_server, monkeypatch):
    """A worker's link cut as Redis hands it a message: BRPOP would have lost it; BLMOVE
    leaves it in the worker's in-flight list, from which it goes back to its queue."""
    owner = "executor-x@host|execute|1|abcd"
    monkeypatch.setattr(transport.Transport.custody, "owner", owner)
    proxy = CuttingProxy(redis_server.port, b"wire-marker", deliver=False)
    conn = Connection(f"redis://127.0.0.1:{proxy.port}/0", transport="shared.broker.transport:Transport")
    try:
        channel = conn.default_channel
        queue = Queue("execute")(channel)
        queue.declare()
        conn.Producer(channel).publish({"n": 2}, routing_key="execute", serializer="json",
                                       headers={"test": "wire-marker"})
        received = []
        consumer = conn.Consumer(queue, callbacks=[lambda body, m: received.append(body)])
        with consumer, pytest.raises(conn.connection_errors):
            conn.drain_events(timeout=5)
        assert received == []
        with Connection(redis_server.url) as direct:
            r = direct.default_channel.client
            inflight = naming.inflight_key(owner)
            assert (r.llen("execute"), r.hlen("unacked"), r.llen(inflight)) == (0, 0, 1)
            assert transport.restore_inflight(direct.default_channel, owner, "execute") == 1
            assert transport.restore_inflight(direct.default_channel, owner, "execute") == 0
            assert (r.llen("execute"), r.llen(inflight)) == (1, 0)
            assert Queue("execute")(direct.default_channel).get(no_ack=True).payload == {"n": 2}
    finally:
        proxy.close()
        ignore_errors(conn, conn.release)


def test_a_message_taken_in_flight_is_recorded_unacked_and_held_in_one_step(
        redis_server, monkeypatch):
    owner = "executor-y@host|execute|1|abcd"
    monkeypatch.setattr(transport.Transport.custody, "owner", owner)
    with Connection(redis_server.url, transport="shared.broker.transport:Transport") as conn:
        channel = conn.default_channel
        queue = Queue("execute")(channel)
        queue.declare()
        conn.Producer(channel).publish({"n": 3}, routing_key="execute", serializer="json",
                                       headers={"task": "chordal.get", "id": "task-3"})
        received = []
        with conn.Consumer(queue, callbacks=[lambda body, m: received.append(m)]):
            conn.drain_events(timeout=5)
        (message,) = received
        r = channel.client
        tag = message.delivery_tag
        assert r.llen(naming.inflight_key(owner)) == 0 and r.hexists("unacked", tag)
        assert r.hget(naming.held_messages_key(), tag).decode() == (
            f"{owner}|execute|chordal.get|task-3")
        message.ack()
        assert not r.hexists("unacked", tag)

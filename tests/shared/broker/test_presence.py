"""A worker's presence (shared/broker/recovery.py `Presence`) against a real Redis: a
message is recorded held by an instance in the workers set, with a heartbeat of its own
only when the instance is not surely there, so recovery can always give it back."""

from __future__ import annotations

import time

from kombu import Connection, Queue

from shared import naming
from shared.broker import recovery, transport
from shared.broker.recovery import HELD, WORKERS, Presence, instance_name, recover_dead_workers

from .test_recovery import DEAD_AFTER, broker, hold  # noqa: F401 (broker: a fixture)


def test_a_worker_found_dead_while_alive_records_its_next_message_where_recovery_finds_it(
        broker):  # noqa: F811
    channel, r = broker.default_channel, broker.default_channel.client
    stalled = Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER)
    stalled.beat(time.time() - DEAD_AFTER - 1)  # it stalled past dead_after_s
    assert recover_dead_workers(channel, DEAD_AFTER) == []  # holding nothing: forgotten
    assert r.zscore(WORKERS, stalled.instance) is None and not stalled.listed()

    (message,) = broker.take(1)
    hold(stalled, message)  # it runs on, takes a message, then dies before beating

    assert r.zscore(WORKERS, stalled.instance) is not None
    later = time.time() + DEAD_AFTER + 1
    assert [h.task_id for h in recover_dead_workers(channel, DEAD_AFTER, now=later)] == \
        ["task-0"]
    assert r.hlen(HELD) == 0 and r.llen("execute") == 1


def test_a_worker_that_just_beat_records_a_message_without_a_heartbeat(broker):  # noqa: F811
    r = broker.default_channel.client
    beating = Presence(r, instance_name("executor@b", ["execute"]), DEAD_AFTER)
    beat_at = time.time() - 1
    beating.beat(beat_at)
    (message,) = broker.take(1)

    hold(beating, message)

    assert beating.listed()
    assert r.zscore(WORKERS, beating.instance) == beat_at  # the heartbeat's, untouched
    assert r.hexists(HELD, message.delivery_tag)


def test_the_transport_records_with_a_heartbeat_only_for_a_worker_not_surely_listed(
        redis_server, monkeypatch):
    owner = "executor-z@host|execute|1|abcd"
    custody = transport.Transport.custody
    monkeypatch.setattr(custody, "owner", owner)
    with Connection(redis_server.url, transport="shared.broker.transport:Transport") as conn:
        channel, r = conn.default_channel, conn.default_channel.client
        queue = Queue("execute")(channel)
        queue.declare()
        received = []
        for listed in (True, False):
            monkeypatch.setattr(custody, "listed", lambda listed=listed: listed)
            conn.Producer(channel).publish({"listed": listed}, routing_key="execute",
                                           serializer="json")
            with conn.Consumer(queue, callbacks=[lambda body, m: received.append(m)]):
                conn.drain_events(timeout=5)
            assert (r.zscore(WORKERS, owner) is not None) is (not listed)
        assert all(r.hexists(naming.held_messages_key(), m.delivery_tag) for m in received)
        for m in received:
            m.ack()


def test_a_worker_that_beats_while_it_is_being_recovered_stays_in_the_workers_set(
        broker, monkeypatch):  # noqa: F811
    """Recovery found it dead and gave back what it held; it beat again meanwhile (a
    stall ended) and records without a heartbeat from then on, so recovery must not
    remove it."""
    channel, r = broker.default_channel, broker.default_channel.client
    stalled = Presence(r, instance_name("executor@c", ["execute"]), DEAD_AFTER)
    (message,) = broker.take(1)
    hold(stalled, message)
    stalled.beat(time.time() - DEAD_AFTER - 1)
    restore_inflight_of = recovery.restore_inflight_of

    def beats_meanwhile(channel, instance):
        stalled.beat()
        return restore_inflight_of(channel, instance)
    monkeypatch.setattr(recovery, "restore_inflight_of", beats_meanwhile)

    assert [h.task_id for h in recover_dead_workers(channel, DEAD_AFTER)] == ["task-0"]
    assert r.zscore(WORKERS, stalled.instance) is not None and stalled.listed()

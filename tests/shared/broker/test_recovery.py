"""Giving a dead worker's messages back (shared/broker/recovery.py), against a real Redis and
kombu's own Redis transport: messages are taken with `no_ack=False`, so they sit in
kombu's `unacked` hash exactly as a worker's reserved tasks do."""

from __future__ import annotations

import time

import pytest
from kombu import Connection, Queue

from shared import naming
from shared.broker.census import Census, census
from shared.broker.recovery import (HELD, WORKERS, Presence, give_back_unstarted, instance_name,
                                    recover_dead_workers, release)
from shared.broker.transport import install

DEAD_AFTER = 5.0
BEHIND = {"priority": naming.BATCH_PRIORITY}
"""Messages of the batch lane: each pushed behind those waiting, as kombu pushes them (a
single question's would go ahead of them, shared/broker/transport.py), so the order they are
taken in is the order they were sent."""


@pytest.fixture
def broker(redis_server):
    """A kombu connection on an empty Redis, and `take(n)`: publish n messages to the
    `execute` queue and take them unacknowledged, as a worker would. The transport is
    Chordal's (shared/broker/transport.py), as in every Chordal process."""
    install()
    with Connection(redis_server.url) as conn:
        channel = conn.default_channel
        queue = Queue("execute")(channel)
        queue.declare()

        def take(n: int) -> list:
            producer = conn.Producer(channel)
            for i in range(n):
                producer.publish({"n": i}, routing_key="execute", serializer="json",
                                 **BEHIND)
            return [queue.get(no_ack=False) for _ in range(n)]

        conn.take, conn.queue = take, queue
        yield conn


def hold(presence: Presence, message) -> None:
    presence.hold(message.delivery_tag, "execute", "chordal.get", f"task-{message.payload['n']}")


def test_messages_held_by_a_dead_worker_go_back_to_the_head_of_their_queue(broker):
    channel, r = broker.default_channel, broker.default_channel.client
    dead = Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER)
    live = Presence(r, instance_name("executor@b", ["execute"]), DEAD_AFTER)
    first, second, third = broker.take(3)
    hold(dead, first)
    hold(dead, second)
    hold(live, third)
    dead.beat(time.time() - DEAD_AFTER - 1)  # it stopped beating
    broker.Producer(channel).publish({"n": 9}, routing_key="execute", serializer="json",
                                     **BEHIND)

    restored = recover_dead_workers(channel, DEAD_AFTER)

    assert sorted(h.task_id for h in restored) == ["task-0", "task-1"]
    assert {h.instance for h in restored} == {dead.instance}
    assert set(r.hkeys("unacked")) == {third.delivery_tag.encode()}  # the live one's stays
    assert set(r.hkeys(HELD)) == {third.delivery_tag.encode()}
    assert r.zscore(WORKERS, dead.instance) is None
    assert r.zscore(WORKERS, live.instance) is not None
    again = [broker.queue.get(no_ack=True).payload["n"] for _ in range(3)]
    assert sorted(again[:2]) == [0, 1] and again[2] == 9  # before the one that waited
    assert broker.queue.get(no_ack=True) is None


def test_a_reconnected_worker_gives_back_what_it_received_and_did_not_start(broker):
    """After a dropped connection Celery forgets the messages it had not started; the
    worker, alive, gives those back and keeps the one it is running."""
    channel, r = broker.default_channel, broker.default_channel.client
    me = Presence(r, instance_name("planner@a", ["plan"]), DEAD_AFTER)
    other = Presence(r, instance_name("planner@b", ["plan"]), DEAD_AFTER)
    running, forgotten, elsewhere = broker.take(3)
    for presence, message in ((me, running), (me, forgotten), (other, elsewhere)):
        hold(presence, message)

    given = give_back_unstarted(channel, me.instance, {running.delivery_tag})

    assert [h.task_id for h in given] == ["task-1"]
    assert set(r.hkeys("unacked")) == {running.delivery_tag.encode(),
                                       elsewhere.delivery_tag.encode()}
    assert set(r.hkeys(HELD)) == {running.delivery_tag.encode(), elsewhere.delivery_tag.encode()}
    assert broker.queue.get(no_ack=True).payload["n"] == 1
    assert give_back_unstarted(channel, me.instance, {running.delivery_tag}) == []


def test_a_second_recovery_restores_nothing_so_no_message_is_queued_twice(broker):
    channel, r = broker.default_channel, broker.default_channel.client
    dead = Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER)
    (message,) = broker.take(1)
    hold(dead, message)
    dead.beat(time.time() - DEAD_AFTER - 1)

    assert len(recover_dead_workers(channel, DEAD_AFTER)) == 1
    dead.beat(time.time() - DEAD_AFTER - 1)  # as if a second recoverer read it late
    assert recover_dead_workers(channel, DEAD_AFTER) == []
    assert r.llen("execute") == 1


def test_a_message_a_live_worker_took_after_the_restore_stays_with_it(broker):
    """The message keeps its delivery tag when restored; once a live worker holds it, the
    dead instance's leftover record (read before) must not restore it again."""
    channel, r = broker.default_channel, broker.default_channel.client
    dead = Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER)
    live = Presence(r, instance_name("executor@b", ["execute"]), DEAD_AFTER)
    (message,) = broker.take(1)
    hold(dead, message)
    dead.beat(time.time() - DEAD_AFTER - 1)
    assert len(recover_dead_workers(channel, DEAD_AFTER)) == 1
    retaken = broker.queue.get(no_ack=False)
    assert retaken.delivery_tag == message.delivery_tag
    hold(live, retaken)
    hold(dead, message)  # a stale record, as if written before the live worker's
    r.hset(HELD, message.delivery_tag, f"{live.instance}|execute|chordal.get|task-0")
    dead.beat(time.time() - DEAD_AFTER - 1)

    assert recover_dead_workers(channel, DEAD_AFTER) == []
    assert r.hexists("unacked", message.delivery_tag)
    assert r.llen("execute") == 0


def test_a_message_acknowledged_before_its_worker_died_is_only_forgotten(broker):
    channel, r = broker.default_channel, broker.default_channel.client
    dead = Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER)
    (message,) = broker.take(1)
    hold(dead, message)
    message.ack()  # the task returned, then the worker died before `release`
    dead.beat(time.time() - DEAD_AFTER - 1)

    assert recover_dead_workers(channel, DEAD_AFTER) == []
    assert r.hlen(HELD) == 0 and r.llen("execute") == 0


def test_a_released_message_and_a_live_worker_are_left_alone(broker):
    channel, r = broker.default_channel, broker.default_channel.client
    live = Presence(r, instance_name("executor@b", ["execute"]), DEAD_AFTER)
    first, second = broker.take(2)
    hold(live, first)
    hold(live, second)
    release(r, first.delivery_tag)
    first.ack()

    assert recover_dead_workers(channel, DEAD_AFTER) == []
    assert set(r.hkeys(HELD)) == {second.delivery_tag.encode()}
    assert r.hexists("unacked", second.delivery_tag)


def test_the_census_counts_live_workers_by_role_the_silent_ones_and_the_tasks_held(broker):
    r = broker.default_channel.client
    Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER).beat()
    Presence(r, instance_name("executor@b", ["execute"]), DEAD_AFTER).beat()
    Presence(r, instance_name("all@a", ["plan", "execute"]), DEAD_AFTER).beat()
    silent = Presence(r, instance_name("finalizer@a", ["finalize"]), DEAD_AFTER)
    (message,) = broker.take(1)
    hold(silent, message)
    silent.beat(time.time() - DEAD_AFTER - 1)

    assert census(r, DEAD_AFTER) == Census(live={"execute": 3, "plan": 1}, silent=1, held=1)


def test_messages_a_dead_worker_took_in_flight_go_back_to_its_queue_once(broker):
    """Taken off the queue into the worker's in-flight list (shared/broker/transport.py), never
    recorded: a worker cut off the network as Redis handed them over."""
    channel, r = broker.default_channel, broker.default_channel.client
    dead = Presence(r, instance_name("executor@a", ["execute"]), DEAD_AFTER)
    broker.Producer(channel).publish({"n": 1}, routing_key="execute", serializer="json",
                                     **BEHIND)
    broker.Producer(channel).publish({"n": 2}, routing_key="execute", serializer="json",
                                     **BEHIND)
    inflight = naming.inflight_key(dead.instance)
    r.blmove("execute", inflight, 1, "RIGHT", "LEFT")  # what its consumer did
    dead.beat(time.time() - DEAD_AFTER - 1)

    (restored,) = recover_dead_workers(channel, DEAD_AFTER)

    assert (restored.instance, restored.queue, restored.task_id) == (
        dead.instance, "execute", "1 message(s)")
    assert r.llen(inflight) == 0 and recover_dead_workers(channel, DEAD_AFTER) == []
    order = [broker.queue.get(no_ack=True).payload["n"] for _ in range(2)]
    assert order == [1, 2]  # back at the head, where it was taken from


def test_a_worker_that_stops_holding_nothing_leaves_and_one_still_holding_stays(broker):
    """A clean stop leaves the workers set, so nobody counts the worker alive after it;
    one that still holds a message, or has one in its in-flight list, stays for
    recovery to give it back once its heartbeat is old."""
    r = broker.default_channel.client
    idle = Presence(r, instance_name("executor@idle", ["execute"]), DEAD_AFTER)
    holding = Presence(r, instance_name("executor@holding", ["execute"]), DEAD_AFTER)
    taking = Presence(r, instance_name("executor@taking", ["execute"]), DEAD_AFTER)
    for presence in (idle, holding, taking):
        presence.beat()
    (message,) = broker.take(1)
    hold(holding, message)
    r.rpush(naming.inflight_key(taking.instance), b"{}")

    assert [p.leave() for p in (idle, holding, taking)] == [True, False, False]
    assert census(r, DEAD_AFTER).live == {"execute": 2}
    release(r, message.delivery_tag)
    assert holding.leave()
    assert census(r, DEAD_AFTER).live == {"execute": 1}

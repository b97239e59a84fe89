"""Every worker's heartbeat, the record of the messages it holds, and the recovery of
the messages dead workers held (shared/recovery.py), wired to Celery's signals.

- `worker_init`: the worker process takes a unique instance name (the first message it
  records, or the heartbeat thread, puts it in the workers set).
- `task_received` (the consumer, as a message arrives): record it as held, unless it is
  a ReAct iteration (those have their own leases, shared/react/leases.py) or the
  transport recorded it already, as it does for a worker consuming one queue.
- the acknowledgement (after the task ran) forgets it, in the script that forgets
  kombu's `unacked` record (shared/transport.py `ACK_LUA`).
- `worker_ready`: a daemon thread beats every `CHORDAL_WORKER_DEAD_AFTER_S / 5` seconds,
  gives back the messages of every worker whose heartbeat is that old, and fails the
  queries past their deadline (the run store's sweeper; failing is atomic, so many
  workers sweeping at once fail each query once), so no query outlives its deadline
  for want of a `chordal up` or an API process.
- `worker_shutdown` (a clean stop, after running tasks finished): stop beating and
  leave the workers set, unless a message is still held (recovery gives it back), so
  `chordal ask` and `/health`, which count workers by heartbeat, see it gone at once.
- every reconnection to the broker (a consumer bootstep, `GiveBackOnReconnect`): push
  back the message the connection dropped under as it arrived, and those taken into
  this worker's in-flight list whose reply the connection lost (shared/transport.py),
  and give back the messages this worker had received and not started, which Celery
  forgets when the connection drops (shared/recovery.py, `give_back_unstarted`).
"""

from __future__ import annotations

import threading
import time

import redis
from celery import bootsteps
from celery.signals import task_received, worker_init, worker_ready, worker_shutdown
from celery.worker.state import active_requests

from shared import lanes
from shared import naming
from shared.recovery import (Presence, give_back_unstarted, instance_name,
                             recover_dead_workers, restore_inflight_of)
from shared.stores.runs import RunStore
from shared.transport import restore_orphans, set_owner
from workers.app import app, log, run_store, settings

_presence: Presence | None = None
_stopped = threading.Event()
_beating = threading.Lock()  # a beat never lands after the worker left the set


@worker_init.connect
def _register(sender=None, **kwargs) -> None:
    global _presence
    consumes = list(sender.app.amqp.queues.consume_from or ())
    _presence = Presence(run_store().r, instance_name(sender.hostname, consumes),
                         settings().worker_dead_after_s)
    set_owner(_presence.instance)  # messages taken into its in-flight list, held on arrival


@task_received.connect
def _hold(sender=None, request=None, **kwargs) -> None:
    queue = (request.delivery_info or {}).get("routing_key")
    if _presence is None or queue == naming.QUEUE_REACT \
            or getattr(request.message, "held_recorded", False):  # by shared/transport.py
        return
    try:
        _presence.hold(request.message.delivery_tag, queue, request.name, request.id)
    except redis.RedisError as exc:  # the message runs anyway; only early recovery is lost
        log.warning("could not record message %s as held: %s", request.id, exc)


def keep_alive(presence: Presence, store: RunStore) -> None:
    """Beat, recover dead workers' messages and sweep expired queries for as long as the
    worker process lives (a daemon thread). Recovery waits until this worker has beaten
    for a whole `dead_after_s`: after a Redis outage every live worker's heartbeat is
    stale, and each gets that long to beat again."""
    healthy_since: float | None = None
    conn = None
    while True:
        try:
            with _beating:
                if _stopped.is_set():
                    return
                presence.beat()
            for query_id in store.sweep_expired():
                log.warning("query %s failed: past its deadline", query_id)
            lanes.feed(store.r, settings().plan_lane_depth)  # should no planner be taking
            healthy_since = healthy_since or time.monotonic()
            if time.monotonic() - healthy_since >= presence.dead_after_s:
                conn = conn or app.connection_for_write()
                for held in recover_dead_workers(conn.default_channel, presence.dead_after_s):
                    log.warning("worker %s died holding %s %s: gave it back to queue %s",
                                held.instance, held.task, held.task_id, held.queue)
        except Exception:  # a Redis hiccup must not end the heartbeat
            log.exception("worker heartbeat, recovery or sweep failed")
            healthy_since = None
            if conn is not None:
                conn.release()
                conn = None
        time.sleep(presence.beat_every_s)


@worker_ready.connect
def _start(sender=None, **kwargs) -> None:
    if _presence is not None:
        try:  # before the first ping is answered: a worker that answers is counted
            _presence.beat()
        except redis.RedisError as exc:  # the thread beats again
            log.warning("first heartbeat failed: %s", exc)
        threading.Thread(target=keep_alive, args=(_presence, run_store()),
                         name="chordal-presence", daemon=True).start()


@worker_shutdown.connect
def _leave(sender=None, **kwargs) -> None:
    with _beating:
        _stopped.set()
        if _presence is None:
            return
        try:
            if not _presence.leave():
                log.warning("stopped holding messages: recovery gives them back after "
                            "%.0f s", _presence.dead_after_s)
        except redis.RedisError as exc:  # it is counted alive until dead_after_s passes
            log.warning("could not leave the workers set: %s", exc)


class GiveBackOnReconnect(bootsteps.StartStopStep):
    """Started with the consumer, and again each time it reconnects to the broker."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.starts = 0

    def start(self, parent) -> None:
        self.starts += 1
        if self.starts == 1 or _presence is None:
            return
        running = {r.message.delivery_tag for r in tuple(active_requests)}
        try:
            with app.connection_for_write() as conn:
                if pushed := restore_orphans(conn.default_channel):
                    log.warning("reconnected: pushed back %d message(s) received as the "
                                "connection dropped", pushed)
                if moved := restore_inflight_of(conn.default_channel, _presence.instance):
                    log.warning("reconnected: pushed back %d message(s) taken as the "
                                "connection dropped, whose reply never came", moved)
                given = give_back_unstarted(conn.default_channel, _presence.instance, running)
        except redis.RedisError as exc:  # left for the visibility timeout, or `chordal up`
            log.warning("reconnected, but could not give back unstarted messages: %s", exc)
            return
        for held in given:
            log.warning("reconnected: gave back %s %s, received before the connection "
                        "dropped and not started, to queue %s", held.task, held.task_id,
                        held.queue)


app.steps["consumer"].add(GiveBackOnReconnect)

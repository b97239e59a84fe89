"""Give back on reconnect, a consumer bootstep: Celery starts the consumer's steps again
each time it reconnects to the broker, and at each such start this step pushes back
the message the connection dropped under as it arrived (the transport's orphans) and
those taken into this worker's in-flight list whose reply the connection lost
(shared/broker/transport.py), and gives back the messages this worker had received and not
started, which Celery forgets when the connection drops (shared/broker/recovery.py
`give_back_unstarted`).
"""

from __future__ import annotations

import redis
from celery import bootsteps
from celery.worker.state import active_requests

from shared.broker.recovery import give_back_unstarted, restore_inflight_of
from shared.broker.transport import restore_orphans
from workers.app import log
from workers.services.heartbeat import Heartbeat


class GiveBackOnReconnect(bootsteps.StartStopStep):
    """Started with the consumer, and again each time it reconnects to the broker."""

    label = "give back on reconnect"
    requires = ("celery.worker.consumer.tasks:Tasks", Heartbeat)

    def __init__(self, c, **kwargs):
        super().__init__(c, **kwargs)
        self.starts = 0

    def start(self, c) -> None:
        self.starts += 1
        if self.starts == 1:
            return
        instance = c.presence.instance
        running = {r.message.delivery_tag for r in tuple(active_requests)}
        try:
            with c.app.connection_for_write() as conn:
                channel = conn.default_channel
                if pushed := restore_orphans(channel):
                    log.warning("reconnected: pushed back %d message(s) received as the "
                                "connection dropped", pushed)
                if moved := restore_inflight_of(channel, instance):
                    log.warning("reconnected: pushed back %d message(s) taken as the "
                                "connection dropped, whose reply never came", moved)
                given = give_back_unstarted(channel, instance, running)
        except redis.RedisError as exc:  # left for the visibility timeout, or `chordal up`
            log.warning("reconnected, but could not give back unstarted messages: %s", exc)
            return
        for held in given:
            log.warning("reconnected: gave back %s %s, received before the connection "
                        "dropped and not started, to queue %s", held.task, held.task_id,
                        held.queue)

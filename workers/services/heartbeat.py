"""The worker's heartbeat and the record of the messages it holds (shared/broker/recovery.py
`Presence`), a consumer bootstep.

- As the consumer is built, the worker process takes a unique instance name
  (`c.presence`) and claims its broker transport's custody for it: its channels take
  messages into its in-flight list and record them as held (shared/broker/transport.py).
- `task_received` (Celery's signal, sent by the consumer as a message arrives): record
  the message as held, unless it is a ReAct iteration (those have their own leases,
  shared/react/leases.py) or the transport recorded it already, as it does for a worker
  consuming one queue. A signal, as Celery offers no step at a message's arrival; the
  step connects it for its consumer only. The acknowledgement (after the task ran)
  forgets the record, in the script that forgets kombu's `unacked` record
  (shared/broker/transport.py `ACK_LUA`).
- From the consumer's start (before the first ping is answered: a worker that answers
  is counted), it beats every `CHORDAL_WORKER_DEAD_AFTER_S / 5` seconds, through broker
  reconnections too.
- At the consumer's shutdown (a clean stop, after running tasks finished) it stops
  beating and leaves the workers set, unless a message is still held (recovery gives it
  back), so `chordal ask` and `/health`, which count workers by heartbeat, see it gone
  at once.
"""

from __future__ import annotations

import threading
import time

import redis
from celery.signals import task_received

from shared import naming
from shared.broker.recovery import Presence, instance_name
from workers.app import log, run_store, settings
from workers.services.loop import LifelongStep


class Heartbeat(LifelongStep):
    label = "heartbeat"
    thread = "chordal-heartbeat"

    def __init__(self, c, **kwargs):
        super().__init__(c, **kwargs)
        consumes = list(c.app.amqp.queues.consume_from or ())
        self.presence = c.presence = Presence(
            run_store().r, instance_name(c.hostname, consumes), settings().worker_dead_after_s)
        custody = getattr(c.conninfo.transport, "custody", None)
        if custody is not None:  # Chordal's transport (shared/broker/transport.py)
            custody.claim(self.presence.instance, self.presence.listed)
        self.steady_since: float | None = None
        self._beating = threading.Lock()  # a beat never lands after the worker left the set
        self._left = False
        task_received.connect(self.hold, sender=c, weak=False)

    def start(self, c) -> None:
        if self.steady_since is None:
            try:  # before the first ping is answered: a worker that answers is counted
                self.tick()
            except redis.RedisError as exc:  # the loop beats again
                log.warning("first heartbeat failed: %s", exc)
        super().start(c)

    def tick(self) -> None:
        try:
            with self._beating:
                if self._left:
                    return
                self.presence.beat()
        except Exception:
            self.steady_since = None
            raise
        self.steady_since = self.steady_since or time.monotonic()

    def steady_for(self) -> float:
        """Seconds this worker has beaten without a failure (0 after one)."""
        since = self.steady_since
        return 0.0 if since is None else time.monotonic() - since

    def hold(self, sender=None, request=None, **kwargs) -> None:
        """Record a message the consumer just received as held by this worker."""
        queue = (request.delivery_info or {}).get("routing_key")
        if queue == naming.QUEUE_REACT or getattr(request.message, "held_recorded", False):
            return
        try:
            self.presence.hold(request.message.delivery_tag, queue, request.name, request.id)
        except redis.RedisError as exc:  # the message runs anyway; only early recovery is lost
            log.warning("could not record message %s as held: %s", request.id, exc)

    def shutdown(self, c) -> None:
        super().shutdown(c)
        task_received.disconnect(self.hold, sender=c)
        with self._beating:
            self._left = True
            try:
                if not self.presence.leave():
                    log.warning("stopped holding messages: recovery gives them back after "
                                "%.0f s", self.presence.dead_after_s)
            except redis.RedisError as exc:  # counted alive until dead_after_s passes
                log.warning("could not leave the workers set: %s", exc)

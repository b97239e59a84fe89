"""The workers' Celery consumer (the `worker_consumer` setting, workers/app.py): every
message taken off a queue passes shared/broker/admission.py before Celery looks at it.

Consumes the messages the transport delivers, each marked with the queue it was taken
from (shared/broker/transport.py); produces, for a message refused, what an operator sees
instead of a task run: the message acknowledged (out of `unacked`, its worker slot
free), its held record gone (shared/broker/recovery.py would give it back otherwise), one
more in the refused counts (`chordal status`, the workers page), one log line (its
task name, id and queue, never its arguments, which may be large or hostile) and a
`task-rejected` event, which Flower shows. It never runs, and nothing of it is written
to Celery's result backend. Everything else goes on to Celery's own handler.

Its task events go out together, a moment after they happen (workers/events.py).

Celery's handlers of what it cannot run are replaced the same way: for an unregistered
task name Celery stores a failure in the result backend, which the `workers` ACL user
may not write, so the store raises and the message is never acknowledged; an invalid
message (a bad ETA) it only rejects, leaving its held record behind.
"""

from __future__ import annotations

import redis
from celery.worker.consumer import Consumer as CeleryConsumer
from kombu.exceptions import ContentDisallowed, DecodeError
from vine import promise

from shared.broker import admission
from shared.broker.recovery import release
from workers.app import log, run_store
from workers.events import BatchedEvents

INVALID = "Celery finds it invalid (eta, expires or body)"


class Consumer(BatchedEvents, CeleryConsumer):

    def create_task_handler(self, promise=promise):
        handle = super().create_task_handler(promise)

        def on_task_received(message):
            refused = admission.refusal(getattr(message, "taken_from", None), message.headers,
                                        lambda: _body(message), self.app.tasks)
            if refused is not None:
                return self.refuse(message, refused)
            return handle(message)
        return on_task_received

    def on_unknown_message(self, body, message):
        self.refuse(message, admission.Refusal(admission.MALFORMED, admission.NOT_A_MESSAGE))

    def on_unknown_task(self, body, message, exc):
        self.refuse(message, admission.Refusal(admission.UNKNOWN, admission.NOT_CHORDAL))

    def on_invalid_task(self, body, message, exc):
        log.warning("Celery finds message %s invalid: %s", _field(message, "id"), exc)
        name = _field(message, "task")
        self.refuse(message, admission.Refusal(
            name if name in self.app.tasks else admission.UNKNOWN, INVALID))

    def refuse(self, message, refused: admission.Refusal) -> None:
        """Acknowledge, forget as held, count, log and announce `message`, unrun."""
        queue = getattr(message, "taken_from", None) or "(unknown queue)"
        task_id = _field(message, "id")
        log.warning("refused %s[%s] taken from queue %s: %s; acknowledged, never run",
                    _field(message, "task"), task_id, queue, refused.reason)
        try:
            message.ack()
        except self.connection_errors as exc:  # still held: given back on reconnect
            log.warning("could not acknowledge refused message %s: %s", task_id, exc)
            return
        try:
            with run_store().r.pipeline() as pipe:
                release(pipe, message.delivery_tag)
                admission.count_refusal(pipe, queue, refused)
                pipe.execute()
        except redis.RedisError as exc:  # a dead instance's held leftovers are cleaned by recovery
            log.warning("could not count refused message %s: %s", task_id, exc)
        if self.event_dispatcher is not None and isinstance(message.headers, dict) \
                and isinstance(message.headers.get("id"), str):
            # the counted name: a hostile name would make a Flower metrics series of its own
            self.event_dispatcher.send("task-rejected", uuid=message.headers["id"],
                                       requeue=False, name=refused.task, routing_key=queue)


def _body(message) -> object:
    try:
        return message.decode()
    except (DecodeError, ContentDisallowed):
        return None


def _field(message, header: str, limit: int = 120) -> str:
    """A header of `message` as a bounded string for a log line or an event."""
    value = message.headers.get(header) if isinstance(message.headers, dict) else None
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"

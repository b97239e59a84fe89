"""A worker's task events, sent together: the consumer's half of Celery's event buffer.

Celery buffers a worker's task events (`task-received`, `task-started`,
`task-succeeded`, …) and sends them as one `task.multi` message on the event loop's next
turn: for a task of a few milliseconds, three PUBLISHes, one per event. `BatchedEvents`
sends them `FLUSH_S` after the first one is buffered instead, so a task's events, and
those of the tasks that ran meanwhile, go out in one PUBLISH. Each event keeps the time
it happened (its `timestamp`): Flower shows the same states and times, at most `FLUSH_S`
later. The buffer is sent as the consumer shuts down, so a warm stop loses none.
Without an event loop (the gevent and solo pools) Celery sends every event as it comes,
and so does this.

The `task-sent` event of a task a worker's task sends (the planner's steps, a step's
followers and finalizer: workers/canvas.py) goes into the same buffer (`sent_events`):
Celery publishes it on its own as the message goes out.
"""

from __future__ import annotations

from kombu.common import ignore_errors

FLUSH_S = 0.1
"""How long a worker's first buffered task event waits for others to go out with it."""


_consumer: BatchedEvents | None = None
"""The consumer of this worker process, once it runs."""


class BatchedEvents:
    """Mixed into the workers' Celery consumer (workers/consumer.py)."""

    _events_due = False

    def __init__(self, *args, **kwargs) -> None:
        global _consumer
        super().__init__(*args, **kwargs)
        _consumer = self

    def on_send_event_buffered(self) -> None:
        """Celery calls this from whichever thread buffered an event; the flush is timed
        on the event loop's thread (`call_soon` is the hub's thread-safe entry)."""
        if self.hub and not self._events_due:
            self._events_due = True
            self.hub.call_soon(self._flush_events_later)

    def _flush_events_later(self) -> None:
        self.hub.call_later(FLUSH_S, self._flush_due_events)

    def _flush_due_events(self) -> None:
        self._events_due = False  # an event buffered from now on times a flush of its own
        self._flush_events()

    def shutdown(self) -> None:
        if self.event_dispatcher is not None:
            ignore_errors(self, self._flush_events)  # Redis gone: the events are too
        super().shutdown()


class _Buffered:
    """What Celery's `send_task_message` publishes a `task-sent` event through (its
    `event_dispatcher`): the event goes into the consumer's buffer instead."""

    def __init__(self, consumer: BatchedEvents):
        self.consumer = consumer

    def publish(self, type: str, fields: dict, producer, **_) -> None:
        dispatcher = self.consumer.event_dispatcher
        if dispatcher is not None:  # else reconnecting: the event is lost, as Celery's are
            dispatcher.send(type, **fields)


def sent_events() -> dict:
    """The `send_task` options that put a task's `task-sent` event into this worker's
    buffer; none outside a worker with an event loop (Celery publishes it then)."""
    if _consumer is None or not _consumer.hub:
        return {}
    return {"event_dispatcher": _Buffered(_consumer)}

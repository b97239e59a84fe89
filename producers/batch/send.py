"""The submit pass of `chordal enqueue`: consumes the (line, Query) pairs of a checked
batch file; produces queries recorded in the run store as `queued`, members of the
batch, and one `chordal.plan` message each on the `plan` queue.

Per chunk of queries: one pipelined round trip creates the records (an id that exists
is not created again, see shared/stores/batches.py), the new ones' messages go out through
one kombu producer in one Redis pipeline (`Producer.batch`), with `ignore_result`, so
the sender never subscribes to a result channel, into the batch's plan lane; then they
are marked `sent`, and the `plan` queue is refilled from the lanes (shared/broker/lanes.py). A query
created by a run that stopped before its message went out is sent by the next run;
should that message have gone out after all, the planner's dispatch claim makes the
second one a no-op.

`max_in_flight`: before each chunk, hold back while this batch has `max_in_flight` or
more queries sent and not yet answered or failed (counted from the run store, so queries
submitted by an earlier run of the batch count too); meanwhile fail queries past their
deadline, as `chordal up` does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from celery import Celery

from shared.broker import lanes
from shared import naming
from shared.stores.batches import BatchStore
from shared.models import Query
from shared.stores.runs import RunStore

CHUNK = 500
"""Queries created and sent per round trip."""
POLL_S = 0.25
"""How often a held-back enqueue looks whether queries finished."""


@dataclass
class EnqueueReport:
    submitted: int = 0
    """Queries sent now (new ones, and ones an earlier run created but never sent)."""
    resent: int = 0
    """Of `submitted`: queries an earlier, interrupted run created but did not send."""
    already: int = 0
    """Queries whose id was submitted before (running or finished): not sent again."""
    seconds: float = 0.0
    waited_s: float = 0.0
    """Time spent held back by `max_in_flight`."""

    @property
    def rate(self) -> float:
        """Queries submitted per second of the submit pass, time held back excluded."""
        sending = self.seconds - self.waited_s
        return self.submitted / sending if sending > 0 else 0.0


class InFlight:
    """The batch's queries sent and not yet terminal, refreshed from the run store."""

    def __init__(self, batches: BatchStore, runs: RunStore):
        self.batches, self.runs = batches, runs
        self.ids: set[str] = set()

    def add(self, ids: Iterable[str]) -> None:
        self.ids.update(ids)

    def room_for(self, n: int, limit: int) -> float:
        """Block until `n` more fit under `limit`; return the seconds it waited."""
        started = time.monotonic()
        while self.ids and len(self.ids) + n > limit:
            self.ids = set(self.batches.unfinished(list(self.ids)))
            if len(self.ids) + n > limit:
                self.runs.sweep_expired()
                time.sleep(POLL_S)
        return time.monotonic() - started


def chunks(rows: Iterable[tuple[int, Query]], size: int) -> Iterator[list[tuple[int, Query]]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def send_plans(app: Celery, queries: list[Query], batch: str | None = None) -> None:
    """One `chordal.plan` message per query, all in one Redis pipeline; with `batch`, in
    the batch lane (`naming.BATCH_PRIORITY`), each in `batch`'s plan lane."""
    lane = {} if batch is None else {"priority": naming.BATCH_PRIORITY,
                                     "headers": {naming.LANE_HEADER: batch}}
    with app.producer_or_acquire() as producer, producer.batch(max_size=4 * len(queries) + 8):
        for i, q in enumerate(queries):
            # A ready-made argsrepr spares Celery a saferepr of the whole query (a third
            # of the send time) and shows Flower the id; the queue is declared once.
            app.send_task(naming.TASK_PLAN, args=(q.model_dump(mode="json"),),
                          queue=naming.QUEUE_PLAN, ignore_result=True, producer=producer,
                          argsrepr=f"(query {q.id}: {q.question[:60]!r})", kwargsrepr="{}",
                          declare=None if i == 0 else [], **lane)


def enqueue(rows: Iterable[tuple[int, Query]], batch: str, batches: BatchStore,
            runs: RunStore, app: Celery, *, max_in_flight: int = 0,
            queue_wait_s: float | None = None, lane_depth: int = 32,
            on_chunk: Callable[[int], None] = lambda n: None) -> EnqueueReport:
    """Create and send every query of `rows` not submitted before; `max_in_flight` 0
    means no limit. `queue_wait_s`: each query's queue-wait budget (its run deadline
    then starts when it is planned); None keeps one deadline from enqueue. The messages
    wait in the batch's plan lane; after each chunk the `plan` queue is filled up to
    `lane_depth` from the lanes, round robin (shared/broker/lanes.py). `on_chunk` gets the
    number of rows handled after each chunk."""
    report, started = EnqueueReport(), time.perf_counter()
    # Chunks of a quarter of the limit keep the queue fed while the first ones finish.
    size = min(CHUNK, max(1, max_in_flight // 4)) if max_in_flight else CHUNK
    inflight = InFlight(batches, runs)
    for chunk in chunks(rows, size):
        if max_in_flight:
            report.waited_s += inflight.room_for(len(chunk), max_in_flight)
        now = time.time()
        stamp = {"created_at": now, "queue_wait_s": queue_wait_s}
        chunk = [(line, q.model_copy(update=stamp)) for line, q in chunk]
        outcomes = batches.create(batch, chunk)
        send = [q for (_, q), o in zip(chunk, outcomes) if o in ("new", "resend")]
        if send:
            send_plans(app, send, batch)
            batches.mark_sent(q.id for q in send)
            lanes.feed(runs.r, lane_depth)
        report.submitted += len(send)
        report.resent += outcomes.count("resend")
        report.already += len(chunk) - len(send)
        inflight.add(q.id for q in send)
        inflight.add(q.id for (_, q), o in zip(chunk, outcomes) if o == "running")
        on_chunk(len(chunk))
    report.seconds = time.perf_counter() - started
    return report

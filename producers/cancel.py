"""Cancelling: `chordal cancel QUERY_ID` or `chordal cancel --batch NAME`, and what the
API's DELETE routes and the pages' cancel buttons call. Consumes a query id or a batch
name; produces a `Cancelled` count.

Every unfinished query ends `cancelled` through the run store's terminal guard
(`RunStore.cancel`, 1,000 queries a pipelined round trip): an answered or failed query
is untouched, and cancelling again is a no-op. Queued messages of a cancelled query do
nothing when a worker takes them (every task checks the query is not terminal), and a
step already running stores its result, which nothing reads.
Exit codes: 0 (something was cancelled, or everything had finished already); 2 an
unknown query or batch, or both or neither given.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Optional

import typer

from producers.batch import batch_names, out, stores
from producers.output import fail
from shared import lanes
from shared.batch_store import BatchStore
from shared.config import Settings
from shared.store import RunStore


@dataclass
class Cancelled:
    cancelled: int = 0
    finished: int = 0
    """Already done, failed or cancelled: untouched."""
    missing: int = 0
    """Records that expired."""
    seconds: float = 0.0

    def line(self, what: str) -> str:
        gone = f", {self.missing} expired" if self.missing else ""
        return (f"{what}: cancelled {self.cancelled}, already finished {self.finished}"
                f"{gone} ({self.seconds:.2f}s)")


def _count(outcomes: list[str], started: float) -> Cancelled:
    n = Counter(outcomes)
    return Cancelled(n["cancelled"], n["finished"], n["missing"], time.perf_counter() - started)


def cancel_queries(runs: RunStore, query_ids: list[str], reason: str) -> Cancelled:
    started = time.perf_counter()
    return _count(runs.cancel(query_ids, reason), started)


def cancel_batch(batches: BatchStore, runs: RunStore, name: str, reason: str) -> Cancelled:
    """Cancel every unfinished query of batch `name`, a chunk of members at a time; then
    drop the plan messages still waiting in its lane (shared/lanes.py), which would
    only keep planners busy doing nothing."""
    started, outcomes = time.perf_counter(), []
    for members in batches.members(name):
        outcomes.extend(runs.cancel([qid for qid, _ in members], reason))
    lanes.drop(runs.r, name)
    return _count(outcomes, started)


def cancel(query_id: Optional[str] = typer.Argument(None, help="The query to cancel."),
           batch: Optional[str] = typer.Option(None, "--batch", help="Cancel every unfinished query of this batch.")):
    """End unfinished queries as `cancelled`; answered ones are untouched."""
    if (query_id is None) == (batch is None):
        fail("give a QUERY_ID or --batch NAME (one of them)")
    settings = Settings()
    batches, runs = stores(settings)
    if batch is not None:
        name = batch_names(batches, batch, settings)[0]
        out.print(cancel_batch(batches, runs, name, "cancelled by `chordal cancel "
                               f"--batch {name}`").line(f"batch {name}"))
        return
    result = cancel_queries(runs, [query_id], "cancelled by `chordal cancel`")
    if result.missing:
        fail(f"no query {query_id!r} in the run store at {settings.masked_redis_url}: "
             "check the id, or it expired after CHORDAL_RUN_TTL_S")
    if result.finished:
        out.print(f"query {query_id} had already finished ({runs.status(query_id)}): "
                  "nothing to cancel")
    else:
        out.print(f"query {query_id}: cancelled")

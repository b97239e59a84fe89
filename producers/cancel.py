"""Cancelling, as `chordal cancel` (producers/cli/batch.py), the API's DELETE routes and
the pages' cancel buttons ask for it. Consumes a query id or a batch
name; produces a `Cancelled` count.

Every unfinished query ends `cancelled` through the run store's terminal guard
(`RunStore.cancel`, 1,000 queries a pipelined round trip): an answered or failed query
is untouched, and cancelling again is a no-op. Queued messages of a cancelled query do
nothing when a worker takes them (every task checks the query is not terminal), and a
step already running stores its result, which nothing reads.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from shared.broker import lanes
from shared.stores.batches import BatchStore
from shared.stores.runs import RunStore


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
    drop the plan messages still waiting in its lane (shared/broker/lanes.py), which would
    only keep planners busy doing nothing."""
    started, outcomes = time.perf_counter(), []
    for members in batches.members(name):
        outcomes.extend(runs.cancel([qid for qid, _ in members], reason))
    lanes.drop(runs.r, name)
    return _count(outcomes, started)

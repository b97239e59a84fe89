"""Following batches: consumes a batch's counters (shared/stores/batch_counts.py), or the
members of one or more batches and their run-store records (read in pipelined chunks,
see shared/stores/batches.py); produces a `BatchStatus` (counts per state, answers per
second, latency percentiles, the oldest unfinished query) or waits until every query is
terminal. `batch_status` reads the counters (the same cost at 100,000 queries as at
10); `tally_batch` reads every record (`failed_in_group`).

Latency is queued → done (`t_done - t_queued`) over the answered queries; answers per
second is the number answered divided by the time from the first query queued to the
last one finished, and over the last minute the number answered in the last 60 s
divided by 60 (or by the time since the first query was queued, when shorter). A query
whose record expired before it was counted is `missing`. The pages (producers/api/pages/site.py)
show the same `BatchStatus`. Latency percentiles from the counters are the upper bound
of a 10%-wide bucket; answers over the last minute are counted per whole second.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from shared import naming
from shared.stores.batch_counts import BatchCounts, read_counts
from shared.stores.batches import BatchStore
from shared.models import STATUSES, TERMINAL
from shared.stores.runs import RunStore

STATES = (*STATUSES, "missing")
FIELDS = ("status", "t_queued", *(f"t_{s}" for s in TERMINAL))
WAIT_POLL_S = 0.5
RECENT_S = 60.0
"""The window of `answers_per_s_last_minute`."""
QUEUES = naming.ROLE_QUEUES["all"]


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (`p` in 0..100) of `values`; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class BatchStatus:
    batch: str
    total: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATES, 0))
    answers_per_s: float | None = None
    answers_per_s_last_minute: float | None = None
    """Answers in the last `RECENT_S` seconds per second (0 when none came)."""
    p50_s: float | None = None
    p95_s: float | None = None
    oldest_unfinished: dict | None = None
    """`{"id", "status", "age_s"}` of the unfinished query queued first."""

    @property
    def finished(self) -> int:
        return sum(self.counts[s] for s in TERMINAL) + self.counts["missing"]

    @property
    def unfinished(self) -> int:
        return self.total - self.finished


class Tally:
    """Accumulates one batch's rows chunk by chunk (latencies are kept, one float each)."""

    def __init__(self, batch: str):
        self.status = BatchStatus(batch)
        self.latencies: list[float] = []
        self.done_at: list[float] = []
        self.failed: list[str] = []
        """Ids of the failed queries, in batch order."""
        self.first_queued = math.inf
        self.last_finished = 0.0
        self.oldest: tuple[float, str, str] | None = None

    def add(self, qid: str, row: list[str | None]) -> None:
        status, queued, done, failed, *ends = row
        self.status.total += 1
        if status is None:
            self.status.counts["missing"] += 1
            return
        self.status.counts[status if status in STATES else "queued"] += 1
        if status == "failed":
            self.failed.append(qid)
        queued_at = float(queued) if queued else None
        if queued_at is not None:
            self.first_queued = min(self.first_queued, queued_at)
        finished = done or failed or next((t for t in ends if t), None)
        if finished:
            self.last_finished = max(self.last_finished, float(finished))
            if done:
                self.done_at.append(float(done))
            if done and queued_at is not None:
                self.latencies.append(float(done) - queued_at)
        elif queued_at is not None and (self.oldest is None or queued_at < self.oldest[0]):
            self.oldest = (queued_at, qid, status)

    def result(self, now: float | None = None) -> BatchStatus:
        now = time.time() if now is None else now
        s = self.status
        s.p50_s, s.p95_s = percentile(self.latencies, 50), percentile(self.latencies, 95)
        span = self.last_finished - self.first_queued
        if s.counts["done"] and span > 0:
            s.answers_per_s = s.counts["done"] / span
        window = min(RECENT_S, now - self.first_queued)
        if window > 0:
            s.answers_per_s_last_minute = sum(t > now - RECENT_S for t in self.done_at) / window
        if self.oldest:
            queued_at, qid, status = self.oldest
            s.oldest_unfinished = {"id": qid, "status": status, "age_s": now - queued_at}
        return s


def tally_batch(batches: BatchStore, batch: str) -> Tally:
    """Every query of `batch` tallied, read `CHUNK` records per round trip."""
    tally = Tally(batch)
    for members in batches.members(batch):
        ids = [qid for qid, _ in members]
        for qid, row in zip(ids, batches.fields(ids, FIELDS)):
            tally.add(qid, row)
    return tally


def batch_status(batches: BatchStore, batch: str, now: float | None = None) -> BatchStatus:
    """The status of `batch` from its counters (shared/stores/batch_counts.py): two round
    trips whatever its size."""
    return status_of(batches, batch, read_counts(batches.r, batch), now)


def status_of(batches: BatchStore, batch: str, c: BatchCounts,
              now: float | None = None) -> BatchStatus:
    """`BatchStatus` from counters read before; a query counted nowhere (its record
    expired before it was counted) is `missing`."""
    now = time.time() if now is None else now
    s = BatchStatus(batch, total=c.total)
    for state in STATUSES:
        s.counts[state] = c.counts.get(state, 0)
    s.counts["missing"] = max(0, c.total - sum(s.counts.values()))
    s.p50_s, s.p95_s = c.percentile(50), c.percentile(95)
    if s.counts["done"] and c.first_queued is not None and c.last_finished is not None \
            and c.last_finished > c.first_queued:
        s.answers_per_s = s.counts["done"] / (c.last_finished - c.first_queued)
    if c.first_queued is not None:
        window = min(RECENT_S, now - c.first_queued)
        if window > 0:
            s.answers_per_s_last_minute = c.answers_since(now - RECENT_S) / window
    if c.oldest:
        qid, queued_at = c.oldest
        state = batches.r.hget(naming.run_key(qid), "status") or "queued"
        s.oldest_unfinished = {"id": qid, "status": state, "age_s": now - queued_at}
    return s


@dataclass
class WaitResult:
    total: int = 0
    done: int = 0
    failed: int = 0
    """Failed, or whose record expired."""
    cancelled: int = 0

    @property
    def unfinished(self) -> int:
        return self.total - self.done - self.failed - self.cancelled


def wait_batches(batches: BatchStore, runs: RunStore, names: list[str],
                 timeout_s: float | None = None,
                 on_progress: Callable[[WaitResult], None] = lambda r: None) -> WaitResult:
    """Poll until every query of `names` is terminal or `timeout_s` passes; each pass
    reads only the queries not yet seen terminal, and fails those past their deadline."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    result, finished, pending, size = WaitResult(), set(), [], -1
    while True:
        current = sum(batches.size(n) for n in names)
        if current != size:  # an enqueue is still adding to the batch: re-read members
            size = current
            members = {qid for n in names for chunk in batches.members(n)
                       for qid, _ in chunk}
            pending = sorted(members - finished)
            result.total = len(members)
        rows = batches.fields(pending, ("terminal", "status"))
        still = []
        for qid, (terminal, status) in zip(pending, rows):
            if terminal == "done":
                result.done += 1
            elif terminal == "cancelled":
                result.cancelled += 1
            elif terminal or status is None:
                result.failed += 1
            else:
                still.append(qid)
                continue
            finished.add(qid)
        pending = still
        on_progress(result)
        if not pending or (deadline is not None and time.monotonic() >= deadline):
            return result
        runs.sweep_expired()
        time.sleep(WAIT_POLL_S if deadline is None
                   else max(0.0, min(WAIT_POLL_S, deadline - time.monotonic())))

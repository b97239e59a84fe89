"""Deadline sweep, a worker bootstep: every `CHORDAL_WORKER_DEAD_AFTER_S / 5` seconds,
fail the queries past their deadline (the run store's sweeper; failing is atomic, so
many workers sweeping at once fail each query once), so no query outlives its deadline
for want of a `chordal up` or an API process."""

from __future__ import annotations

from workers.app import log, run_store
from workers.services.loop import LoopStep


class DeadlineSweep(LoopStep):
    label = "deadline sweep"
    thread = "chordal-deadlines"

    def tick(self) -> None:
        for query_id in run_store().sweep_expired():
            log.warning("query %s failed: past its deadline", query_id)

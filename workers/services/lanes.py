"""Lane feed, a worker bootstep: every `CHORDAL_WORKER_DEAD_AFTER_S / 5` seconds, refill
the `plan` queue from the batches' plan lanes (shared/broker/lanes.py), so batch queries move
on should no planner be taking them (planners feed the lanes as they take, the batch
sender as it sends)."""

from __future__ import annotations

from shared.broker import lanes
from workers.app import run_store, settings
from workers.services.loop import LoopStep


class LaneFeed(LoopStep):
    label = "lane feed"
    thread = "chordal-lanes"

    def tick(self) -> None:
        lanes.feed(run_store().r, settings().plan_lane_depth)

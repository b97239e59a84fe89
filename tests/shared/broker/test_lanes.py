"""Plan lanes (shared/broker/lanes.py) on a real Redis: batches' plan messages come into the
`plan` queue in turn, up to the depth asked for, and `chordal status` counts those
still waiting their turn."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import redis

from producers.cancel import cancel_batch
from shared.broker import lanes
from shared import naming
from shared.stores.batches import BatchStore
from shared.models import Query
from shared.stores.runs import RunStore


@pytest.fixture
def r(redis_server) -> redis.Redis:
    with redis.Redis.from_url(redis_server.url, decode_responses=True) as client:
        yield client


def lane(r: redis.Redis, batch: str, n: int) -> None:
    """`n` messages in `batch`'s lane, as the transport puts them there."""
    r.lpush(naming.plan_lane_key(batch), *(f"{batch}-{i}" for i in range(n)))
    r.zadd(naming.plan_lanes_key(), {batch: 0}, nx=True)


def test_two_batches_come_into_the_plan_queue_in_turn_up_to_the_depth(r):
    lane(r, "first", 5)
    assert lanes.feed(r, 2) == 2  # alone, the first batch fills the queue
    lane(r, "second", 5)
    assert lanes.feed(r, 8) == 6
    taken = [r.rpop(naming.QUEUE_PLAN) for _ in range(8)]
    assert taken == ["first-0", "first-1", "second-0", "first-2", "second-1", "first-3",
                     "second-2", "first-4"]
    assert lanes.waiting(r) == 2 and lanes.feed(r, 8) == 2
    assert not r.exists(naming.plan_lanes_key(), naming.plan_lane_key("first"),
                        naming.plan_lane_key("second"))  # drained lanes leave the set


@pytest.mark.integration  # starts a process
def test_status_counts_the_plan_messages_waiting_in_batch_lanes(r, redis_server, tmp_path):
    BatchStore(r, 3600).create("held", [(1, Query(question="waiting its turn"))])
    lane(r, "held", 3)
    env = {**os.environ, "CHORDAL_HOME": str(tmp_path), "CHORDAL_REDIS_URL": redis_server.url}
    shown = subprocess.run([sys.executable, "-m", "producers", "status"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "; 3 plan messages in batch lanes, waiting their turn" in shown.stdout


def test_a_cancelled_batch_leaves_no_plan_message_in_its_lane(r):
    store = BatchStore(r, 3600)
    queries = [Query(question=f"cancelled {i}") for i in range(3)]
    store.create("gone", list(enumerate(queries, 1)))
    lane(r, "gone", 3)
    lane(r, "kept", 2)
    done = cancel_batch(store, RunStore(r, 3600), "gone", "cancelled by a test")
    assert done.cancelled == 3
    assert lanes.waiting(r) == 2 and r.zrange(naming.plan_lanes_key(), 0, -1) == ["kept"]

"""Interactive first, batches fair, through the real stack (`pipeline`: one planner):
a single question goes ahead of the batch queries already queued, and two batches
enqueued one after the other are planned in turn (shared/broker/lanes.py), not first come,
all served. Order is read from each query's `t_planning`, never from durations."""

from __future__ import annotations

import time

import pytest

from producers.batch.send import enqueue
from shared import naming
from shared.stores.batches import BatchStore
from shared.models import Query

from .test_batch import worded

pytestmark = pytest.mark.integration


def send_batch(pipeline, name: str, n: int) -> list[str]:
    """Enqueue `n` queries as batch `name` (as `chordal enqueue` does, no in-flight
    limit, the `plan` queue fed one message deep); their ids in line order."""
    tag = f"{name}-{time.time_ns()}"
    rows = [(i + 1, Query(id=f"{tag}-{i}", question=line["question"]))
            for i, line in enumerate(worded(n))]
    store = pipeline.store
    report = enqueue(rows, name, BatchStore(store.r, store.ttl_s), store, pipeline.app,
                     queue_wait_s=3600, lane_depth=1)
    assert report.submitted == n
    return [q.id for _, q in rows]


def planned_at(pipeline, ids: list[str]) -> list[float]:
    times = []
    for qid in ids:
        record = pipeline.store.wait(qid, 180)
        assert record.status == "done", (qid, record.status, record.error)
        times.append(record.timings["planning"])
    return times


def test_a_single_question_is_planned_ahead_of_the_batch_queued_before_it(pipeline):
    batch = send_batch(pipeline, "it-lane-batch", 100)
    question = pipeline.submit("What was Tesla's battery yield in Q3 2023?",
                               created_at=time.time())
    record = pipeline.store.wait(question.id, 120)
    assert record.status == "done" and "91.7" in record.answer.text
    batch_planned = planned_at(pipeline, batch)
    after = sum(t > record.timings["planning"] for t in batch_planned)
    assert after >= 80, f"only {after} of 100 batch queries queued before it were planned after it"


def test_two_batches_enqueued_one_after_the_other_are_planned_in_turn(pipeline):
    first = send_batch(pipeline, "it-lane-first", 100)
    second = send_batch(pipeline, "it-lane-second", 100)
    first_planned, second_planned = planned_at(pipeline, first), planned_at(pipeline, second)
    ahead = sum(t < max(first_planned) for t in second_planned)
    assert ahead >= 40, f"only {ahead} of the second batch were planned before the first ended"
    assert not pipeline.store.r.exists(naming.plan_lanes_key())  # every lane drained

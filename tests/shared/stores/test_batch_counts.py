"""Batch counters on a real Redis (no workers): moved by the scripts that change a
query's state, never twice for a redelivered transition, equal to a recount, and read
at the same cost whatever the batch's size."""

from __future__ import annotations

import time

import redis

from producers.batch.follow import batch_status
from producers.api.pages.batches import batch_view
from shared import naming
from shared.stores.batch_counts import read_counts, recount
from shared.stores.batches import BatchStore
from shared.models import Answer, Query


CREATED = float(int(time.time()))
"""When the test batches are created: now, so their queries are within their deadlines
(an answer past its deadline fails its query)."""


def make_batch(store, name: str, n: int, created: float = CREATED) -> list[str]:
    batches = BatchStore(store.r, store.ttl_s)
    rows = [(i, Query(id=f"{name}-{i}", question=f"Question {i}?", created_at=created + i,
                      deadline_s=3600))
            for i in range(n)]
    assert set(batches.create(name, rows)) == {"new"}
    return [q.id for _, q in rows]


def plain(c) -> dict:
    """What a user sees of the counters."""
    return {"counts": dict(c.counts), "total": c.total, "oldest": c.oldest,
            "buckets": c.buckets, "failures": c.failures, "first": c.first_queued}


def test_counters_follow_each_transition_once_and_equal_a_recount(bare_store):
    ids = make_batch(bare_store, "b", 6)
    for qid in ids[:5]:
        bare_store.set_status(qid, "planning")
    bare_store.set_status(ids[0], "planning")  # a redelivered planner: counted once
    for qid in ids[:4]:
        bare_store.set_status(qid, "executing")
    assert bare_store.finish(ids[0], Answer(text="42"))
    assert not bare_store.finish(ids[0], Answer(text="42"))  # redelivered finalizer
    assert bare_store.fail(ids[1], "deadline exceeded while executing: too slow")
    assert bare_store.fail(ids[2], "plan is invalid: 1 problem")
    bare_store.set_status(ids[1], "finalizing")  # a late task after the end: ignored

    c = read_counts(bare_store.r, "b")
    assert dict(c.counts) == {"queued": 1, "planning": 1, "executing": 1, "done": 1,
                              "failed": 2}
    assert c.total == 6 and c.oldest == (ids[3], CREATED + 3)
    assert c.failures == {
        ("deadline exceeded while executing", "-"): (1, "deadline exceeded while executing: too slow"),
        ("plan is invalid", "-"): (1, "plan is invalid: 1 problem")}
    assert sum(c.buckets.values()) == 1
    before = plain(c)
    assert plain(recount(bare_store.r, "b", 3600)) == before


def test_a_recount_repairs_counters_that_disagree_and_a_gone_record_is_missing(bare_store):
    ids = make_batch(bare_store, "r", 4)
    bare_store.set_status(ids[0], "planning")
    bare_store.r.delete(naming.run_key(ids[3]))  # expired
    bare_store.r.hset(naming.batch_counts_key("r"), "queued", 99)  # gone wrong
    assert batch_status(BatchStore(bare_store.r, 3600), "r").counts["queued"] == 99
    recount(bare_store.r, "r", 3600)
    s = batch_status(BatchStore(bare_store.r, 3600), "r")
    assert (s.counts["queued"], s.counts["planning"], s.counts["missing"]) == (2, 1, 1)
    assert s.oldest_unfinished["id"] == ids[0] and s.oldest_unfinished["status"] == "planning"
    assert not bare_store.r.exists(naming.run_key(ids[3])), "a recount recreated a record"
    bare_store.set_status(ids[0], "planning")  # counted under `planning` by the recount
    assert read_counts(bare_store.r, "r").counts["planning"] == 1


def commands(r: redis.Redis) -> int:
    return int(r.info("stats")["total_commands_processed"])


def test_status_and_the_batches_page_cost_the_same_commands_for_2000_queries_as_for_10(
        bare_store):
    make_batch(bare_store, "small", 10)
    ids = make_batch(bare_store, "large", 2000)
    for qid in ids[::3]:
        bare_store.fail(qid, "deadline exceeded while queued: no workers")
    batches = BatchStore(bare_store.r, 3600)
    cost = {}
    for name in ("small", "large"):
        start = commands(bare_store.r)
        s = batch_status(batches, name)
        view = batch_view(batches, name)
        cost[name] = commands(bare_store.r) - start
    assert s.counts["failed"] == len(ids[::3]) and view.failures[0].count == len(ids[::3])
    assert cost["small"] == cost["large"] < 20, cost


def test_latency_percentiles_are_within_a_tenth(bare_store):
    ids = make_batch(bare_store, "lat", 100)
    for i, qid in enumerate(ids):
        # answered i+1 seconds after it was queued (finish stamps the time now)
        bare_store.r.hset(naming.run_key(qid), "t_queued", time.time() - (i + 1))
        bare_store.finish(qid, Answer(text="x"))
    s = batch_status(BatchStore(bare_store.r, 3600), "lat")
    assert 50 <= s.p50_s <= 55 and 95 <= s.p95_s <= 105
    assert s.answers_per_s_last_minute > 0

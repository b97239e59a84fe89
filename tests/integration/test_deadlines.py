"""Deadlines that fit a batch, through the real stack (`pipeline`): a batch query's
wait in the `plan` queue has its own budget (CHORDAL_BATCH_QUEUE_WAIT_S), its run
deadline starts when a planner takes it; a single question keeps one deadline."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from shared import naming
from shared.stores.batches import BatchStore

from .test_batch import worded, write

pytestmark = pytest.mark.integration


def enqueue(pipeline, path: str, batch: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "producers", "enqueue", path, "--batch", batch,
                           "--max-in-flight", "0"], env={**pipeline.env(), **env},
                          capture_output=True, text=True, timeout=120)


def test_a_batch_past_its_queue_wait_budget_fails_saying_so_and_a_generous_one_is_answered(
        pipeline, tmp_path):
    path = write(tmp_path / "hundred.jsonl", worded(100))
    short = enqueue(pipeline, path, "it-wait-short", CHORDAL_BATCH_QUEUE_WAIT_S="0.001")
    assert short.returncode == 0, short.stderr
    waited = pipeline.cli("wait", "--batch", "it-wait-short", "--timeout", "90")
    assert "0 done, 100 failed, 0 unfinished of 100" in waited.stdout, waited.stdout
    ids = [qid for page in _members(pipeline, "it-wait-short") for qid in page]
    for qid in ids:
        record = pipeline.store.record(qid)
        assert record.status == "failed" and "planning" not in record.timings
        assert "waited in the queue longer than CHORDAL_BATCH_QUEUE_WAIT_S=0.001s" in record.error

    generous = enqueue(pipeline, path, "it-wait-long")  # the default: six hours
    assert generous.returncode == 0, generous.stderr
    waited = pipeline.cli("wait", "--batch", "it-wait-long", "--timeout", "90")
    assert "100 done, 0 failed, 0 unfinished of 100" in waited.stdout, waited.stdout


def _members(pipeline, batch: str):
    store = BatchStore(pipeline.store.r, pipeline.settings.run_ttl_s)
    return ([qid for qid, _ in page] for page in store.members(batch))


def test_a_batch_query_planned_late_still_gets_its_whole_run_deadline(pipeline):
    asked = time.time() - 30  # enqueued half a minute ago, with a run deadline of 5 s
    query = pipeline.submit("What was Tesla's battery yield in Q3 2023?",
                            queue_wait_s=3600, deadline_s=5, created_at=asked)
    assert query.id not in pipeline.store.sweep_expired()  # within its queue-wait budget
    record = pipeline.store.wait(query.id, 60)
    assert record.status == "done", record.error
    assert record.timings["planning"] > asked + query.deadline_s
    planned = float(pipeline.store.r.hget(naming.run_key(query.id), "planned_at"))
    assert planned == record.timings["planning"]

"""`chordal cancel` against the real stack (`pipeline`: real Redis, real worker
processes): a batch with queries in every state, the messages of cancelled queries, and
what `status`, `wait` and `results` say of them."""

from __future__ import annotations

import json
import time

import pytest

from shared import naming
from shared.stores.batches import BatchStore
from shared.broker.app import make_celery
from shared.models import FinalizeTask, Plan, Query, StepTask

from ..conftest import wait_idle
from .test_batch import QUESTIONS, write

pytestmark = pytest.mark.integration
GET = Plan.model_validate({"steps": [{"id": "E1", "operation": "GET", "source":
                                      "Tesla Q3 2023 Financial Report", "output_var": "$R"}],
                           "answer": "{{ R }}"}).steps[0]


def test_cancelling_a_batch_ends_what_is_unfinished_and_leaves_what_is_answered(pipeline, tmp_path):
    store, name = pipeline.store, "it-cancel"
    lines = [{"question": QUESTIONS[0] + " (then cancelled)", "id": "it-cx-done"},
             {"question": "Think step by step: " + QUESTIONS[1], "id": "it-cx-failed",
              "mode": "react"}]  # fails: this stack has no LLM
    assert pipeline.cli("enqueue", write(tmp_path / "cx.jsonl", lines), "--batch", name).returncode == 0
    assert pipeline.cli("wait", "--batch", name, "--timeout", "60").returncode == 1
    answer = store.record("it-cx-done").answer
    # Queries a planner and an executor hold, and one still queued (recorded here and
    # moved on as a worker would: a real worker answers in well under a second).
    held = {s: Query(id=f"it-cx-{s}", question=f"{QUESTIONS[2]} ({s})", created_at=time.time(),
                     deadline_s=600) for s in ("queued", "planning", "executing")}
    BatchStore(store.r, pipeline.settings.run_ttl_s).create(
        name, [(3 + i, q) for i, q in enumerate(held.values())])
    store.set_status("it-cx-planning", "planning")
    store.set_status("it-cx-executing", "planning")
    store.set_status("it-cx-executing", "executing")

    cancelled = pipeline.cli("cancel", "--batch", name)
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"batch {name}: cancelled 3, already finished 2" in cancelled.stdout
    done = store.record("it-cx-done")
    assert (done.status, done.answer) == ("done", answer)
    assert store.record("it-cx-failed").status == "failed"
    for q in held.values():
        record = store.record(q.id)
        assert record.status == "cancelled" and "chordal cancel --batch" in record.error

    # Their messages, taken by the workers now, do nothing.
    app = make_celery(pipeline.settings)
    app.send_task(naming.TASK_PLAN, args=(held["queued"].model_dump(mode="json"),),
                  queue=naming.QUEUE_PLAN)
    app.send_task(naming.STEP_TASKS["GET"],
                  args=(StepTask(query_id="it-cx-executing", step=GET).model_dump(mode="json"),))
    app.send_task(naming.TASK_FINALIZE, task_id=naming.finalize_task_id("it-cx-executing"),
                  kwargs={"task": FinalizeTask(query_id="it-cx-executing").model_dump()})
    wait_idle(store.r)
    for q in held.values():
        record = store.record(q.id)
        assert (record.status, record.plan, record.steps, record.answer) == \
            ("cancelled", None, [], None)

    again = pipeline.cli("cancel", "--batch", name)
    assert f"batch {name}: cancelled 0, already finished 5" in again.stdout

    s = json.loads(pipeline.cli("status", "--batch", name, "--json").stdout)
    assert {k: s["counts"][k] for k in ("done", "failed", "cancelled", "queued")} == \
        {"done": 1, "failed": 1, "cancelled": 3, "queued": 0}
    assert (s["unfinished"], s["oldest_unfinished"]) == (0, None)
    waited = pipeline.cli("wait", "--batch", name, "--timeout", "10")
    assert waited.returncode == 1
    assert "1 done, 1 failed, 3 cancelled, 0 unfinished of 5" in waited.stdout
    rows = {r["id"]: r for r in map(json.loads, pipeline.cli("results", "--batch", name).stdout.splitlines())}
    assert rows["it-cx-queued"]["status"] == "cancelled" and rows["it-cx-queued"]["latency_s"] is not None
    assert rows["it-cx-done"]["answer"] == answer.text


def test_cancelling_one_query_twice_and_an_unknown_one(pipeline):
    q = Query(id="it-cx-one", question=QUESTIONS[3], created_at=time.time(), deadline_s=600)
    assert pipeline.store.create(q)
    first = pipeline.cli("cancel", "it-cx-one")
    assert first.returncode == 0 and "query it-cx-one: cancelled" in first.stdout
    second = pipeline.cli("cancel", "it-cx-one")
    assert second.returncode == 0 and "had already finished (cancelled)" in second.stdout
    assert pipeline.store.wait("it-cx-one", 1).status == "cancelled"
    unknown = pipeline.cli("cancel", "it-cx-nope")
    assert unknown.returncode == 2 and "no query 'it-cx-nope'" in unknown.stderr
    both = pipeline.cli("cancel", "it-cx-one", "--batch", "x")
    assert both.returncode == 2 and "one of them" in both.stderr

"""`chordal enqueue`, `status`, `wait` and `results` against the real stack (`pipeline`:
real Redis, real worker processes, the heuristic planner over the bundled corpus)."""

from __future__ import annotations

import json
import re
import time

import pytest

from producers.batch.file import LineDefaults, parse_line
from shared import naming
from shared.stores.batches import BatchStore
from shared.models import Query

from ..conftest import DATA

pytestmark = pytest.mark.integration
QUESTIONS = [q for q in (DATA / "questions.txt").read_text().splitlines() if q.strip()]
EXPECTED = ["91.7", "$9.84", "1,240", "2024-03-29", "5.25"]
"""The value in the answer to each bundled question, however it is worded."""
PREFIXES = ["", "Please tell me: ", "Quick question: ", "I need to know: ", "Briefly: ",
            "For the report: ", "Kindly answer: ", "One more: ", "Help me out. ", "Check: "]
SUFFIXES = ["", " Thanks.", " Cite the source.", " Be precise.", " Cheers.", " Ta."]


def worded(n: int) -> list[dict]:
    """`n` lines asking the bundled questions in different words (so ids differ)."""
    variants = [(p, s) for p in PREFIXES for s in SUFFIXES]
    return [{"question": f"{p}{QUESTIONS[i % 5]}{s}"}
            for i, (p, s) in zip(range(n), (v for v in variants for _ in range(5)))]


def write(path, lines: list) -> str:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


def test_hundreds_of_lines_are_answered_once_each_and_a_rerun_submits_nothing(pipeline, tmp_path):
    lines = worded(300)
    path = write(tmp_path / "many.jsonl", lines + [lines[7]])  # one line repeated
    sent = pipeline.cli("enqueue", path, "--batch", "it-many")
    assert sent.returncode == 0, sent.stderr
    assert "submitted 300 queries to batch it-many" in sent.stdout
    assert "skipped 0 submitted before, 1 repeated lines" in sent.stdout

    early = pipeline.cli("wait", "--batch", "it-many", "--timeout", "0.2")
    assert early.returncode == 1 and "--timeout 0.2s passed first" in early.stdout

    waited = pipeline.cli("wait", "--batch", "it-many", "--timeout", "90")
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert "300 done, 0 failed, 0 unfinished of 300" in waited.stdout

    again = pipeline.cli("enqueue", path, "--batch", "it-many")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("nothing submitted: all 300 queries of batch it-many "
                                   "were submitted before")
    assert pipeline.store.r.llen(naming.QUEUE_PLAN) == 0

    defaults = LineDefaults(batch="it-many")
    ids = [parse_line(json.dumps(line), defaults).id for line in lines]
    r = pipeline.store.r
    assert r.zcard(naming.batch_key("it-many")) == 300
    for i, qid in enumerate(ids):
        record = pipeline.store.record(qid)
        assert record.status == "done" and record.finalizer_runs == 1
        assert EXPECTED[i % 5] in record.answer.text
        assert pipeline.store.deliveries(qid)["plan"] == 1, "plan sent twice"

    status = pipeline.cli("status", "--batch", "it-many", "--json")
    assert status.returncode == 0, status.stderr
    s = json.loads(status.stdout)
    assert (s["total"], s["counts"]["done"], s["unfinished"]) == (300, 300, 0)
    assert 0 < s["p50_s"] <= s["p95_s"] < 90 and s["answers_per_s"] > 0
    assert s["oldest_unfinished"] is None
    text = pipeline.cli("status", "--batch", "it-many")
    assert "queue depth: plan 0, execute 0, finalize 0" in text.stdout
    alive = re.search(r"workers alive, by queue consumed: (.*); 0 tasks held", text.stdout)
    assert alive and {"plan 1", "execute 1", "finalize 1"} <= set(alive[1].split(", "))

    out = tmp_path / "answers.jsonl"
    exported = pipeline.cli("results", "--batch", "it-many", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == ids, "one line per query, in file order"
    assert [row["question"] for row in rows] == [line["question"] for line in lines]
    for row in rows:
        record = pipeline.store.record(row["id"])
        assert (row["status"], row["answer"], row["error"]) == ("done", record.answer.text, None)
        assert row["footnotes"][0]["title"] == record.answer.footnotes[0].evidence.title


def test_a_malformed_line_names_its_line_and_nothing_is_submitted(pipeline, tmp_path):
    lines = worded(20)
    path = write(tmp_path / "bad.jsonl", lines[:12] + [{"question": "q", "mode": "fast"}]
                 + lines[12:])
    result = pipeline.cli("enqueue", path, "--batch", "it-bad")
    assert result.returncode == 2
    assert "bad.jsonl line 13: field 'mode' is 'fast'; use one of rewoo, react, auto" in result.stderr
    assert "nothing submitted" in result.stderr
    defaults = LineDefaults(batch="it-bad")
    assert all(pipeline.store.status(parse_line(json.dumps(x), defaults).id) is None
               for x in lines)
    unknown = pipeline.cli("status", "--batch", "it-bad")
    assert unknown.returncode == 2 and "no batch 'it-bad'" in unknown.stderr


def test_max_in_flight_keeps_that_many_queries_unfinished_at_most(pipeline, tmp_path):
    lines = [{"question": f"{p}{q} (limited)"} for p in PREFIXES[:8] for q in QUESTIONS]
    path = write(tmp_path / "limited.jsonl", lines)
    sent = pipeline.cli("enqueue", path, "--batch", "it-limited", "--max-in-flight", "8")
    assert sent.returncode == 0, sent.stderr
    assert pipeline.cli("wait", "--batch", "it-limited", "--timeout", "60").returncode == 0
    defaults = LineDefaults(batch="it-limited")
    spans = []
    for line in lines:
        t = pipeline.store.record(parse_line(json.dumps(line), defaults).id).timings
        spans.append((t["queued"], t["done"]))
    overlap = max(sum(1 for q, d in spans if q <= start < d) for start, _ in spans)
    assert overlap <= 8, f"{overlap} queries were in flight at once"


def test_wait_exits_1_when_a_query_of_the_batch_failed_and_results_say_why(pipeline, tmp_path):
    path = write(tmp_path / "mixed.jsonl", [
        {"question": QUESTIONS[0] + " (mixed)", "id": "it-mixed-ok"},
        {"question": "Think step by step: " + QUESTIONS[1], "id": "it-mixed-react",
         "mode": "react"}])  # a ReAct loop needs an LLM, which this stack has none of
    assert pipeline.cli("enqueue", path, "--batch", "it-mixed").returncode == 0
    waited = pipeline.cli("wait", "--batch", "it-mixed", "--timeout", "60")
    assert waited.returncode == 1
    assert "1 done, 1 failed, 0 unfinished of 2" in waited.stdout
    rows = [json.loads(x) for x in pipeline.cli("results", "--batch", "it-mixed")
            .stdout.splitlines()]
    assert [(r["id"], r["status"]) for r in rows] == [("it-mixed-ok", "done"),
                                                       ("it-mixed-react", "failed")]
    assert rows[1]["answer"] is None and "LLM" in rows[1]["error"]


def test_queries_an_interrupted_enqueue_created_but_never_sent_are_sent_by_the_next(
        pipeline, tmp_path):
    lines = [{"question": f"After a crash: {q}"} for q in QUESTIONS]
    path = write(tmp_path / "crashed.jsonl", lines)
    defaults = LineDefaults(batch="it-crashed")
    queries = [parse_line(json.dumps(x), defaults) for x in lines]
    # What a run killed between creating its first chunk and sending it leaves behind:
    BatchStore(pipeline.store.r, pipeline.settings.run_ttl_s).create("it-crashed", list(enumerate(queries[:3], start=1)))
    result = pipeline.cli("enqueue", path, "--batch", "it-crashed")
    assert result.returncode == 0, result.stderr
    assert "submitted 5 queries (3 created by an interrupted run)" in result.stdout
    assert pipeline.cli("wait", "--batch", "it-crashed", "--timeout", "60").returncode == 0
    assert all(pipeline.store.record(q.id).finalizer_runs == 1 for q in queries)


def test_the_counters_the_workers_keep_equal_a_recount_of_the_records(pipeline, tmp_path):
    lines = [{"question": f"{q} (counted)", "id": f"it-counted-{i}"} for i, q in enumerate(QUESTIONS)]
    lines += [{"question": "Think step by step: " + QUESTIONS[1], "id": "it-counted-react",
               "mode": "react"}]  # fails: no LLM
    assert pipeline.cli("enqueue", write(tmp_path / "c.jsonl", lines), "--batch",
                        "it-counted").returncode == 0
    late = Query(id="it-counted-late", question=QUESTIONS[2], created_at=time.time() - 10,
                 deadline_s=1)  # recorded, never sent: it expires while queued
    BatchStore(pipeline.store.r, pipeline.settings.run_ttl_s).create("it-counted", [(7, late)])
    assert pipeline.cli("wait", "--batch", "it-counted", "--timeout", "60").returncode == 1
    pipeline.store.set_status("it-counted-0", "finalizing")  # a late, redelivered task
    kept = json.loads(pipeline.cli("status", "--batch", "it-counted", "--json").stdout)
    assert kept["counts"]["done"] == len(QUESTIONS) and kept["counts"]["failed"] == 2
    assert pipeline.store.record("it-counted-late").error.startswith("deadline exceeded")
    redone = pipeline.cli("status", "--recount", "it-counted", "--json")
    assert redone.returncode == 0 and "recounted batch it-counted from its 7 records" in redone.stderr
    again = json.loads(redone.stdout)
    same = ("counts", "total", "unfinished", "p50_s", "p95_s", "oldest_unfinished")
    assert {k: again[k] for k in same} == {k: kept[k] for k in same}

"""A finished query keeps what its readers use, compactly, and none of the keys only a
running query needs (shared/stores/retire.py), on the real Redis of the test stack."""

from __future__ import annotations

import json
import time

import pytest

from producers.api.pages.query import query_view
from producers.api.pages.timeline import timeline
from shared import naming
from shared.journey.dispatch import PlanDispatch
from shared.models import Plan, Query
from shared.stores.retire import DONE_TTL_S
from shared.journey.steps import error_result, step_base

pytestmark = pytest.mark.integration

TESLA = "Tesla Q3 2023 Financial Report"
PLAN = {"steps": [
    {"id": "E1", "operation": "GET", "source": TESLA, "output_var": "$R"},
    {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": r"yield rate of (\d+\.\d+)%",
     "output_var": "$Y"}],
    "answer": "Battery yield was {{ Y }}%."}


def working_keys(r, qid: str) -> list[str]:
    """The keys of `qid` other than its record, its step results and its done list."""
    kept = {naming.run_key(qid), naming.steps_key(qid), naming.done_key(qid)}
    return sorted(k for k in r.scan_iter(f"chordal:*{qid}*", count=1000) if k not in kept)


def compute(step_id: str, expression: str = "1") -> dict:
    return {"id": step_id, "operation": "COMPUTE", "expression": expression,
            "output_var": f"${step_id}"}


def test_an_answered_query_keeps_its_dispatch_in_its_record_and_no_working_keys(pipeline):
    record = pipeline.ask("What was Tesla's battery yield?", PLAN)
    assert record.status == "done", record.error
    r, qid = pipeline.store.r, record.query_id
    assert working_keys(r, qid) == []
    assert 0 < r.ttl(naming.done_key(qid)) <= DONE_TTL_S or not r.exists(naming.done_key(qid))
    assert [(d.step_id, d.in_plan, d.dropped) for d in record.dispatch] == [
        ("E1", True, False), ("E2", True, False)]
    assert all(d.dispatched_at for d in record.dispatch)
    assert set(pipeline.store.dispatched(qid)) == {"E1", "E2"}
    assert pipeline.store.deliveries(qid) == {"plan": 1, "E1": 1, "E2": 1}
    assert pipeline.store.record(qid) == record  # read again: the same record

    rows = {row.step_id: row for row in timeline(record, now=time.time()).rows}
    assert rows["E1"].detail.startswith("wait ") and "run " in rows["E1"].detail
    assert {s.step_id for s in query_view(record).steps} == {"E1", "E2"}
    shown = pipeline.cli("show", qid)
    assert shown.returncode == 0, shown.stderr
    assert f"{qid}:E1" in shown.stdout and "Battery yield was 91.7" in shown.stdout


def test_a_stored_get_names_its_document_once_and_reads_back_whole(pipeline):
    record = pipeline.ask("What was Tesla's battery yield?", PLAN)
    assert record.status == "done", record.error
    r, qid = pipeline.store.r, record.query_id
    stored = r.hget(naming.steps_key(qid), "E1")
    assert stored.count(TESLA) == 1  # in `document`; the chosen candidate repeats none of it
    get = record.steps[0]
    chosen = get.candidates[0]
    assert chosen.verdict == "chosen" and chosen.reason == get.note
    assert chosen.model_dump(exclude={"verdict", "reason"}) == get.document.model_dump()
    shown = json.loads(pipeline.cli("show", qid, "--json").stdout)
    assert shown["steps"][0]["candidates"][0]["title"] == TESLA
    for field in ("query", "plan", "answer"):
        assert ":null" not in r.hget(naming.run_key(qid), field)


def test_ending_a_query_folds_its_graph_as_the_running_query_showed_it(bare_store):
    """A streamed reply's step sent and then left out, the final plan's steps, one step
    delivered twice: the record reads the same before and after the query ends, from the
    live graph and then from the run hash."""
    store, sent = bare_store, []
    query = Query(question="folded?")
    store.create(query)
    dispatch = PlanDispatch(store, query.id, "planner", sent.append, lambda q: None)
    store.count_delivery(naming.plan_action_id(query.id))
    dispatch.begin(time.time())
    dispatch.offer(Plan.model_validate({"steps": [compute("A")]}).steps[0])
    dispatch.begin(time.time())
    dispatch.close(Plan.model_validate({"steps": [compute("A", "2"), compute("B", "3")]}),
                   [], "streamed")
    for task in sent:
        store.count_delivery(task.action_id)
    store.count_delivery(sent[1].action_id)
    for task in sent[1:]:
        store.put_step(query.id, error_result(step_base(task), "TEST", "stored"))
    running = store.record(query.id)
    assert {d.step_id for d in running.dispatch} == {"A", "A_2", "B"}

    assert store.fail(query.id, "ended by the test")
    assert working_keys(store.r, query.id) == []
    ended = store.record(query.id)
    assert ended.dispatch == running.dispatch
    assert store.dispatched(query.id) == {d.step_id: d.dispatched_at for d in running.dispatch}
    assert store.deliveries(query.id) == {"plan": 1, "A": 1, "A_2": 2, "B": 1}


def test_a_plan_closed_after_its_query_was_cancelled_leaves_no_graph_behind(bare_store):
    store, sent = bare_store, []
    query = Query(question="cancelled while planning?")
    store.create(query)
    dispatch = PlanDispatch(store, query.id, "planner", sent.append, lambda q: None)
    dispatch.begin(time.time())
    dispatch.offer(Plan.model_validate({"steps": [compute("A")]}).steps[0])
    assert store.cancel([query.id], "cancelled by the test") == ["cancelled"]
    dispatch.offer(Plan.model_validate({"steps": [compute("A"), compute("B")]}).steps[1])
    dispatch.close(Plan.model_validate({"steps": [compute("A"), compute("C")]}), [], "streamed")
    assert [t.step.id for t in sent] == ["A"]  # nothing sent once it was cancelled
    assert working_keys(store.r, query.id) == []
    record = store.record(query.id)
    assert record.status == "cancelled"
    assert [(d.step_id, bool(d.dispatched_at)) for d in record.dispatch] == [
        ("A", True), ("C", False)]

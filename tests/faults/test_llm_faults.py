"""The model endpoint misbehaving (429, 500, timeouts, malformed output) while several
queries plan at once: each query ends once, answered or failed with the reason. And a
planner SIGKILLed while it waits on the model: its task goes back to the `plan` queue
(shared/broker/recovery.py) and the query is planned again and answered."""

from __future__ import annotations

import json

import pytest

from .conftest import (assert_one_outcome, kill_worker, plan, start_worker, wait_all,
                       wait_for)

pytestmark = pytest.mark.faults
GOOD = {"reasoning": "The report states the yield.", "plan": plan()}


def test_429_500_timeouts_and_malformed_replies_each_end_the_query_once_with_a_reason(
        faulty_stack, fake_llm):
    p = faulty_stack(llm_base_url=f"{fake_llm.base_url}/v1", llm_model="replay",
                     llm_max_retries=1, llm_timeout_s=1.0, plan_attempts=2)
    fake_llm.load([
        {"match": "alpha", "fault": "429", "retry_after": 0.2},
        {"match": "alpha", "content": GOOD},
        {"match": "bravo", "fault": "500", "retry_after": 0.1},
        {"match": "bravo", "fault": "500", "retry_after": 0.1},
        {"match": "charlie", "fault": "slow", "delay": 3, "content": json.dumps(GOOD)},
        {"match": "charlie", "fault": "slow", "delay": 3, "content": json.dumps(GOOD)},
        {"match": "delta", "fault": "malformed"},
        {"match": "delta", "fault": "malformed"},
    ])
    queries = {name: p.submit(f"{name}: Tesla battery yield Q3 2023?", deadline_s=30)
               for name in ("alpha", "bravo", "charlie", "delta")}
    records = wait_all(p.store, [q.id for q in queries.values()], 40)
    assert_one_outcome(p.store, records)
    alpha, bravo, charlie, delta = (records[q.id] for q in queries.values())

    assert alpha.status == "done" and alpha.answer.text.startswith("Battery yield was 9")
    assert alpha.llm_calls[0].retries == 1

    assert bravo.status == "failed"
    assert bravo.error.startswith("LLM planning failed") and "HTTP 500" in bravo.error
    assert charlie.status == "failed"
    assert charlie.error.startswith("LLM planning failed") and "tim" in charlie.error.lower()
    assert delta.status == "failed"
    assert delta.error.startswith("the LLM planner wrote 2 plans and none passed the checks")
    assert [pr.code for pr in delta.problems] == ["bad_json"]
    assert all(r.answer is None for r in (bravo, charlie, delta))


def test_a_planner_killed_while_the_model_thinks_has_the_query_planned_again(
        faulty_stack, fake_llm):
    p = faulty_stack(llm_base_url=f"{fake_llm.base_url}/v1", llm_model="replay",
                     llm_max_retries=0, llm_timeout_s=60, worker_dead_after_s=3)
    fake_llm.load([
        {"match": "echo", "fault": "slow", "delay": 60, "content": json.dumps(GOOD)},
        {"match": "echo", "content": GOOD},
    ])
    query = p.submit("echo: Tesla battery yield Q3 2023?", deadline_s=60)
    wait_for(fake_llm.log, 20, "the planner to wait on the slow reply")
    kill_worker(p, "planner")
    start_worker(p, "planner")

    record = p.store.wait(query.id, 45)
    assert_one_outcome(p.store, {query.id: record})
    assert record.status == "done", record.error
    assert record.answer.text.startswith("Battery yield was 9")
    assert len(fake_llm.log()) == 2  # asked again by the fresh planner
    assert [c.status for c in record.llm_calls] == ["ok"]  # the killed call never returned


def test_a_planner_killed_mid_stream_is_redelivered_and_no_step_runs_twice(
        faulty_stack, fake_llm):
    """Streamed planning: the planner has sent the first steps when it is SIGKILLed; its
    redelivery asks the model again, finds those steps in the dispatch graph (same
    operation and arguments) and sends only the rest; the finalizer runs once."""
    from ..integration.test_streaming import SIX, reply

    p = faulty_stack(llm_base_url=f"{fake_llm.base_url}/v1", llm_model="replay",
                     llm_max_retries=0, llm_timeout_s=60, worker_dead_after_s=3)
    fake_llm.load([{"match": "Northwind", "content": reply(SIX), "token_delay": 0.1},
                   {"match": "Northwind", "content": reply(SIX)}])
    query = p.submit("How did Tesla's and Northwind Motors' Q3 2023 revenue compare?",
                     deadline_s=90)
    sent = lambda: p.store.dispatched(query.id)  # noqa: E731
    wait_for(lambda: len(sent()) >= 2, 30, "the streaming planner to send two steps")
    kill_worker(p, "planner")
    first = set(sent())
    start_worker(p, "planner")

    record = p.store.wait(query.id, 60)
    assert_one_outcome(p.store, {query.id: record})
    assert record.status == "done", record.error
    assert record.finalizer_runs == 1 and "$23.35[1] billion" in record.answer.text
    assert len(fake_llm.log()) == 2  # asked again by the fresh planner
    assert [s.id for s in record.plan.steps] == [f"E{i}" for i in range(1, 7)]
    assert {d.step_id for d in record.dispatch} == {f"E{i}" for i in range(1, 7)}
    assert all(d.in_plan for d in record.dispatch)  # nothing renamed, nothing sent twice
    assert all(s.attempt == 1 for s in record.steps)  # each step task delivered once
    assert first <= {s.step_id for s in record.steps}

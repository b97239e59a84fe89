"""A model that trickles or floods, through real planner, executor and finalizer processes
and the replay server: a reply is stopped at its query's deadline, so the planner threads
are free for the queries behind it; the planner makes no attempt once its query has
ended; a reply that ignores `max_tokens` is cut there (streamed) or refused unread
(whole); and the plan schema the model is held to bounds the steps to CHORDAL_MAX_STEPS."""

from __future__ import annotations

import json

import pytest

from ..conftest import wait_idle
from .conftest import assert_one_outcome, plan, wait_all, wait_for

pytestmark = pytest.mark.faults
GOOD = {"reasoning": "The report states the yield.", "plan": plan()}
FLOOD = 200_000_000
"""Characters a flooding server sends: the 200 MB a hostile tester's server sent."""


def llm_stack(faulty_stack, fake_llm, **settings):
    return faulty_stack(**{"llm_base_url": f"{fake_llm.base_url}/v1", "llm_model": "replay",
                           "llm_max_retries": 0, "llm_timeout_s": 30, **settings})


def requests_for(fake_llm, word: str) -> list[dict]:
    return [r for r in fake_llm.log() if word in r["messages"][-1]["content"]]


def test_a_trickling_model_is_stopped_at_the_deadline_and_the_query_behind_it_is_answered(
        faulty_stack, fake_llm):
    p = llm_stack(faulty_stack, fake_llm)
    trickle = {"content": GOOD, "token_delay": 1.0}  # about 150 tokens: 150 s a reply
    fake_llm.load([{"match": "slow one", **trickle}, {"match": "slow two", **trickle},
                   {"match": "slow", **trickle}, {"match": "slow", **trickle},
                   {"match": "normal", "content": GOOD}])
    slow = [p.submit(f"{name}: Tesla battery yield Q3 2023?", deadline_s=4)
            for name in ("slow one", "slow two")]
    wait_for(lambda: len(requests_for(fake_llm, "slow")) == 2, 20,
             "both planner threads to wait on the trickling model")
    normal = p.submit("normal: Tesla battery yield Q3 2023?", deadline_s=40)

    records = wait_all(p.store, [q.id for q in (*slow, normal)], 45)
    assert_one_outcome(p.store, records)
    answered = records[normal.id]
    assert answered.status == "done", answered.error
    assert answered.answer.text.startswith("Battery yield was 9")
    for query in slow:
        record = records[query.id]
        assert record.status == "failed"
        (call,) = record.llm_calls
        assert call.status == "error" and call.error.startswith("stopped: "), call.error
    wait_idle(p.store.r, 30)
    assert len(requests_for(fake_llm, "slow")) == 2  # no attempt after the deadline


def test_the_planner_stops_reading_and_makes_no_attempt_once_its_query_has_failed(
        faulty_stack, fake_llm):
    p = llm_stack(faulty_stack, fake_llm, plan_attempts=3)
    unusable = {"match": "cancel", "content": "this is not a plan " * 12, "token_delay": 0.1}
    fake_llm.load([unusable, unusable, unusable])  # each about 6 s, and fails its checks
    query = p.submit("cancel me: Tesla battery yield Q3 2023?", deadline_s=120)
    wait_for(fake_llm.log, 20, "the planner to ask the model")
    assert p.store.fail(query.id, "cancelled by its user")

    wait_idle(p.store.r, 60)  # the planner task has ended
    assert len(fake_llm.log()) == 1
    record = p.store.record(query.id)
    assert (record.status, record.error) == ("failed", "cancelled by its user")
    assert [(c.status, c.error) for c in record.llm_calls] == [
        ("error", "stopped: the query is already failed")]


def test_a_streamed_flood_is_cut_at_max_tokens_and_the_plan_before_it_still_answers(
        faulty_stack, fake_llm):
    p = llm_stack(faulty_stack, fake_llm)
    flood = {"match": "flood", "fault": "flood", "chars": FLOOD, "content": json.dumps(GOOD)}
    fake_llm.load([{**flood, "piece": 65536}, flood])  # the reply, then the prompt count
    query = p.submit("flood: Tesla battery yield Q3 2023?", deadline_s=60)

    record = p.store.wait(query.id, 60)
    assert record.status == "done", record.error
    assert record.answer.text.startswith("Battery yield was 9")
    (call,) = record.llm_calls
    assert (call.status, call.finish_reason, call.streamed) == ("ok", "length", True)
    assert call.cut_by_client.startswith("the server sent more than ")
    assert call.cut_by_client.endswith(" bytes for a reply of at most 1024 tokens: it "
                                       "ignores max_tokens")
    assert all(r["sent"] < FLOOD / 10 for r in fake_llm.log())  # nor the count read whole


def test_a_whole_reply_that_ignores_max_tokens_fails_the_query_unread(faulty_stack, fake_llm):
    p = llm_stack(faulty_stack, fake_llm, llm_stream=False)
    fake_llm.load([{"match": "flood", "fault": "flood", "chars": FLOOD,
                    "content": json.dumps(GOOD)}])
    query = p.submit("flood: Tesla battery yield Q3 2023?", deadline_s=60)

    record = p.store.wait(query.id, 60)
    assert record.status == "failed" and record.answer is None
    assert record.error.startswith("LLM planning failed: LLM call (plan 1) failed: the reply "
                                   f"from {fake_llm.base_url}/v1 was not read: the server "
                                   "sent more than ")
    assert record.error.endswith("for a reply of at most 1024 tokens: it ignores max_tokens")
    assert fake_llm.log()[0]["sent"] < FLOOD / 10


def test_the_plan_schema_bounds_the_steps_to_chordal_max_steps(faulty_stack, fake_llm):
    p = llm_stack(faulty_stack, fake_llm, max_steps=5)
    fake_llm.load([{"content": GOOD}])
    record = p.ask("Tesla battery yield Q3 2023?")
    assert record.status == "done", record.error
    schema = fake_llm.log()[0]["response_format"]["json_schema"]["schema"]
    steps = schema["$defs"]["Plan"]["properties"]["steps"]
    assert (steps["minItems"], steps["maxItems"]) == (1, 5)

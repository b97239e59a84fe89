"""LLM planning end to end: real Redis, real planner/executor/finalizer processes, and the
replay server standing in for the model (tests/integration/conftest.py)."""

from __future__ import annotations

import json

import pytest

from shared.llm.form_choice import FormChoice
from shared.llm.forms import request_fields
from shared.planners.prompts import REPLY_SCHEMA

pytestmark = pytest.mark.integration
QUESTION = "What was Tesla's battery yield rate in Q3 2023?"
GET = {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
       "temporal_scope": "2023-Q3", "output_var": "$R"}
GOOD = {"reasoning": "The Q3 2023 report states the yield; compare it with the 92% target.",
        "plan": {"domain": "finance", "steps": [
            GET,
            {"id": "E2", "operation": "EXTRACT", "source": "$R",
             "pattern": r"battery yield rate of (\d+\.\d+)%", "output_var": "$Y"},
            {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}],
            "answer": "The battery yield rate was {{ Y }}%, {{ GAP }} points from the target."}}
NO_GROUP = {"reasoning": "…", "plan": {"steps": [
    GET, {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": r"yield rate of \d+%",
          "output_var": "$Y"}]}}
UNDEFINED = {"reasoning": "…", "plan": {"steps": [
    GET, {"id": "E2", "operation": "COMPUTE", "expression": "$YIELD - 92", "output_var": "$GAP"}]}}


def test_a_question_is_planned_by_the_llm_and_answered_by_the_workers(llm_pipeline):
    llm_pipeline.fake_llm.load([{"match": "battery yield", "content": GOOD}])
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "done", record.error
    assert record.planner == "llm"
    assert record.answer.text == ("The battery yield rate was 91.7[1]%, -0.3[1] points from "
                                  "the target.")
    (call,) = record.llm_calls
    assert call.purpose == "plan 1" and call.status == "ok" and call.model == "replay"
    assert call.prompt_tokens > 100 and call.completion_tokens > 10
    assert record.usage["prompt_tokens"] == call.prompt_tokens
    assert call.json_form == "json_schema"
    (request,) = llm_pipeline.fake_llm.log()
    assert request["response_format"] == request_fields("json_schema", REPLY_SCHEMA)[
        "response_format"]  # the strict form of the reply schema
    user = request["messages"][1]["content"]
    assert user.startswith(f"Question: {QUESTION}")
    assert "Tesla Q3 2023 Financial Report (period 2023-Q3, published 2023-10-18)" in user  # candidates from the store


def test_a_plan_that_fails_the_checks_goes_back_with_its_problems_and_the_fix_runs(llm_pipeline):
    llm_pipeline.fake_llm.load([{"match": "battery yield", "content": NO_GROUP},
                                {"match": "battery yield", "content": GOOD}])
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "done", record.error
    assert [c.purpose for c in record.llm_calls] == ["plan 1", "plan 2"]
    first, second = llm_pipeline.fake_llm.log()
    feedback = second["messages"][-1]["content"]
    assert "capture_groups" in feedback and '"step": "E2"' in feedback
    assert second["messages"][-2] == {"role": "assistant", "content": json.dumps(NO_GROUP)}
    assert "91.7" in record.answer.text


def test_three_bad_plans_fail_the_query_listing_the_last_ones_problems(llm_pipeline):
    llm_pipeline.fake_llm.load([{"content": NO_GROUP}, {"content": NO_GROUP},
                                {"content": UNDEFINED}])
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "failed"
    assert "wrote 3 plans and none passed the checks" in record.error
    assert [(p.step, p.code) for p in record.problems] == [("E2", "undefined_variable")]
    assert len(record.llm_calls) == 3 and len(llm_pipeline.fake_llm.log()) == 3
    assert record.plan is None
    # the GET every reply wrote well ran once, while the first reply streamed; the rest
    # of each plan waited for checks it never passed
    assert [(s.step_id, s.attempt) for s in record.steps] == [("E1", 1)]
    assert [(d.step_id, d.attempt, d.in_plan) for d in record.dispatch] == [("E1", 1, False)]


def test_an_endpoint_like_llama_cpp_python_gets_the_plan_schema_in_the_form_it_accepts(
        llm_pipeline):
    forms = FormChoice(llm_pipeline.settings, llm_pipeline.store.r, "")
    llm_pipeline.fake_llm.load([
        {"server": {"accepts": ["json_object_schema", "json_object"],
                    "refuses_with": "llama_cpp_python"}},
        {"match": "battery yield",  # as a strict reply: null for the answer it leaves out
         "content": {**GOOD, "plan": {**GOOD["plan"], "answer": None}}},
        {"match": "battery yield", "content": GOOD}])
    try:
        first, second = llm_pipeline.ask(QUESTION), llm_pipeline.ask(QUESTION)
        assert forms.known() == "json_object_schema"  # stored for every worker
    finally:
        llm_pipeline.store.r.delete(forms.key)
    assert first.status == second.status == "done", (first.error, second.error)
    assert [c.json_form for c in first.llm_calls + second.llm_calls] == [
        "json_object_schema"] * 2
    assert first.llm_calls[0].retries == 0
    refused, *accepted = llm_pipeline.fake_llm.log()
    assert (refused["form"], refused["status"]) == ("json_schema", 500)
    assert [(r["form"], r["status"]) for r in accepted] == [("json_object_schema", 200)] * 2
    assert accepted[0]["response_format"]["schema"] == REPLY_SCHEMA
    shown = llm_pipeline.cli("show", first.query_id)
    assert "1 LLM calls (JSON asked for as json_object_schema)" in shown.stdout, shown.stderr


def test_a_429_and_a_500_from_the_endpoint_are_retried_and_the_query_answered(llm_pipeline):
    llm_pipeline.fake_llm.load([{"fault": "429", "retry_after": 1},
                                {"fault": "500", "retry_after": 0.2}, {"content": GOOD}])
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "done", record.error
    (call,) = record.llm_calls
    assert call.retries == 2 and call.status == "ok"
    assert [r["status"] for r in llm_pipeline.fake_llm.log()] == [429, 500, 200]


def test_an_endpoint_failing_past_its_retries_fails_the_query_with_the_reason(llm_pipeline):
    llm_pipeline.fake_llm.load([{"fault": "500", "retry_after": 0.05}] * 4)
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "failed"
    assert record.error.startswith("LLM planning failed: LLM call (plan 1) failed after 4 "
                                   "HTTP attempts: HTTP 500")
    (call,) = record.llm_calls
    assert call.status == "error" and call.retries == 3
    # the planner worker survived: the next query is planned and answered
    llm_pipeline.fake_llm.load([{"content": GOOD}])
    assert llm_pipeline.ask(QUESTION).status == "done"


def test_malformed_json_counts_as_a_failed_attempt_with_a_clear_problem(llm_pipeline):
    llm_pipeline.fake_llm.load([{"fault": "malformed"}, {"content": GOOD}])
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "done", record.error
    assert len(record.llm_calls) == 2
    feedback = llm_pipeline.fake_llm.log()[1]["messages"][-1]["content"]
    assert '"code": "bad_json"' in feedback and "the reply is not valid JSON" in feedback


def test_a_plan_given_with_the_query_is_run_without_asking_the_llm(llm_pipeline):
    llm_pipeline.fake_llm.load([])
    record = llm_pipeline.ask("given", GOOD["plan"])
    assert record.status == "done" and record.planner == "user"
    assert record.llm_calls == [] and llm_pipeline.fake_llm.log() == []

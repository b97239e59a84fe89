"""The LLM planner: its prompt, how it reads replies, and the repair loop against the
real replay server."""

from __future__ import annotations

import json

import pytest

from shared.errors import PlanError
from shared.llm.client import LLMClient
from shared.planners.llm import llm_plan, read_reply
from shared.planners.prompts import EXAMPLE_STEPS, WORKED_EXAMPLE, plan_messages, system_prompt
from shared.models import OPERATIONS
from shared.plan.parse import parse_plan

GOOD = {"reasoning": "Fetch the Q3 report, read the yield.", "plan": {"steps": [
    {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report", "output_var": "$R"},
    {"id": "E2", "operation": "EXTRACT", "source": "$R",
     "pattern": r"battery yield rate of (\d+\.\d+)%", "output_var": "$Y"}],
    "answer": "The yield was {{ Y }}%."}}
NO_GROUP = {"reasoning": "…", "plan": {"steps": [
    {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report", "output_var": "$R"},
    {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": r"yield rate of \d+%",
     "output_var": "$Y"}]}}


def test_the_prompts_examples_cover_all_nine_operations_and_are_valid_plans():
    assert sorted({s["operation"] for s in EXAMPLE_STEPS}) == sorted(OPERATIONS)
    parse_plan({"steps": EXAMPLE_STEPS})
    parse_plan(WORKED_EXAMPLE["plan"])
    prompt = system_prompt(max_steps=12)
    for op in OPERATIONS:
        assert f"- {op}: " in prompt
    assert "exactly one capture group" in prompt and "At most 12 steps" in prompt
    assert '"reasoning"' in prompt


def test_the_question_and_candidate_documents_go_in_the_user_message():
    _, user = plan_messages("What was X?", ["Tesla Q3 2023 Financial Report (2023-09-30)"])
    assert user["content"].startswith("Question: What was X?")
    assert "- Tesla Q3 2023 Financial Report (2023-09-30)" in user["content"]


def test_a_reply_with_reasoning_a_bare_plan_or_rewoo_text_all_give_the_plan():
    assert read_reply(json.dumps(GOOD))[0].steps[1].pattern == r"battery yield rate of (\d+\.\d+)%"
    assert len(read_reply("```json\n" + json.dumps(GOOD["plan"]) + "\n```")[0].steps) == 2
    rewoo = "Plan: fetch.\n#E1 = Wikipedia[Tesla Q3 2023 Financial Report]\n"
    assert read_reply(rewoo)[0].steps[0].source == "Tesla Q3 2023 Financial Report"
    prose = "Here you go: " + json.dumps(GOOD) + " Hope it helps."
    assert len(read_reply(prose)[0].steps) == 2


def test_a_raw_newline_in_a_string_which_grammars_let_a_model_write_is_read():
    written = json.dumps({**GOOD, "reasoning": "line one\nline two"}).replace("\\n", "\n")
    assert "line one\nline two" in written  # a raw newline, invalid in strict JSON
    assert len(read_reply(written)[0].steps) == 2
    assert len(read_reply("Here: " + written)[0].steps) == 2


@pytest.mark.parametrize("reply, code, says", [
    ("I cannot help with that.", "bad_json", "has no JSON object in it"),
    ('Sure! {"reasoning": "x", "plan": {"steps": [', "bad_json", "not valid JSON"),
    ('{"reasoning": "only thoughts"}', "bad_field", "no field 'plan'"),
    ('{"reasoning": "x", "plan": [1, 2]}', "bad_field", "is a JSON list"),
    ('{"plan": {"steps": [' + "[" * 5000, "bad_json", "nested too deeply"),
    ('Here: {"plan": {"steps": [' + "[" * 5000 + "]" * 5000 + "]}}", "bad_json",
     "nested too deeply"),
])
def test_a_reply_without_a_usable_plan_is_one_problem_saying_what_to_send(reply, code, says):
    with pytest.raises(PlanError) as caught:
        read_reply(reply)
    (problem,) = caught.value.problems
    assert problem.code == code and says in problem.message
    assert '{"reasoning": "…", "plan": {' in problem.message


def test_llm_plan_sends_the_problems_back_and_returns_the_fixed_plan(fake_llm, llm_settings):
    fake_llm.load([{"content": NO_GROUP}, {"content": GOOD}])
    calls = []
    plan, repairs = llm_plan("What was Tesla's yield?", LLMClient(llm_settings),
                             attempts=3, on_call=calls.append)
    assert plan.planner == "llm" and [s.id for s in plan.steps] == ["E1", "E2"]
    assert [c.purpose for c in calls] == ["plan 1", "plan 2"]
    retry = fake_llm.log()[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == json.dumps(NO_GROUP)
    assert '"step": "E2", "code": "capture_groups"' in retry[3]["content"]


def test_a_number_group_that_captures_a_lone_comma_goes_back_to_the_model(fake_llm,
                                                                          llm_settings):
    comma = json.loads(json.dumps(GOOD))
    comma["plan"]["steps"][1]["pattern"] = r"battery yield rate.*?([\d,]+)"
    fake_llm.load([{"content": comma}, {"content": GOOD}])
    plan, _ = llm_plan("What was Tesla's yield?", LLMClient(llm_settings), attempts=2)
    assert plan.steps[1].pattern == r"battery yield rate of (\d+\.\d+)%"
    feedback = fake_llm.log()[1]["messages"][3]["content"]
    assert '"step": "E2", "code": "number_group"' in feedback
    assert "without a digit" in feedback and r"([\\d,]+)" not in feedback


def test_llm_plan_gives_up_after_its_attempts_with_the_last_problems(fake_llm, llm_settings):
    fake_llm.load([{"content": NO_GROUP}, {"content": NO_GROUP}])
    calls = []
    with pytest.raises(PlanError) as caught:
        llm_plan("q", LLMClient(llm_settings), attempts=2, on_call=calls.append)
    assert "wrote 2 plans and none passed the checks" in caught.value.message
    assert [p.code for p in caught.value.problems] == ["capture_groups"]
    assert len(calls) == 2


def test_a_plan_longer_than_the_size_limit_is_sent_back_as_too_large(fake_llm, llm_settings):
    long = {**GOOD, "plan": {**GOOD["plan"], "answer": "The yield was {{ Y }}%. " * 400}}
    fake_llm.load([{"content": long}, {"content": GOOD}])
    unbounded = llm_settings.model_copy(update={"llm_max_tokens": 100_000})
    plan, _ = llm_plan("What was Tesla's yield?", LLMClient(unbounded), attempts=2,
                       max_chars=5_000)
    assert plan.answer == "The yield was {{ Y }}%."
    retry = fake_llm.log()[1]["messages"]
    assert '"code": "too_large"' in retry[3]["content"]
    assert "CHORDAL_MAX_PLAN_CHARS" in retry[3]["content"]
    assert len(retry[2]["content"]) < 5_100  # its own reply goes back cut to the limit


def test_a_plan_cut_at_max_tokens_is_sent_back_saying_it_was_cut(fake_llm, llm_settings):
    long = {**GOOD, "plan": {**GOOD["plan"], "answer": "The yield was {{ Y }}%. " * 40}}
    fake_llm.load([{"content": long}, {"content": GOOD}])
    settings = llm_settings.model_copy(update={"llm_max_tokens": 100})
    plan, _ = llm_plan("What was Tesla's yield?", LLMClient(settings), attempts=2)
    assert plan.answer == "The yield was {{ Y }}%."
    retry = fake_llm.log()[1]["messages"][3]["content"]
    assert '"code": "bad_json"' in retry and "cut at 100 tokens" in retry


def test_a_template_stating_its_own_figures_goes_back_and_the_cited_plan_is_used(
        fake_llm, llm_settings):
    invented = {**GOOD, "plan": {**GOOD["plan"], "answer": "Battery yield was 9.2%."}}
    fake_llm.load([{"content": invented}, {"content": GOOD}])
    plan, _ = llm_plan("What was Tesla's battery yield in Q3 2023?", LLMClient(llm_settings),
                       attempts=2)
    assert plan.answer == "The yield was {{ Y }}%."
    retry = fake_llm.log()[1]["messages"][3]["content"]
    assert '"code": "uncited_answer"' in retry and "{{ Y }}" in retry
    assert '"code": "uncited_figure"' in retry and "figure 9.2 " in retry

"""The real-model bench's pure parts: its cases load and name real corpus values, the
prompt variants are shorter and still ask for the plan, the table reports what ran."""

import json
from pathlib import Path

from shared.evaluation import judge, load_cases
from shared.llm.client import LLMClient
from shared.planners.llm import llm_plan
from shared.planners.prompts import PROMPT_VARIANTS, system_prompt

from bench.real_model import table
from bench.real_model.planning import RecordingClient, parses

from ..shared.llm.conftest import llm_settings  # noqa: F401 - the fixtures, reused
from ..integration.conftest import fake_llm  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "bench" / "real_model" / "cases.jsonl"


def test_every_case_loads_and_its_value_is_in_the_bundled_corpus():
    corpus = (ROOT / "shared" / "data" / "corpus.jsonl").read_text()
    cases = load_cases(CASES)
    assert len(cases) >= 30 and sum(c.abstain for c in cases) >= 3
    for case in cases:
        if not case.abstain:
            assert case.expect["value"] in corpus, case.id


def test_a_case_planned_by_nothing_is_right_only_when_it_must_abstain():
    cases = {c.id: c for c in load_cases(CASES)}
    assert judge(cases["A01"], None).outcome == "correct"
    assert judge(cases["R01"], None).outcome == "abstained"


def test_each_shorter_variant_is_shorter_and_still_shows_the_reply_form():
    sizes = [len(system_prompt(variant=v)) for v in PROMPT_VARIANTS]
    assert sizes == sorted(sizes, reverse=True)
    for v in PROMPT_VARIANTS:
        assert '"reasoning"' in system_prompt(variant=v) and "EXTRACT" in system_prompt(variant=v)


def test_the_quality_table_gives_shares_of_the_cases_that_ran():
    rows = [{"parsed": [False, True], "valid_attempt": 2, "planning_s": 3.0, "tokens": 900,
             "outcome": "correct"},
            {"parsed": [False, False, False], "valid_attempt": None, "planning_s": 5.0,
             "tokens": 1500, "outcome": "abstained"}]
    s = table.summary(rows)
    assert (s["parse"], s["valid_first"], s["valid_within"], s["correct"]) == (0.2, 0, 0.5, 0.5)
    line = table.quality_table({("auto", "full"): rows}, 3)[-1]
    assert line == "| auto | full | 2 | 5 | 20% | 0% | 50% | 50% (0) of 2 | 4.0 | 1200 |"
    json.dumps(s)  # the summary goes into real_model.json


def test_the_recording_client_plans_like_the_client_it_wraps_a_cut_reply_included(
        fake_llm, llm_settings):
    """The bench plans through RecordingClient: everything the planner asks of a client
    (the reply cap it names when a reply was cut) must be there, and every reply kept."""
    good = {"reasoning": "Fetch, read.", "plan": {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
         "output_var": "$R"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R",
         "pattern": r"battery yield rate of (\d+\.\d+)%", "output_var": "$Y"}],
        "answer": "The yield was {{ Y }}%."}}
    long = {**good, "plan": {**good["plan"], "answer": "The yield was {{ Y }}%. " * 40}}
    fake_llm.load([{"content": long}, {"content": good}])
    client = RecordingClient(LLMClient(llm_settings.model_copy(update={"llm_max_tokens": 100})))
    plan, _ = llm_plan("What was Tesla's yield?", client, attempts=2)
    assert plan.answer == "The yield was {{ Y }}%."
    assert len(client.replies) == 2 and not parses(client.replies[0].content)
    assert "cut at 100 tokens" in fake_llm.log()[1]["messages"][3]["content"]

"""Judging answers against known ones: the same figure in other words is right, another
figure or the right figure from another document is wrong, and a case that must
abstain is right only when nothing was answered."""

from __future__ import annotations

import json

import pytest

from shared.errors import InputError
from shared.evaluation import Case, figure, judge, load_cases, same_value, score
from shared.models import Evidence, Plan, RunRecord, StepResult

PLAN = {"steps": [
    {"id": "E1", "operation": "GET", "source": "Acme Annual Report 2024", "output_var": "$R"},
    {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": "margin was (\\d+)%",
     "output_var": "$M"}]}


def record(value=None, doc="ar-2024", status="ok", confidence="pattern") -> RunRecord:
    steps = [StepResult(action_id="q:E1", step_id="E1", operation="GET", status="ok")]
    extract = StepResult(action_id="q:E2", step_id="E2", operation="EXTRACT", status=status,
                         value=value, confidence=confidence,
                         document=Evidence(doc_id=doc, title="T") if doc else None,
                         error_code=None if status == "ok" else "NO_MATCH")
    return RunRecord(query_id="q", question="?", status="done", plan=Plan.model_validate(PLAN),
                     steps=steps + [extract])


def case(**expect) -> Case:
    return Case(id="P1", kind="plan", question="?", plan=PLAN, expect=expect)


@pytest.mark.parametrize("got, expected", [
    ("11.2", "11.2"), ("11.2%", "11.2 %"), ("0.61 million", "0.61 million TEU"),
    ("7.35 billion", "NVK 7.35 billion"), ("$1,842 million", "1,842 million"),
    ("197.5亿元", "人民币197.5亿元"), ("March 14, 2025", "2025-03-14"),
])
def test_the_same_figure_in_other_words_is_the_same_value(got, expected):
    assert same_value(got, expected)


@pytest.mark.parametrize("got, expected", [
    ("11.0", "11.2"), ("11.2", "11.2%"), ("1.42 million", "1.42 billion"),
    ("2025-03-15", "2025-03-14"),
])
def test_another_figure_is_another_value(got, expected):
    assert not same_value(got, expected)


def test_a_figure_reads_its_scale_and_percent_sign():
    assert figure("rose to 1.42 million TEU") == (figure("1,420,000")[0], False)
    assert figure("margin of 9.8 per cent")[1] is True


def test_the_right_figure_from_another_document_is_wrong():
    verdict = judge(case(var="M", value="11", doc="ar-2024"), record("11", doc="ar-2024-draft"))
    assert verdict.outcome == "wrong" and "wrong document" in verdict.detail


def test_a_failed_or_fallen_back_step_is_withheld_not_answered():
    assert judge(case(var="M", value="11"), record(status="error")).outcome == "abstained"
    assert judge(case(var="M", value="11"), record("0", confidence="fallback")).outcome == (
        "abstained")


def test_a_case_that_must_abstain_is_right_only_when_nothing_was_answered():
    assert judge(case(abstain=True), record(status="error")).outcome == "correct"
    assert judge(case(abstain=True), record("11")).outcome == "wrong"


def test_the_score_counts_answerable_and_must_abstain_cases_apart():
    verdicts = [judge(case(var="M", value="11", doc="ar-2024"), record("11")),
                judge(case(var="M", value="12"), record("11")),
                judge(case(abstain=True), record(status="error"))]
    assert score(verdicts)["plan"] == {"cases": 3, "answered_right": 1, "answered_wrong": 1,
                                       "missed": 0, "abstain_cases": 1, "abstained_right": 1,
                                       "abstain_wrong": 0}


def test_a_bad_case_line_names_the_line_and_the_fields(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "Q1", "kind": "question", "question": "?",
                                "expect": {}}) + "\n" + json.dumps({"id": "Q2"}) + "\n")
    with pytest.raises(InputError, match="line 2: not a case"):
        load_cases(path)

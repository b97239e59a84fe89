"""`chordal ask` tells a script what it got by its exit code: 0 for a complete answer, 3
for an answer that says what was not found (or answers only part of the question), 1
for a query that failed, 2 for bad input; and the record says the heuristic planner
answered even when it abstained. The real CLI against real workers and a real Redis."""

from __future__ import annotations

import json

import pytest

from shared.models import RunRecord

pytestmark = pytest.mark.integration


def ask(pipeline, *args):
    result = pipeline.cli("ask", *args, "--json")
    record = RunRecord.model_validate_json(result.stdout) if result.stdout.strip() else None
    return result, record


def test_a_complete_answer_exits_0(pipeline):
    result, record = ask(pipeline, "What was Tesla's battery yield rate in Q3 2023?")
    assert result.returncode == 0, result.stderr
    assert record.answer.complete and "91.7" in record.answer.text


def test_a_question_no_document_answers_exits_3_and_the_record_names_the_heuristic_planner(
        pipeline):
    result, record = ask(pipeline, "What was Tesla's battery yield rate in Q1 2023?")
    assert result.returncode == 3, result.stderr
    assert record.status == "done" and not record.answer.complete
    assert record.answer.text.startswith("Not found.")
    assert record.planner == "heuristic" and record.plan is None


def test_an_answer_whose_step_found_nothing_exits_3(pipeline, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"},
        {"id": "E2", "operation": "GET", "source": "Tesla Q4 2031 Financial Report"}],
        "answer": "Q3: {{ E1 }}; Q4: {{ E2 }}"}))
    result, record = ask(pipeline, "Tesla's Q3 and Q4 reports?", "--plan", str(plan))
    assert result.returncode == 3, result.stderr
    assert record.status == "done" and record.answer.missing
    assert record.planner == "user"


def test_a_query_that_fails_exits_1_not_3(pipeline):
    result, record = ask(pipeline, "What was Tesla's battery yield rate in Q3 2023?",
                         "--timeout", "0.001")
    assert result.returncode == 1, result.stderr
    assert record.status == "failed"


def test_bad_input_still_exits_2(pipeline):
    result, _ = ask(pipeline, "What was Tesla's battery yield rate?", "--mode", "sideways")
    assert result.returncode == 2

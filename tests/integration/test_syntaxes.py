"""The three plan syntaxes run the same way through `chordal ask --plan` and real workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.models import RunRecord

pytestmark = pytest.mark.integration
PLANS = Path(__file__).resolve().parents[2] / "shared" / "data" / "plans"


@pytest.mark.parametrize("name", ["two_branch.json", "two_branch.rewoo.txt",
                                  "two_branch.llmcompiler.txt"])
def test_each_syntax_runs_the_two_branch_plan_to_the_same_numbers(pipeline, name):
    result = pipeline.cli("ask", "How did Tesla's Q3 2023 revenue compare with Northwind's?",
                          "--plan", str(PLANS / name), "--json")
    assert result.returncode == 0, result.stderr
    record = RunRecord.model_validate_json(result.stdout)
    assert record.status == "done" and record.answer.complete
    values = sorted(s.value for s in record.steps if s.operation in ("EXTRACT", "COMPUTE"))
    assert values == sorted(["23.35", "9.84", "13.51"])
    assert "23.35[1]" in record.answer.text and "9.84[2]" in record.answer.text


def test_a_repaired_plan_records_its_repairs_in_the_run_record(pipeline, tmp_path):
    plan = tmp_path / "plan.txt"
    plan.write_text(
        '1. extract("Tesla Q3 2023 Financial Report", "battery yield rate of (\\\\d+\\\\.\\\\d+)%")\n'
        "2. join()\n")
    result = pipeline.cli("ask", "Tesla yield?", "--plan", str(plan), "--json")
    assert result.returncode == 0, result.stderr
    record = RunRecord.model_validate_json(result.stdout)
    assert record.repairs, "the missing GET should have been inserted and recorded"
    assert [s.operation for s in record.steps] == ["GET", "EXTRACT"]
    assert record.steps[1].value == "91.7"


def test_debug_explains_a_failed_extract_with_a_pattern_that_would_match(pipeline):
    record = pipeline.ask("debug me", {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report", "output_var": "$D"},
        {"id": "E2", "operation": "EXTRACT", "source": "$D",
         "pattern": r"battery yield rate: (\d+) percent", "output_var": "$Y"}]})
    assert record.steps[1].error_code == "NO_MATCH"
    result = pipeline.cli("debug", record.query_id)
    assert result.returncode == 0, result.stderr
    assert "E2" in result.stdout and "battery yield rate" in result.stdout

"""IF: a condition over inputs picks `then` or `else`; one `$VAR` brings its value and evidence."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import Evidence, IfStep
from shared.tools.condition import run_if

REPORT = Evidence(doc_id="tesla-q3", title="Tesla Q3 2023 Financial Report")


def if_step(condition: str, then: str, otherwise: str = "") -> IfStep:
    return IfStep.model_validate({"id": "C1", "operation": "IF", "condition": condition,
                                  "then": then, "else": otherwise})


def test_a_true_condition_yields_the_literal_then_text(ok):
    out = run_if(if_step("$GAP < 0", "below target", "on target"), {"GAP": ok("E3", "-0.3")})
    assert out.value == "below target"
    assert out.inputs == ["q:E3"] and "true" in out.note


def test_a_false_condition_yields_the_else_text(ok):
    out = run_if(if_step("$GAP < 0", "below target", "on target"), {"GAP": ok("E3", "0.4")})
    assert out.value == "on target" and "false" in out.note


def test_a_branch_that_is_one_variable_yields_its_value_and_evidence(ok):
    inputs = {"Y": ok("E2", "91.7", document=REPORT), "T": ok("E4", "92")}
    out = run_if(if_step("$Y >= 90", " $Y ", "$T"), inputs)
    assert (out.value, out.document) == ("91.7", REPORT)
    assert out.inputs == ["q:E2"]


def test_the_else_variable_records_both_the_condition_and_branch_inputs(ok):
    inputs = {"Y": ok("E2", "81.7", document=REPORT), "T": ok("E4", "92")}
    out = run_if(if_step("$Y >= 90", "$Y", "$T"), inputs)
    assert (out.value, out.document) == ("92", None)
    assert out.inputs == ["q:E2", "q:E4"]


def test_a_variable_inside_longer_text_is_kept_literally(ok):
    out = run_if(if_step("1 < 2", "rate is $Y"), {"Y": ok("E2", "91.7")})
    assert out.value == "rate is $Y"


def test_a_condition_that_yields_a_number_is_not_a_condition(ok):
    with pytest.raises(ToolError) as e:
        run_if(if_step("$Y - 92", "a", "b"), {"Y": ok("E2", "91.7")})
    assert e.value.code == "NOT_A_CONDITION" and "'$Y - 92'" in e.value.message


def test_a_branch_variable_without_a_value_is_a_missing_input(ok):
    with pytest.raises(ToolError) as e:
        run_if(if_step("1 < 2", "$NOPE"), {})
    assert e.value.code == "MISSING_INPUT" and "$NOPE" in e.value.message

"""COMPUTE: exact arithmetic and comparisons over plan variables, never eval."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.errors import ToolError
from shared.models import ComputeStep
from shared.tools.compute import evaluate, parse_expression, run_compute


def compute(expression: str) -> ComputeStep:
    return ComputeStep(id="E3", operation="COMPUTE", expression=expression, output_var="$GAP")


def error_of(expression: str, variables: dict | None = None) -> ToolError:
    with pytest.raises(ToolError) as e:
        evaluate(expression, variables or {})
    return e.value


def test_91_7_minus_92_is_exactly_minus_0_3():
    assert evaluate("91.7 - 92", {}) == Decimal("-0.3")
    assert run_compute(compute("$Y - 92"), {"Y": "91.7%"}).value == "-0.3"


def test_literals_are_read_from_their_text_so_float_noise_never_appears():
    assert run_compute(compute("0.1 + 0.2"), {}).value == "0.3"


def test_both_reference_forms_read_the_variable_and_extracted_text_counts_as_a_number():
    variables = {"A": "$1,234.5", "B": Decimal("0.5"), "C": 2}
    assert evaluate("(${A} + $B) / $C", variables) == Decimal("617.5")


def test_a_comparison_yields_a_boolean_value_and_chains_like_python():
    out = run_compute(compute("$Y < 92"), {"Y": "91.7"})
    assert out.value is True and out.confidence == "computed"
    assert evaluate("1 < 2 < 3", {}) is True
    assert evaluate("3 > 2 > 2.5", {}) is False


def test_and_short_circuits_so_a_guard_prevents_division_by_zero():
    assert evaluate("$B != 0 and $A / $B > 1", {"A": 1, "B": 0}) is False
    assert evaluate("not ($A > 1) or $A > 5", {"A": 3}) is False


def test_functions_abs_min_max_round_work_and_round_goes_half_away_from_zero():
    assert evaluate("abs(-2) + min(3, $A) + max(1, 2)", {"A": 1}) == Decimal(5)
    assert evaluate("round(2.5)", {}) == Decimal(3)
    assert run_compute(compute("round(2 / 3, 2)"), {}).value == "0.67"


def test_results_keep_the_places_their_inputs_had_and_never_use_an_exponent():
    assert run_compute(compute("1.50 + 1"), {}).value == "2.50"
    assert run_compute(compute("$X * 1"), {"X": "1.2 million"}).value == "1200000"
    assert run_compute(compute("round(1234, -2)"), {}).value == "1200"


@pytest.mark.parametrize("expression, construct", [
    ("__import__('os').system('x')", "__import__"),
    ("(1).real", "attribute access"),
    ("(lambda: 1)()", "lambda"),
    ("[1, 2][0]", "Subscript"),
    ("$Y if $Y else 1", "if/else"),
    ("Y - 92", "bare name 'Y'"),
    ("'a' * 3", "literal 'a'"),
    ("1 in 2", "In"),
    ("abs(x=1)", "abs()"),
])
def test_anything_beyond_arithmetic_is_rejected_naming_the_offending_construct(
        expression, construct):
    e = error_of(expression, {"Y": 1})
    assert e.code == "BAD_EXPRESSION"
    assert construct in e.message


def test_division_by_zero_is_a_step_error_not_a_crash():
    e = error_of("$A / $B", {"A": 1, "B": "0"})
    assert e.code == "DIVISION_BY_ZERO"
    assert "$B" in e.message


def test_a_fallback_text_in_arithmetic_names_the_variable_and_its_value():
    e = error_of("$Y - 92", {"Y": "unknown"})
    assert e.code == "NOT_A_NUMBER"
    assert "$Y is 'unknown', not a number" in e.message


def test_a_variable_nobody_provided_is_a_missing_input():
    e = error_of("$Z + 1", {"Y": 1})
    assert e.code == "MISSING_INPUT"
    assert "$Z" in e.message and "$Y" in e.message


def test_huge_powers_and_results_are_refused_rather_than_computed():
    assert error_of("2 ** 1000").code == "OUT_OF_RANGE"
    assert error_of("1e99 * 10").code == "OUT_OF_RANGE"
    assert error_of("(-8) ** 0.5").code == "OUT_OF_RANGE"


def test_parse_expression_checks_without_evaluating_or_needing_values():
    assert parse_expression("$Y / 0").names  # a zero divisor is only a runtime error
    with pytest.raises(ToolError):
        parse_expression("$Y.__class__")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_text_as_an_expression_gives_a_value_or_a_tool_error(expression):
    try:
        result = evaluate(expression, {"Y": "91.7", "N": "unknown"})
    except ToolError:
        return
    assert isinstance(result, bool) or result.is_finite()


@settings(deadline=None)
@given(st.text(alphabet="0123456789.+-*/%() <>=!$YNandort", max_size=30))
def test_arithmetic_shaped_text_gives_a_value_or_a_tool_error(expression):
    try:
        evaluate(expression, {"Y": "91.7", "N": 0})
    except ToolError:
        pass


@given(st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-10**9,
                   max_value=10**9), st.decimals(allow_nan=False, allow_infinity=False,
                   places=3, min_value=-10**9, max_value=10**9))
def test_subtraction_of_extracted_numbers_is_exact(a, b):
    assert evaluate("$A - $B", {"A": str(a), "B": str(b)}) == a - b


def test_a_deeply_nested_expression_is_refused_instead_of_exhausting_the_stack():
    assert error_of("-" * 500 + "1").code == "BAD_EXPRESSION"
    assert error_of("1" + "+1" * 400).code == "BAD_EXPRESSION"

"""parse_number, as_number and format_decimal: numbers as documents write them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.tools.numbers import as_number, format_decimal, parse_number


@pytest.mark.parametrize("text, expected", [
    ("91.7", "91.7"),
    ("91.7%", "91.7"),
    (" 91.7 % ", "91.7"),
    ("$1,234.5", "1234.5"),
    ("€ 12", "12"),
    ("1.2 million", "1200000"),
    ("$3.4bn", "3400000000"),
    ("12k", "12000"),
    ("(3.4)", "-3.4"),
    ("-$3", "-3"),
    ("$-3", "-3"),
    ("−2.5", "-2.5"),
    (".5", "0.5"),
    ("+7", "7"),
])
def test_numbers_written_the_ways_reports_write_them_are_read_exactly(text, expected):
    assert parse_number(text) == Decimal(expected)


@pytest.mark.parametrize("text", [
    "", "unknown", "NaN", "Infinity", "1e5", "1,23", "12 units", "1.2.3", "(-3)", "--3", "%", "$",
])
def test_text_that_is_not_one_number_gives_none(text):
    assert parse_number(text) is None


def test_a_scaled_number_keeps_every_digit():
    assert parse_number("9" * 40 + " trillion") == Decimal("9" * 40 + "0" * 12)


def test_as_number_reads_floats_through_their_shortest_form_and_refuses_booleans():
    assert as_number(91.7) == Decimal("91.7")
    assert as_number(3) == Decimal(3)
    assert as_number("91.7%") == Decimal("91.7")
    assert as_number(True) is None
    assert as_number(float("nan")) is None
    assert as_number({"text": "91.7"}) is None


def test_format_decimal_never_writes_an_exponent_or_a_negative_zero():
    assert format_decimal(Decimal("1.2E+6")) == "1200000"
    assert format_decimal(Decimal("-0.0")) == "0.0"
    assert format_decimal(Decimal("-0.3")) == "-0.3"


@given(st.text(max_size=40))
def test_parse_number_never_raises_on_any_text(text):
    result = parse_number(text)
    assert result is None or result.is_finite()


@given(st.decimals(allow_nan=False, allow_infinity=False, places=4,
                   min_value=-10**12, max_value=10**12))
def test_a_formatted_number_with_thousands_separators_parses_back_to_itself(value):
    assert parse_number(f"{value:,}") == value
    assert parse_number(format_decimal(value)) == value

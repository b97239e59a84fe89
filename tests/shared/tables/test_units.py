"""A table's unit and scale from the words around it, as real filings and TAT-QA write them."""

from __future__ import annotations

import pytest

from shared.tables.units import currency_in, excepted, scale_in

SCALES = [
    ("(In thousands)", 3), ("(in thousands, except per share data)", 3), ("$ in millions", 6),
    ("(Millions)", 6), ("(Dollars in millions)", 6), ("(in millions of dollars)", 6),
    ("RMB’Million", 6), ("$'000", 3), ("(Amounts in thousands except per share amounts)", 3),
    ("Appropriation of earnings (in thousand NT dollars)", 3), ("€m", 6),
    ("(In thousands) ... (in millions)", None), ("Revenues:", None),
    # a unit line's cell, in the currencies of reports written outside the US
    ("$000", 3), ("(000)", 3), ("000s", 3), ("CHF m", 6), ("S$'000", 3), ("R'000", 3),
    ("RM'000", 3), ("US$m", 6), ("1,000 shares", None), ("(1,000)", None), ("Year 2000", None),
    # a rate's denominator is no scale of the figures
    ("Normalised per $ million of revenues", None), ("Revenue per employee ($000)", 3),
    # Apple's statements: the scale the exception names is the exception's
    ("(In millions, except number of shares which are reflected in thousands and per share "
     "amounts)", 6)]


@pytest.mark.parametrize("text, scale", SCALES)
def test_the_scale_a_table_states_is_read_and_two_scales_are_none(text, scale):
    assert scale_in(text) == scale


@pytest.mark.parametrize("text, currency", [
    ("(Dollars in millions)", "USD"), ("$ in millions", "USD"), ("€m", "EUR"),
    ("RMB’Million", "CNY"), ("(In thousands)", None), ("$ and € amounts", None)])
def test_the_currency_a_table_states_is_read(text, currency):
    assert currency_in(text) == currency


@pytest.mark.parametrize("text, per_share, shares", [
    ("(in thousands, except per share data)", True, False),
    ("(In thousands, except share data)", False, True),
    ("(in thousands, except share and per share amounts)", True, True),
    ("(In thousands)", False, False)])
def test_rows_a_table_excepts_from_its_scale(text, per_share, shares):
    assert excepted(text) == (per_share, shares)

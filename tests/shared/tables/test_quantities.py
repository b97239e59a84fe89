"""Figures typed as documents write them: table cells and captures to Quantities."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.tables.quantities import display, is_year, parse_quantity, rescale, unit_statement

CELLS = [  # text, the table's unit and scale -> kind, amount, unit, scale
    ("(9,576)", "USD", 3, ("money", Decimal(-9576), "USD", 3)),
    ("(1,645 )", None, 3, ("number", Decimal(-1645), None, 3)),
    ("$(2,085)", None, 0, ("money", Decimal(-2085), "USD", 0)),
    ("$ (1.9)", None, 6, ("money", Decimal("-1.9"), "USD", 6)),
    ("$—", None, 3, ("money", Decimal(0), "USD", 3)),
    ("$ 1,452.4", None, 0, ("money", Decimal("1452.4"), "USD", 0)),
    ("—", "USD", 3, ("money", Decimal(0), "USD", 3)),
    ("$5.4 billion", "USD", 6, ("money", Decimal("5.4"), "USD", 9)),
    ("12.5%", "USD", 6, ("percent", Decimal("12.5"), None, 0)),
    ("7.5 per cent", None, 0, ("percent", Decimal("7.5"), None, 0)),
    ("(48.3)%", None, 0, ("percent", Decimal("-48.3"), None, 0)),  # an effective tax rate
    ("1,234 (1)", None, 0, ("number", Decimal(1234), None, 0)),
    ("1,234(a)", None, 0, ("number", Decimal(1234), None, 0)),
    ("USD 5", None, 0, ("money", Decimal(5), "USD", 0)),
    ("-€3.2 million", None, 0, ("money", Decimal("-3.2"), "EUR", 6)),
]


@pytest.mark.parametrize("text, unit, scale, expected", CELLS)
def test_a_cell_becomes_a_figure_with_its_kind_unit_and_scale(text, unit, scale, expected):
    q = parse_quantity(text, unit=unit, scale=scale)
    assert (q.kind, q.amount, q.unit, q.scale) == expected and q.text == text.strip()


@pytest.mark.parametrize("text", [",", "10-K", "Q3", "(-3)", "1,23", "two", "1 2", "$", "%"])
def test_text_that_states_no_single_figure_is_not_one(text):
    assert parse_quantity(text) is None


@pytest.mark.parametrize("text, day", [("September 30, 2019", "2019-09-30"),
                                       ("30 Sept 2019", "2019-09-30"),
                                       ("2018-12-31", "2018-12-31")])
def test_dates_are_read_as_days(text, day):
    q = parse_quantity(text)
    assert q.kind == "date" and q.date == day


def test_a_figure_of_another_kind_than_asked_is_not_a_value():
    assert parse_quantity("12.5%", kind="money") is None
    assert parse_quantity("$12", kind="percent") is None
    assert parse_quantity("12", kind="date") is None
    assert parse_quantity("1,234", kind="money").kind == "money"


def test_an_answer_prints_the_unit_and_scale():
    assert display(parse_quantity("(9,576)", unit="USD", scale=3)) == "-$9,576 thousand"
    assert display(parse_quantity("12.5%")) == "12.5%"
    assert display(parse_quantity("3.2", unit="EUR", scale=6)) == "€3.2 million"
    assert parse_quantity("(9,576)", unit="USD", scale=3).absolute() == Decimal(-9576000)


def test_a_bare_figure_takes_the_kind_asked_but_a_written_one_keeps_its_own():
    assert parse_quantity("91.7", kind="percent").kind == "percent"
    assert parse_quantity("$ —").amount == Decimal(0) and parse_quantity("$ —").unit == "USD"


@pytest.mark.parametrize("heading, currency, scale, excepted", [  # Patriot Transportation's
    ("(In thousands, except per share amounts)", None, 3, "share"),
    ("(Dollars in thousands except per share amounts)", "USD", 3, "share"),
    ("periods presented (in thousands of dollars):", "USD", 3, None),
    ("(dollars in thousands)                2015     %", "USD", 3, None),
    ("Options   Shares   Price   Term (yrs)   (000’s)", None, 3, None),
    ("$ in millions, except per share data", "USD", 6, "share"),
])
def test_a_tables_heading_states_its_unit_and_scale(heading, currency, scale, excepted):
    assert unit_statement(heading)[1:] == (currency, scale, excepted)
    assert unit_statement("Operating revenues   94,785   87,882") is None


def test_a_figure_is_restated_in_another_scale_without_changing_what_it_is():
    capex = parse_quantity("9,576", unit="USD", scale=3)
    assert display(rescale(capex, 6)) == "$9.576 million"
    assert rescale(capex, 6).absolute() == capex.absolute()
    assert is_year(parse_quantity("2020")) and not is_year(parse_quantity("2,020"))

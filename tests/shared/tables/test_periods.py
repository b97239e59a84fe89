"""Columns' periods from real headers (filings and TAT-QA), and the columns a requested
period names."""

from __future__ import annotations

import pytest

from shared.tables.model import Column, Table
from shared.tables.periods import columns_for, period_context, period_of

HEADERS = [  # header text as the reader joins it -> period
    ("Years Ended September 30, 2019", "2018-10-01..2019-09-30"),
    ("Three Months Ended June 30, 2019", "2019-Q2"),
    ("NINE MONTHS ENDED JUNE 30, 2018", "2017-10-01..2018-06-30"),
    ("December 31, 2018", "2018-12-31"),
    ("As of December 31 2019", "2019-12-31"),
    ("Year-ended 31 March 2019", "2018-04-01..2019-03-31"),
    ("For the Year Ended January 31, 2020", "2019-02-01..2020-01-31"),
    ("Quarter ended December 31, 2019", "2019-Q4"),
    ("Fiscal 2019", "2019"),
    ("FY19**", "2019"),
    ("2011(c)", "2011"),
    ("2019 53 WEEKS", "2019"),
    ("Q3 2019", "2019-Q3"),
    ("FY 2019-20", "2019-07-01..2020-06-30"),
    ("2019 vs. 2018", None),
    ("% Change", None),
    ("Change 2019-2018", None),
    ("2021-2022", None),  # payments due in two years
    ("First 2015", None),  # a quarter of a fiscal year the header does not date
    ("Fiscal 2019 Second Quarter", None),
    ("Three months ended Six months ended March 31, 2015", None),
    ("Fiscal Yaar Ended March 31, 2019", None),
]


@pytest.mark.parametrize("header, period", HEADERS)
def test_a_column_header_names_its_period_or_none(header, period):
    assert period_of(header) == period


def test_a_bare_year_under_a_title_naming_its_span_is_of_that_span():
    context = period_context("CONSOLIDATED BALANCE SHEETS - As of September 30")
    assert period_of("2019", context) == "2019-09-30"
    context = period_context("CONSOLIDATED STATEMENTS OF CASH FLOWS - Years ended September 30")
    assert period_of("2019", context) == "2018-10-01..2019-09-30"
    assert period_of("Three months ended June 30, 2019", context) == "2019-Q2"


def _table(*periods: str | None) -> Table:
    return Table(columns=[Column(header=p or "", period=p) for p in periods], rows=[])


@pytest.mark.parametrize("asked", ["FY2018", "2018", "fiscal 2018", "FY18", "fiscal year 2018",
                                   "2017-10-01..2018-09-30"])
def test_a_fiscal_year_is_named_by_the_year_it_ends_in(asked):
    table = _table("2018-10-01..2019-09-30", "2017-10-01..2018-09-30", "2016-10-01..2017-09-30")
    assert columns_for(table, asked) == [1]


@pytest.mark.parametrize("asked, found", [
    ("2019-Q3", [0]), ("Q3 2019", [0]), ("third quarter of 2019", [0]),
    ("September 30, 2019", [0, 2]), ("2019-09-30", [0, 2]),
    ("Nine months ended September 30, 2019", [2]), ("2019", []), ("Q3 FY2019", [0])])
def test_three_and_nine_month_columns_are_told_apart_and_a_date_names_both(asked, found):
    table = _table("2019-Q3", "2018-Q3", "2019-01-01..2019-09-30", "2018-01-01..2018-09-30")
    assert columns_for(table, asked) == found


def test_a_fiscal_quarter_is_read_from_the_year_to_date_columns_the_table_shows():
    table = _table("2019-Q2", "2018-Q2", "2018-10-01..2019-06-30", "2017-10-01..2018-06-30")
    assert columns_for(table, "Q3 FY2019") == columns_for(table, "FY2019-Q3") == [0]
    assert columns_for(table, "Q3 FY2018") == [1]
    assert columns_for(_table("2019-Q2", "2018-Q2"), "Q3 FY2019") == []  # start not shown


@pytest.mark.parametrize("asked, found", [("December 31, 2018", [1]), ("2018-12-31", [1]),
                                          ("2018", [1]), ("FY2019", [0])])
def test_balance_sheet_dates_a_year_apart_are_year_ends(asked, found):
    assert columns_for(_table("2019-12-31", "2018-12-31"), asked) == found


def test_balance_sheet_dates_that_are_not_a_year_apart_name_no_year():
    table = _table("2019-06-30", "2018-09-30")  # a quarter's end and the last year end
    assert columns_for(table, "2018") == []
    assert columns_for(table, "September 30, 2018") == [1]


def test_52_and_53_week_year_ends_a_few_days_apart_are_year_ends():
    table = _table("2019-04-26", "2018-04-27")
    assert columns_for(table, "2019") == [0] and columns_for(table, "FY18") == [1]


def test_a_year_ending_in_january_is_named_by_no_year():
    table = _table("2019-01-04..2020-01-03", "2017-12-29..2018-12-28")
    assert columns_for(table, "2019") == [] and columns_for(table, "2020") == []
    assert columns_for(table, "2018") == [1]
    assert columns_for(table, "January 3, 2020") == [0]


def test_a_request_that_names_no_period_names_no_column():
    table = _table("2019", "2018")
    for asked in ("", "last year", "the latest", "2019 and 2018"):
        assert columns_for(table, asked) == []

"""Columns' periods from real headers (filings and TAT-QA), and the columns a requested
period names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.models.table import Column, Table
from shared.tables.periods import columns_for, header_quarter, period_context, period_of
from shared.tables.read import table_from_rows, tables_in_words

from .conftest import DATA, row

TATQA = {c["uid"][:8]: c["table"] for c in json.loads((DATA / "tatqa_dev_excerpt.json").read_text())}

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
    ("December 31 2 0 1 8", "2018-12-31"),  # a year in spaced digits
    ("F19 53 WEEKS", "2019"),
    ("F18 (3) 52 WEEKS", "2018"),
    ("2018/2019", None),  # a fiscal year over two calendar years: its months are not told
    # a quarter abbreviated or numbered is a quarter, never its whole year
    ("Qtr 4 2019", "2019-Q4"),
    ("4th Qtr. 2019", "2019-Q4"),
    ("Quarter 1, 2019", "2019-Q1"),
    ("2019 Fourth Quarter", "2019-Q4"),
    ("Qtr 4", None),
    # a date in figures when the order of its day and month shows
    ("12/31/2019", "2019-12-31"),
    ("As at 31/12/19", "2019-12-31"),
    ("6/30/2018", "2018-06-30"),
    ("03/04/2019", None),  # March 4 or April 3
    ("13/13/2019", None),
    ("30.06.2019", "2019-06-30"),
    ("2019.12.31", "2019-12-31"),
    ("1.5.2019", None),
    # as spreadsheets write them
    ("31-Dec-19", "2019-12-31"),
    ("31 Dec 19", "2019-12-31"),
    ("Dec-19", "2019-12"),  # a month
    ("Mar-2019", "2019-03"),
]


@pytest.mark.parametrize("header, period", HEADERS)
def test_a_column_header_names_its_period_or_none(header, period):
    assert period_of(header) == period


def test_a_quarter_named_alone_is_told_however_it_is_abbreviated():
    assert [header_quarter(h) for h in ("Third", "Q3", "Qtr 3", "Quarter 3", "3rd Qtr.",
                                        "2019", "Quarter")] == [3, 3, 3, 3, 3, None, None]


def test_a_bare_year_under_a_title_naming_its_span_is_of_that_span():
    context = period_context("CONSOLIDATED BALANCE SHEETS - As of September 30")
    assert period_of("2019", context) == "2019-09-30"
    context = period_context("CONSOLIDATED STATEMENTS OF CASH FLOWS - Years ended September 30")
    assert period_of("2019", context) == "2018-10-01..2019-09-30"
    assert period_of("Three months ended June 30, 2019", context) == "2019-Q2"


def test_a_title_dating_its_years_on_different_days_gives_bare_years_no_day():
    # Apple's fiscal years end on the last Saturday of September: "September 28" is the
    # 2024 column's day, not the 2023 column's (September 30, 2023)
    context = period_context("long-lived assets as of September 28, 2024 and September 30, "
                             "2023 for countries that accounted for more than 10%")
    assert context == ""
    assert period_of("2023", context) == "2023"
    assert period_context("As of March 31, 2023 and December 31, 2022") == ""


def _table(*periods: str | None) -> Table:
    return Table(columns=[Column(header=p or "", period=p) for p in periods], rows=[])


@pytest.mark.parametrize("asked", ["FY2018", "2018", "fiscal 2018", "FY18", "fiscal year 2018",
                                   "2017-10-01..2018-09-30"])
def test_a_fiscal_year_is_named_by_the_year_it_ends_in(asked):
    table = _table("2018-10-01..2019-09-30", "2017-10-01..2018-09-30", "2016-10-01..2017-09-30")
    assert columns_for(table, asked) == [1]


def test_a_month_asked_is_the_balance_dated_at_its_end():
    # "as at June 2019" of a balance sheet dated "30 June 2019" (or a 52-week year's
    # "June 29, 2019"); a quarter or a day early in the month is no such balance
    table = _table("2019-06-30", "2018-06-30")
    assert columns_for(table, "2019-06") == [0]
    assert columns_for(table, "2019-Q2") == []
    assert columns_for(_table("2019-06-29", "2018-06-30"), "2019-06") == [0]
    assert columns_for(_table("2019-06-01", "2018-06-30"), "2019-06") == []
    assert columns_for(_table("2019-04-01..2019-06-30"), "2019-06") == []


@pytest.mark.parametrize("asked, found", [
    ("2019-Q3", [0]), ("Q3 2019", [0]), ("third quarter of 2019", [0]),
    ("September 30, 2019", [0, 2]), ("2019-09-30", [0, 2]),
    ("Nine months ended September 30, 2019", [2]), ("2019", []), ("Q3 FY2019", [0])])
def test_three_and_nine_month_columns_are_told_apart_and_a_date_names_both(asked, found):
    table = _table("2019-Q3", "2018-Q3", "2019-01-01..2019-09-30", "2018-01-01..2018-09-30")
    assert columns_for(table, asked) == found


def test_a_quarters_ordinal_over_its_year_is_that_fiscal_quarter():
    # a 10-K's quarterly results (Patriot Transportation, fiscal years ending September 30):
    # "First Second Third Fourth" over "2019 2018" each
    table = table_from_rows([
        ["", "First", "", "Second", "", "Third", "", "Fourth", ""],
        ["", "2019", "2018", "2019", "2018", "2019", "2018", "2019", "2018"],
        ["Revenues", "$ 28,054", "27,901", "27,008", "27,979", "27,526", "29,404", "26,128",
         "28,781"]])
    assert [c.header for c in table.columns][6] == "Fourth 2019"
    assert columns_for(table, "Q4 FY2019") == [6]
    assert columns_for(table, "Q2 FY2018") == [3]
    assert columns_for(table, "Q3") == [4]  # the newest year's
    assert columns_for(table, "2019") == []  # a quarter is no year


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


def test_a_tables_one_balance_date_is_a_year_end_when_its_title_dates_it_so_in_other_years():
    # TAT-QA dev: "… as of December 31, 2019 and 2018" over "As of December 31, 2018
    # Amortized Cost | … Fair Value", the other year in a table of its own
    table = _table("2018-12-31", "2018-12-31", "2018-12-31")
    table.title = "Unrealized gains and losses as of December 31, 2019 and 2018 (in thousands):"
    assert columns_for(table, "2018") == [0, 1, 2] and columns_for(table, "2019") == []
    table.title = "Gains and losses as of December 31, 2019 and December 31, 2018:"
    assert columns_for(table, "2018") == [0, 1, 2]
    # a lone December 31 is not surely a year end (a quarter's or a half year's), nor
    # with a title that dates it alone or with another day
    for title in (None, "Investments as of December 31, 2018", "As of June 30, 2019 and 2018"):
        table.title = title
        assert columns_for(table, "2018") == []


def test_a_balance_dated_at_the_end_of_the_year_before_a_fiscal_year_column_is_a_year_end():
    # TAT-QA dev: "2019 | December 31, 2018" over property, plant and equipment
    table = _table("2019", "2018-12-31")
    assert columns_for(table, "2018") == [1] and columns_for(table, "2019") == [0]
    # a quarter's end beside a year is still no year end
    assert columns_for(_table("2019", "2018-09-30"), "2018") == []


def test_52_and_53_week_year_ends_a_few_days_apart_are_year_ends():
    table = _table("2019-04-26", "2018-04-27")
    assert columns_for(table, "2019") == [0] and columns_for(table, "FY18") == [1]


def test_a_bare_year_names_a_year_ending_in_january_by_the_year_it_ends_in():
    table = table_from_rows(TATQA["62425e9b"])  # "Year Ended" over "January 3, 2020", ...
    assert [c.period for c in table.columns][:2] == ["2019-01-04..2020-01-03",
                                                     "2017-12-29..2018-12-28"]
    assert columns_for(table, "2020") == [0] and columns_for(table, "2018") == [1]
    assert columns_for(table, "2019") == []
    assert columns_for(table, "FY2020") == columns_for(table, "fiscal 2019") == []


def test_a_bare_year_names_no_january_year_end_when_the_next_january_is_shown():
    # "2019" of "January 31, 2019 | January 31, 2018" may be either: TAT-QA asks "2019"
    # of the year ended January 31, 2020 beside the one ended February 1, 2019
    goodwill = table_from_rows(TATQA["1b2ca134"])
    assert columns_for(goodwill, "2019") == [0] and columns_for(goodwill, "2018") == []
    espp = table_from_rows(TATQA["97b55a6f"])  # "For the Year Ended January 31, 2020", ...
    assert columns_for(espp, "2020") == [0]
    assert columns_for(espp, "2019") == columns_for(espp, "2018") == []


def test_a_table_naming_its_own_fiscal_years_names_no_january_year_end_by_a_bare_year():
    rows = TATQA["97b55a6f"]
    assert columns_for(table_from_rows(rows), "2020") == [0]
    # a title as retailers write theirs: their "fiscal 2019" ended February 1, 2020
    named = table_from_rows(rows, title="Fiscal 2019, 2018 and 2017 revenue (in thousands)")
    assert columns_for(named, "2020") == columns_for(named, "2019") == []


def test_balance_sheet_dates_of_52_and_53_week_years_are_year_ends():
    table = table_from_rows(TATQA["2f655c5a"])  # "January 3, 2020", "December 28, 2018"
    assert [c.period for c in table.columns] == ["2020-01-03", "2018-12-28"]
    assert columns_for(table, "2018") == [1] and columns_for(table, "2020") == [0]
    assert columns_for(table, "December 28, 2018") == [1]


def test_an_opening_balance_on_january_1_names_no_year_and_leaves_the_year_ends_named():
    table = table_from_rows(TATQA["d8d5f6c9"])  # December 31, 2019 | December 31, 2018 | January 1, 2018
    assert [c.period for c in table.columns] == ["2019-12-31", "2018-12-31", "2018-01-01"]
    assert columns_for(table, "2018") == [1] and columns_for(table, "2019") == [0]
    assert columns_for(table, "2017") == [] and columns_for(table, "January 1, 2018") == [2]


def test_headers_in_spaced_digits_or_short_fiscal_years_name_their_years():
    spaced = table_from_rows(TATQA["f8ac9ddd"])  # "December 31" over "2019", "2 0 1 8"
    assert columns_for(spaced, "2018") == [1] and columns_for(spaced, "2019") == [0]
    short = table_from_rows(TATQA["00addb09"])  # "F19" over "53 WEEKS", "F18 (3)" over "52 WEEKS"
    assert columns_for(short, "FY2019") == [0] and columns_for(short, "FY18") == [1]


def test_a_fiscal_year_over_two_calendar_years_is_named_as_a_fiscal_year_only():
    table = table_from_rows(TATQA["65cde743"])  # "2017/2018", "2018/2019"
    assert columns_for(table, "FY2019") == [1] and columns_for(table, "fiscal 2018") == [0]
    assert columns_for(table, "2018-07-01..2019-06-30") == [1]  # how "2018/2019" is asked
    assert columns_for(table, "2019") == []  # the year it starts in, or ends in?


def test_a_fiscal_quarter_a_header_names_is_its_column():
    table = table_from_rows(TATQA["073a0021"])  # "Fiscal 2019" over "First Quarter", ...
    assert columns_for(table, "Q3 FY2019") == [2]
    assert columns_for(table, "fourth quarter of fiscal 2019") == [3]
    assert columns_for(table, "Q3 FY2018") == [] and columns_for(table, "2019-Q3") == []


def test_the_words_of_a_request_beside_its_period_pick_one_of_the_periods_columns():
    debt = table_from_rows(TATQA["b9871425"])  # "December 31, 2019" over "Carrying Amount", "Fair Value"
    assert columns_for(debt, "December 31, 2019") == [0, 1]  # ambiguous: the caller says so
    assert columns_for(debt, "December 31, 2019 Fair Value") == [1]
    assert columns_for(debt, "2018 carrying amount") == [2]
    movements = table_from_rows(TATQA["21a432eb"])  # "Financial assets" over "2019", "2018", ...
    assert columns_for(movements, "2019") == [0, 2]
    assert columns_for(movements, "FY2019 financial liabilities") == [2]
    assert columns_for(movements, "2019 Fair Value") == [0, 2]  # words that pick none


def test_a_request_that_names_no_period_names_no_column():
    table = _table("2019", "2018")
    for asked in ("", "last year", "the latest", "2019 and 2018"):
        assert columns_for(table, asked) == []


@pytest.mark.integration  # a process per hash seed
def test_a_column_with_as_many_cells_of_two_kinds_is_of_no_kind_in_every_process():
    # amounts and percentages, as many of each (a held-out TAT-QA table): the kind was the
    # one a set's order put first, so one process read a cell the next did not find
    code = ("from shared.tables.read import table_from_rows\n"
            "from shared.tables.periods import columns_for\n"
            "t = table_from_rows([['', '2019', '2018'], ['Revenue', '$ 5', '$ 4'],\n"
            "    ['Margin', '7%', '6%'], ['Cost', '$ 3', '$ 2'], ['Share', '9%', '8%']])\n"
            "print(columns_for(t, '2019', 'money'), columns_for(t, '2019', 'percent'))")
    root = Path(__file__).resolve().parents[3]
    seen = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                           text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
            for seed in range(6)}
    assert seen == {"[0] []\n"}


def test_a_fiscal_year_asked_by_its_end_is_the_bare_year_a_filings_table_names_it_by():
    # Apple's 10-K for 2021, page 27: "Effective tax rate" under "2021 2020 2019", its
    # fiscal years; asked "for the fiscal year ended September 25, 2021"
    table = Table(columns=[Column(header=h, period=h) for h in ("2021", "2020", "2019")],
                  rows=[])
    assert columns_for(table, period_of("fiscal year ended September 25, 2021")) == [0]
    assert columns_for(table, "2019-10-01..2020-09-26") == [1]
    assert columns_for(table, "2020-04-01..2021-03-31") == [0]  # ends in 2021 as well
    # a year ending in January is named either way: by no bare year
    assert columns_for(table, "2020-02-02..2021-01-30") == []
    # nor is a span of another length a year
    assert columns_for(table, "2021-01-01..2021-09-25") == []


def test_a_day_the_title_dates_the_columns_on_is_the_bare_year_column_of_that_day():
    # Apple's 10-K for 2020, page 48: "… financial statement details as of September 26,
    # 2020 and September 28, 2019" over "2020 2019", "Gross property, plant and equipment"
    table = Table(columns=[Column(header=h, period=h) for h in ("2020", "2019")], rows=[],
                  title="Note 4 – Consolidated Financial Statement Details The following "
                        "tables show the Company’s consolidated financial statement details "
                        "as of September 26, 2020 and September 28, 2019")
    assert [c.period for c in table.columns] == ["2020", "2019"]
    assert columns_for(table, "2020-09-26") == [0] and columns_for(table, "2019-09-28") == [1]
    assert columns_for(table, "2020-09-30") == []  # a day the title does not name
    assert columns_for(table.model_copy(update={"title": "Property, plant and equipment"}),
                       "2020-09-26") == []


def test_a_quarter_of_weeks_ending_early_in_a_month_is_the_quarter_before_it(filing_words):
    # Apple's 10-Q for its second quarter of fiscal 2023, page 4: "Three Months Ended" and
    # "Six Months Ended" over "April 1, 2023" (13 and 26 weeks from January 1 and
    # September 25): January to March and a day, not February to April
    table = tables_in_words(filing_words["aapl-20230401-10q.pdf#4"], page=4)[0]
    assert [c.period for c in table.columns] == [
        "2023-01-01..2023-04-01", "2022-01-01..2022-03-26",
        "2022-10-01..2023-04-01", "2021-10-01..2022-03-26"]
    for asked in ("2023-Q1", "Q1 2023", "first quarter of 2023", "Q2 FY2023",
                  "three months ended April 1, 2023"):
        assert columns_for(table, asked) == [0], asked
    assert columns_for(table, "2023-Q2") == [] and columns_for(table, "2022-Q1") == [1]
    assert columns_for(table, "six months ended April 1, 2023") == [2]
    assert row(table, "Total net sales").cells[0].text == "94,836"

"""Periods named in titles, sources and questions: every form a corpus writes, and the
identifiers and calendar dates that must not be read as periods."""

from __future__ import annotations

import pytest

from shared.search import Document, format_scope
from shared.search.periods import find_periods, named_period, without_periods


@pytest.mark.parametrize("text, period", [
    ("Tesla Q3 2024 Production Report", "2024-Q3"),
    ("Tesla 2024 Q3 results", "2024-Q3"),
    ("Tesla 2024-Q3 results", "2024-Q3"),
    ("Results for Q3, 2024", "2024-Q3"),
    ("3Q24 update", "2024-Q3"),
    ("Q3'24 report", "2024-Q3"),
    ("Q3 FY24 guidance", "2024-Q3"),
    ("Q4 FY2022 guidance", "2022-Q4"),
    ("revenue in the third quarter of 2024", "2024-Q3"),
    ("third-quarter 2024 production", "2024-Q3"),
    ("the fourth quarter of fiscal 2024", "2024-Q4"),
    ("H1 2024 Interim Report", "2024-H1"),
    ("2024 H2 outlook", "2024-H2"),
    ("first half of 2024", "2024-H1"),
    ("second-half 2024 results", "2024-H2"),
    ("FY2024 Annual Report", "2024"),
    ("fiscal 2024 results", "2024"),
    ("fiscal year 2024 results", "2024"),
    ("Annual Report 2024", "2024"),
    ("Northgate Bank Monthly Lending Update, March 2024", "2024-03"),
    ("Sept. 2024 traffic", "2024-09"),
    ("Calder County Influenza Surveillance Bulletin, Week 48 2023", "2023-11-27..2023-12-03"),
    ("cases in week 48 of 2023", "2023-11-27..2023-12-03"),
    ("华川电子2024年第三季度报告", "2024-Q3"),
    ("华川电子2024年第3季度报告", "2024-Q3"),
    ("华川电子2024年Q3报告", "2024-Q3"),
    ("华川电子2024年上半年报告", "2024-H1"),
    ("华川电子2024年半年度报告", "2024-H1"),
    ("华川电子2024年年度报告", "2024"),
    ("华川电子2024年度报告", "2024"),
    ("2024年3月销售快报", "2024-03"),
    ("How did sales change from 2022 to 2023?", "2022-01-01..2023-12-31"),
    ("operating revenues for the quarter ended March 31, 2023", "2023-Q1"),
    ("Form 10-Q for the quarter ended December 31, 2014", "2014-Q4"),
    # its ordinal says no more than its end: a fiscal fourth quarter ending in July
    ("revenue for the fourth quarter ended December 31, 2019", "2019-Q4"),
    ("the fourth quarter ended July 27, 2019", "2019-05-01..2019-07-27"),
    ("sales in the last quarter of 2019", "2019-Q4"),
    ("the last quarter of fiscal 2019", "2019-Q4"),
    ("the six months ended March 31, 2023", "2022-10-01..2023-03-31"),
    # a 13-week quarter ending early in a month (Intel's, Apple's) is the months before it
    ("the three months ended April 1, 2023", "2023-01-01..2023-04-01"),
    ("the year ended April 1, 2023", "2022-04-01..2023-04-01"),
    # as UK and Australian reports write them: a month for its last day, weeks, a
    # financial year, a quarter or half by the month it ends in
    ("revenue for the year ended June 2019", "2018-07-01..2019-06-30"),
    ("the year to March 2019", "2018-04-01..2019-03-31"),
    ("the 52 weeks ended 29 June 2019", "2018-07-01..2019-06-29"),
    ("revenue in the 2019 financial year", "2019"),
    ("financial year 2019 results", "2019"),
    ("sales in the December 2019 quarter", "2019-Q4"),
    ("the June 2019 half-year", "2019-H1"),
    ("revenue for the half year ended 31 December 2019", "2019-H2"),  # not the year
    ("calendar year 2019", "2019"),
])
def test_each_form_a_corpus_writes_names_its_period(text, period):
    assert format_scope(named_period(text)) == period


@pytest.mark.parametrize("text", [
    "National Transport Safety Agency Rule 2023-17: EV Battery Thermal Event Reporting",
    "Calder Financial Authority Notice 2024-03: Payment Data Retention",
    "Harborline Track API Reference v2024.1",
    "lot 12023", "3000 units", "as of March 31, 2024", "published 2024-10-29",
    "on 14 March 2025", "Voltara Glossary of Battery Terms",
])
def test_identifiers_and_calendar_dates_are_not_periods(text):
    assert find_periods(text) == []


def test_the_most_specific_form_wins_where_two_overlap():
    (mention,) = find_periods("Tesla Q3 2024 Production Report")
    assert (mention.text, format_scope(mention.period)) == ("Q3 2024", "2024-Q3")


def test_without_periods_leaves_the_words_that_name_the_thing():
    assert without_periods("Tesla Q3 2024 Production Report").split() == [
        "Tesla", "Production", "Report"]
    assert without_periods("华川电子2024年第三季度报告").split() == ["华川电子", "报告"]


def test_a_document_without_a_period_gets_the_one_its_title_names():
    doc = Document(title="Orbis Foods third-quarter 2024 preview", content="x", date="2024-09-18")
    assert (doc.period, doc.period_origin) == ("2024-Q3", "inferred")
    given = Document(title="Kestrel FY2024 Annual Report", content="x",
                     period="2023-07-01..2024-06-30")
    assert (given.period, given.period_origin) == ("2023-07-01..2024-06-30", "given")
    assert Document(title="Halvorsen Marine names new CFO", content="x").period is None

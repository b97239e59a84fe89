"""A capture judged in its document: what is a value (typed, with its unit and scale)
and what is not (a lone comma, a year, a page number, a footnote mark, a date fragment),
on the text of real filings (tests/shared/tools/data/README.md) and TAT-QA sentences."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from shared.tools.capture_shape import capture_shape
from shared.tools.captures import asked_for, judge

DATA = Path(__file__).parent / "data"
TEN_K = (DATA / "pati-20230930-10k.pages.txt").read_text()
ANNUAL = (DATA / "pati-20150930-ar.pages.txt").read_text()
# TAT-QA dev (CC BY 4.0), paragraphs of real annual reports
EBITDA = ("Net profit/(loss) after tax was $(9.8) million (2018: $6.6 million). Non-statutory "
          "underlying earnings before interest, tax, depreciation and amortisation (EBITDA) "
          "improved from $62.6 million in FY18 to $85.1 million in FY19.")
EMISSIONS = ("Our total Scope 1 and 2 emissions dropped by 6.14 per cent from 2018, and our "
             "emissions per $ million of revenue were down by 10.9 per cent.")


def at(text: str, capture: str, after: str = "", nth: int = 0) -> tuple[int, int]:
    """The span of the `nth` occurrence of `capture` after the text `after`."""
    start = text.index(after) + len(after) if after else 0
    for _ in range(nth + 1):
        start = text.index(capture, start) + (1 if _ < nth else 0)
    return start, start + len(capture)


def verdict(text: str, capture: str, asked: str = "amount", after: str = "", nth: int = 0):
    return judge(text, *at(text, capture, after, nth), asked)


def test_a_figure_in_a_table_in_thousands_is_money_in_thousands():
    v = verdict(TEN_K, "43,493", after="Compensation and benefits")
    q = v.quantity
    assert (q.kind, q.amount, q.unit, q.scale) == ("money", Decimal(43493), "USD", 3)
    assert q.absolute() == Decimal(43_493_000)


def test_a_dollar_sign_set_apart_in_its_column_makes_the_figure_money():
    q = verdict(TEN_K, "94,785", after="\nOperating revenues").quantity
    assert (q.kind, q.unit, q.scale, q.text) == ("money", "USD", 3, "$94,785")


def test_dot_leaders_set_a_figure_in_its_column_too():
    q = verdict(ANNUAL, "122,882", after="Revenues ....").quantity
    assert (q.kind, q.unit, q.scale) == ("money", "USD", 3)


def test_per_share_figures_are_left_out_of_the_tables_scale():
    q = verdict(ANNUAL, "1.02", after="Basic ....").quantity
    assert (q.kind, q.amount, q.scale) == ("money", Decimal("1.02"), 0)
    assert verdict(ANNUAL, "59,526", after="Total Assets ....").quantity.scale == 3


def test_a_dash_in_a_tables_column_is_zero_and_a_hyphen_in_prose_is_no_value():
    row = "Gain on sale of terminal sites"
    q = verdict(TEN_K, "—", after=row).quantity
    assert (q.amount, q.scale) == (Decimal(0), 3)
    prose = "fuel surcharges - see note"
    assert verdict(prose, "-").not_a_value == "has no digit"


@pytest.mark.parametrize("text, capture, scale, unit", [
    (EBITDA, "62.6", 6, "USD"),
    ("Intel provided debt financing of $1.01 billion to IMFT in 2018", "1.01", 9, "USD"),
    ("IMFT sales to Intel were $731 million, $507 million, and $493 million", "507", 6, "USD"),
])
def test_the_scale_comes_from_the_sentence(text, capture, scale, unit):
    q = verdict(text, capture).quantity
    assert (q.kind, q.scale, q.unit) == ("money", scale, unit)


def test_a_percent_written_in_words_is_a_percent_and_not_money():
    assert verdict(EMISSIONS, "6.14").quantity.kind == "percent"
    assert verdict(EMISSIONS, "6.14", "money").not_a_value == \
        "is a percent, not an amount of money"


def test_a_lone_comma_is_not_a_value():
    assert verdict("Purchases of property, plant and equipment", ",").not_a_value == \
        "has no digit"


def test_a_year_is_not_an_amount_but_is_a_year_when_one_is_asked():
    dividend = TEN_K[TEN_K.index("This special dividend was paid on January 30, 2020"):]
    assert verdict(dividend, "2020").not_a_value == "is a year, not an amount"
    assert verdict(dividend, "2020", "money").not_a_value == \
        "is a year, not an amount of money"
    assert verdict(dividend, "30").not_a_value == "is a day of a month"
    v = verdict(dividend, "2020", "year")
    assert v.ok and v.quantity is None  # a year stays the text it is


def test_a_table_of_contents_page_number_is_not_a_value():
    v = verdict(TEN_K, "23", after="Financial Statements and Supplementary Data")
    assert v.not_a_value == "is a page number (a table of contents line)"
    v = verdict(TEN_K, "54", after="Signatures")  # no "Item" on the line: the Page heading
    assert v.not_a_value == "is a page number (a table of contents line)"


def test_a_page_number_alone_on_its_line_is_not_a_value():
    page = TEN_K[:TEN_K.index("\f", TEN_K.index("TABLE OF CONTENTS"))]
    assert verdict(page, "3", nth=page.count("3") - 1).not_a_value == \
        "is a page number (alone on its line)"


@pytest.mark.parametrize("text, capture, why", [
    (EBITDA[EBITDA.index("in FY"):], "18", "is part of 'FY18'"),
    ("filed on Form 10-K for the year", "10", "is part of '10-K'"),
    ("shares outstanding of 3,351,329 at", "351", "is part of '3,351,329'"),
    ("Revenue(1)      12,345", "1", "is a footnote mark"),
    ("Total revenue (2)      12,345", "(2)", "is a footnote mark"),
    ("As of 12/31/2019 the balance", "31", "is part of a date or time"),
    ("as described in Note 3 to the statements", "3", "is the number of a note, item or "
                                                      "page, not a figure"),
])
def test_part_of_a_word_a_footnote_or_a_date_is_not_a_value(text, capture, why):
    assert verdict(text, capture).not_a_value == why


def test_a_small_negative_in_a_tables_column_is_not_taken_for_a_footnote():
    q = verdict("Other                (1)        3", "(1)").quantity
    assert q.amount == Decimal(-1)


def test_a_text_group_keeps_words_and_refuses_only_punctuation():
    assert verdict("The CEO is Robert E. Sandlin.", "Robert E. Sandlin", "text").ok
    assert verdict("revenue : , up", ",", "text").not_a_value == \
        "holds neither a letter nor a digit"


@pytest.mark.parametrize("pattern, asked", [
    (r"revenues.*?([\d,]+)", "amount"), (r"fiscal (\d{4})", "year"),
    (r"CEO is ([A-Z]\w+ [A-Z]\w+)", "text"), (r"(.+?) million", "text"),
])
def test_what_a_pattern_asks_for_is_read_from_its_group(pattern, asked):
    assert asked_for(None, pattern) == asked
    assert asked_for("money", pattern) == "money"


@pytest.mark.parametrize("pattern, digitless", [
    (r"revenues.*?([\d,]+)", True), (r"([\d.,]*)", True), (r"\$([\d.]+) million", True),
    (r"(\d+(?:\.\d+)?)", False), (r"(\d[\d,]*)", False), (r"(-?\d[\d,.]*)", False),
    (r"(\d+|\d*\.\d+)", False), (r"(\$?[\d,]+|n/a)", True),
])
def test_a_number_group_that_can_match_no_digit_is_told_apart(pattern, digitless):
    shape = capture_shape(pattern)
    assert shape.reads_figure and shape.digitless == digitless


def test_a_figure_set_against_words_of_a_script_without_spaces_stands_alone():
    text = "2024年第三季度，华川电子营业收入为人民币52.3亿元，同比增长12%。毛利率为23.1%。"
    assert verdict(text, "23.1").quantity.kind == "percent"
    assert verdict(text, "52.3亿元").ok  # a unit this reader does not know: kept as text


def test_a_word_that_begins_like_a_month_names_no_month():
    text = "Gross margin 12% and revenue decreased 5% in the year"
    assert verdict(text, "12").quantity.kind == "percent"
    assert verdict(text, "5").quantity.kind == "percent"
    assert verdict("paid on Sept. 30, 2019", "30").not_a_value == "is a day of a month"

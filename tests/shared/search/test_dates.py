from datetime import date

import pytest

from shared.errors import InputError
from shared.search import ACCEPTED_FORMS, format_scope, parse_scope, year_in
from shared.search.dates import spoken_scope


@pytest.mark.parametrize(
    "scope, first, last",
    [
        ("2023", date(2023, 1, 1), date(2023, 12, 31)),
        ("2023-Q3", date(2023, 7, 1), date(2023, 9, 30)),
        ("2023-q4", date(2023, 10, 1), date(2023, 12, 31)),
        ("2023-H1", date(2023, 1, 1), date(2023, 6, 30)),
        ("2024-02", date(2024, 2, 1), date(2024, 2, 29)),
        ("2023-07-01", date(2023, 7, 1), date(2023, 7, 1)),
        ("2023-07-15..2023-09-30", date(2023, 7, 15), date(2023, 9, 30)),
        ("2022..2023-Q1", date(2022, 1, 1), date(2023, 3, 31)),
    ],
)
def test_each_accepted_scope_form_names_its_period(scope, first, last):
    assert parse_scope(scope) == (first, last)


@pytest.mark.parametrize("scope", ["Q3", "2023-Q5", "2023-13", "2023-02-30", "last year", "", "23"])
def test_a_bad_scope_names_the_value_and_lists_the_accepted_forms(scope):
    with pytest.raises(InputError) as caught:
        parse_scope(scope)
    assert repr(scope) in str(caught.value)
    assert ACCEPTED_FORMS in str(caught.value)


def test_a_range_that_ends_before_it_starts_says_to_put_the_earlier_date_first():
    with pytest.raises(InputError, match="earlier date first"):
        parse_scope("2023-09-30..2023-07-01")


def test_format_scope_gives_back_the_short_form_a_user_would_write():
    for scope in ["2023", "2023-Q3", "2023-H2", "2023-07", "2023-07-04", "2023-07-02..2023-08-01"]:
        assert format_scope(parse_scope(scope)) == scope


@pytest.mark.parametrize(
    "text, first, last",
    [
        ("Tesla Q3 2023 Financial Report", date(2023, 7, 1), date(2023, 9, 30)),
        ("results for 2023-Q2", date(2023, 4, 1), date(2023, 6, 30)),
        ("revenue in the third quarter of 2023", date(2023, 7, 1), date(2023, 9, 30)),
        ("Q4 FY2022 guidance", date(2022, 10, 1), date(2022, 12, 31)),
        ("FY2023 annual report", date(2023, 1, 1), date(2023, 12, 31)),
        ("Harborline Logistics 2022 Annual Report", date(2022, 1, 1), date(2022, 12, 31)),
        ("H1 2024 outlook", date(2024, 1, 1), date(2024, 6, 30)),
        ("How did sales change from 2022 to 2023?", date(2022, 1, 1), date(2023, 12, 31)),
    ],
)
def test_year_in_finds_the_period_a_title_or_question_names(text, first, last):
    assert year_in(text) == (first, last)


@pytest.mark.parametrize("text", ["Voltara Glossary of Battery Terms", "lot 12023", "3000 units", "up 1899 times"])
def test_year_in_text_without_a_plausible_year_is_none(text):
    assert year_in(text) is None


@pytest.mark.parametrize("scope, spoken", [
    ("2023-Q1", "Q1 2023"), ("2019-H2", "H2 2019"), ("2019-06", "June 2019"),
    ("2019-12-31", "December 31, 2019"),
    # a filing's columns: 13 and 26 weeks, a fiscal year ending in September
    ("2023-01-01..2023-04-01", "the three months ended April 1, 2023"),
    ("2022-10-01..2023-04-01", "the six months ended April 1, 2023"),
    ("2022-01-01..2022-09-30", "the nine months ended September 30, 2022"),
    ("2018-10-01..2019-09-30", "the year ended September 30, 2019"),
    ("2019-01-05..2019-03-03", "January 5, 2019 to March 3, 2019"),
    # a year, a fiscal period and what is no scope stay as written
    ("2019", "2019"), ("FY2019", "FY2019"), ("Q2 FY2023", "Q2 FY2023"), ("soon", "soon"),
])
def test_a_scope_is_said_as_a_reader_says_it(scope, spoken):
    assert spoken_scope(scope) == spoken

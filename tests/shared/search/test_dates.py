from datetime import date

import pytest

from shared.errors import InputError
from shared.search import ACCEPTED_FORMS, format_scope, parse_scope, year_in


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

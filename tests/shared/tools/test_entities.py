"""The entity finder: keyword sentences, the candidate nearest the keywords, numbers, dates."""

from __future__ import annotations

from datetime import date

import pytest

from shared.tools.entities import (find_dates, find_numbers, keyword_sentences, nearest,
                                   read_date)

TEXT = ("Tesla reported revenue of $23.35 billion. Gross margin was 17.9%. "
        "The battery yield rate of 91.7% missed the 92% target.\nDeliveries rose.")


def test_keyword_sentences_are_those_with_the_most_keywords():
    assert keyword_sentences(TEXT, ["battery", "yield", "rate"]) == [
        "The battery yield rate of 91.7% missed the 92% target."]


def test_a_sentence_needs_every_keyword_of_two_and_two_thirds_of_more():
    assert keyword_sentences(TEXT, ["battery", "cell"]) == []  # "cell" is in no sentence
    assert keyword_sentences(TEXT, ["battery", "yield"]) != []
    assert keyword_sentences(TEXT, ["battery", "yield", "scrap"]) != []
    assert keyword_sentences(TEXT, ["battery", "yield", "scrap", "ratio"]) == []


def test_keywords_match_plural_and_capitalized_forms():
    assert keyword_sentences(TEXT, ["GROSS", "margins"]) == ["Gross margin was 17.9%."]


def test_the_nearest_candidate_wins_and_a_tie_goes_to_the_one_after_the_label():
    sentence = "The battery yield rate of 91.7% missed the 92% target."
    assert nearest(find_numbers(sentence), sentence, ["yield", "rate"]) == "91.7%"
    assert nearest([(0, 2, "before"), (8, 10, "after")], "12 rate 34", ["rate"]) == "after"


def test_numbers_inside_dates_are_not_numbers():
    sentence = "In Q3 2023, on 2023-09-30, cash was $26.08 billion and staff 140,473."
    assert [v for *_, v in find_numbers(sentence)] == ["$26.08 billion", "140,473"]


def test_number_words_count_only_in_a_sentence_without_numerals():
    assert [v for *_, v in find_numbers("The plant has twelve lines and ninety-one robots.")] \
        == ["12", "91"]
    assert [v for *_, v in find_numbers("One plant has 12 lines.")] == ["12"]


def test_dates_prefer_the_most_specific_form():
    found = [v for *_, v in find_dates("From 30 September 2023 to March 2024, the third "
                                       "quarter of 2024 and 2025.")]
    assert found == ["30 September 2023", "March 2024", "third quarter of 2024", "2025"]


@pytest.mark.parametrize("text, day", [
    ("2023-09-30", date(2023, 9, 30)), ("30 Sep 2023", date(2023, 9, 30)),
    ("September 30th, 2023", date(2023, 9, 30)), ("2023-02-30", None), ("Q3 2023", None),
    ("91.7", None),
])
def test_read_date_accepts_calendar_dates_only(text, day):
    assert read_date(text) == day

"""Patterns: compiling plan patterns, searching under a timeout, the quantity library."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.tools.patterns import LIBRARY, compile_pattern, literal_words, search


@pytest.mark.parametrize("pattern, words", [
    (r"battery yield rate.*?(\d+\.\d+)%", ["battery", "yield", "rate"]),
    (r"(?P<v>revenue|sales)\s+of\s+\$([\d.,]+)\s*billion", ["revenue", "sales", "billion"]),
    (r"(?i)gross\s+margin[^\d]{0,40}(\d+)", ["gross", "margin"]),
    (r"(?<=the )total of the deliveries:?\s*(\d+)", ["total", "deliveries"]),
    (r"(\d+)%", []),
])
def test_literal_words_drop_regex_syntax_and_stopwords(pattern, words):
    assert literal_words(pattern) == words


def test_a_pattern_that_does_not_compile_is_a_bad_pattern_naming_the_field():
    with pytest.raises(ToolError) as e:
        compile_pattern("(unclosed", "pattern")
    assert e.value.code == "BAD_PATTERN" and "pattern `(unclosed`" in e.value.message


def test_a_pattern_without_the_needed_capture_group_is_a_bad_pattern():
    with pytest.raises(ToolError) as e:
        compile_pattern("no group", "pattern", groups=1)
    assert e.value.code == "BAD_PATTERN" and "capture group" in e.value.message


def test_patterns_ignore_case():
    assert search(compile_pattern("REVENUE", "pattern"), "revenue rose", 1.0, "text")


def test_a_catastrophic_search_is_a_pattern_timeout_naming_what_it_searched():
    with pytest.raises(ToolError) as e:
        search(compile_pattern(r"(a+)+$", "pattern"), "a" * 10_000 + "b", 0.05, "item 3")
    assert e.value.code == "PATTERN_TIMEOUT" and "item 3" in e.value.message


@pytest.mark.parametrize("quantity, text, value", [
    ("percent", "margin was 17.9% overall", "17.9"),
    ("percent", "margin was 17.9 per cent overall", "17.9"),
    ("money", "revenue of $23.35 billion in Q3", "$23.35 billion"),
    ("money", "net income of €412 million", "€412 million"),
    ("date", "as of 2023-09-30.", "2023-09-30"),
    ("date", "on 30 September 2023", "30 September 2023"),
    ("date", "on Sept. 30, 2023", "Sept. 30, 2023"),
    ("number", "delivered 435,059 units", "435,059"),
    ("article", "under Article 12 of the act", "Article 12"),
    ("article", "see § 4.2(1) below", "§ 4.2(1)"),
])
def test_the_library_finds_each_quantity_as_documents_write_it(quantity, text, value):
    assert LIBRARY[quantity].search(text)[1] == value


@pytest.mark.parametrize("text", ["17.9% margin", "$23 revenue", "Q3 results"])
def test_the_number_pattern_leaves_percents_money_and_labels_to_their_own_patterns(text):
    assert LIBRARY["number"].search(text) is None

"""Snippets cut from a document's text for a search: the searched words marked, the
passage that holds most of them, and a scan that stops after MAX_MATCHES matches."""

from __future__ import annotations

from shared.search import snippet as snippets
from shared.search.snippet import MAX_MATCHES, MAX_TERMS, snippet


def test_the_searched_words_are_marked_in_the_passage_that_holds_most_of_them():
    text = ("The board met in March; nothing else was decided that day, and the meeting "
            "ended early. Later the board approved the dividend and revenue guidance for "
            "the year.")
    assert snippet(text, "board revenue dividend") == (
        "…early. Later the **board** approved the **dividend** and **revenue** guidance "
        "for the year.")


def test_other_forms_of_a_word_are_marked_like_the_search_store_matches_them():
    text = "Both companies reported record deliveries; the company expects more."
    marked = snippet(text, "company delivery report")
    assert "**companies** **reported** record **deliveries**" in marked
    assert "the **company** expects" in marked


def test_a_word_that_only_begins_like_a_searched_word_is_not_marked():
    assert "**" not in snippet("Rather dull rations were served.", "rate")


def test_signs_at_the_edges_stay_with_their_figures():
    text = ("a b c d e f g h i j k l m n o p q r s t u v w x y z " * 3
            + "margin was $12.5 million, up 7%.")
    assert snippet(text, "margin").endswith("**margin** was $12.5 million, up 7%.")
    assert snippet("$5 was the price", "price").startswith("$5 was the **price**")


def test_a_document_without_the_searched_words_gives_its_opening_words():
    text = " ".join(f"w{i}" for i in range(40))
    assert snippet(text, "absent") == " ".join(f"w{i}" for i in range(16)) + "…"


def test_ideographs_are_matched_one_by_one_and_kept_together():
    marked = snippet("公司第三季度营收增长了百分之十。", "营收")
    assert "**营****收**" in marked and " " not in marked


def test_the_scan_reads_at_most_max_matches_of_a_word_however_often_the_document_holds_it():
    matcher = snippets._matcher(("revenue",))
    found = matcher("Revenue grew. " * (50 * MAX_MATCHES))
    assert len(found) == MAX_MATCHES


def test_a_query_of_thousands_of_words_looks_for_its_first_max_terms_only():
    query = " ".join(f"word{i}" for i in range(100 * MAX_TERMS))
    last = f"word{100 * MAX_TERMS - 1}"
    assert snippet(f"Here word3 and {last} appear.", query) == (
        f"Here **word3** and {last} appear.")

"""SEARCH: ranked snippets from a real SQLite store, each with its document as evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import ToolError
from shared.models import SearchStep
from shared.search import SqliteSearch
from shared.tools.search import run_search


def search(query: str, scope: str | None = None, top_k: int = 5) -> SearchStep:
    return SearchStep(id="S1", operation="SEARCH", query=query, temporal_scope=scope,
                      top_k=top_k, output_var="$HITS")


def test_search_returns_snippets_best_first_with_one_document_per_snippet(corpus):
    out = run_search(search("battery yield rate", top_k=3), {}, corpus)
    assert len(out.value) == len(out.documents) == 3
    assert all("yield" in snippet.lower() for snippet in out.value)
    assert out.document == out.documents[0]
    assert len({d.doc_id for d in out.documents}) == 3


def test_snippets_lose_the_search_highlighting_so_patterns_see_plain_words(corpus):
    out = run_search(search("battery yield rate"), {}, corpus)
    assert not any("**" in snippet for snippet in out.value)


def test_a_temporal_scope_keeps_only_documents_about_it(corpus):
    out = run_search(search("gross margin", scope="2023-Q2", top_k=10), {}, corpus)
    assert out.documents and all(d.period == "2023-Q2" for d in out.documents)
    assert any(d.date > "2023-06-30" for d in out.documents)  # published after the quarter


def test_a_period_named_in_the_query_keeps_to_that_period_as_a_get_source_does(corpus):
    out = run_search(search("Tesla gross margin Q2 2023", top_k=10), {}, corpus)
    assert out.documents[0].title == "Tesla Q2 2023 Financial Report"
    assert {d.period for d in out.documents} <= {"2023-Q2", None}
    assert all("2023-04-01" <= d.date <= "2023-12-27" for d in out.documents if not d.period)


def test_no_hit_in_the_period_names_the_nearest_documents_and_their_periods(corpus):
    with pytest.raises(ToolError) as caught:
        run_search(search("Tesla gross margin Q1 2022"), {}, corpus)
    assert "closest: '" in caught.value.message
    assert ("(period 2024-Q1, published 2024-05-02): title names 2024-Q1, the source names "
            "2022-Q1") in caught.value.message


def test_variables_in_the_query_are_replaced_by_their_values_and_recorded_as_inputs(corpus, ok):
    company = ok("E1", "Northwind Motors")
    out = run_search(search("$CO battery yield rate", top_k=1), {"CO": company}, corpus)
    assert out.documents[0].title.startswith("Northwind Motors")
    assert out.inputs == ["q:E1"]


def test_no_hit_is_not_found_and_names_the_query_as_substituted(corpus, ok):
    with pytest.raises(ToolError) as caught:
        run_search(search("$CO cabin crew roster"), {"CO": ok("E1", "Zephyr")}, corpus)
    assert caught.value.code == "NOT_FOUND"
    assert "'Zephyr cabin crew roster'" in caught.value.message
    assert "'$CO cabin crew roster'" in caught.value.message


def test_a_query_variable_without_a_value_is_a_missing_input(corpus):
    with pytest.raises(ToolError) as caught:
        run_search(search("$CO revenue"), {}, corpus)
    assert caught.value.code == "MISSING_INPUT" and "$CO" in caught.value.message


def test_an_unreadable_temporal_scope_is_a_bad_scope_error(corpus):
    with pytest.raises(ToolError) as caught:
        run_search(search("revenue", scope="last summer"), {}, corpus)
    assert caught.value.code == "BAD_SCOPE" and "'last summer'" in caught.value.message


def test_an_unreadable_store_is_a_search_failed_error(tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_text("not sqlite " * 200)
    with pytest.raises(ToolError) as caught:
        run_search(search("revenue"), {}, SqliteSearch(broken))
    assert caught.value.code == "SEARCH_FAILED"


def test_a_snippet_from_a_filing_names_its_page_and_the_footnote_cites_it(tmp_path):
    from shared.ingest import read_file

    pdf = Path(__file__).parents[2] / "fixtures" / "documents" / "pati-20141231-10q.pdf"
    (filing,) = read_file(pdf, {"title": "Patriot Transportation Holding Form 10-Q Q1 FY2015",
                                "date": "2015-02-11"}).documents
    with SqliteSearch(tmp_path / "search.db") as store:
        store.add([filing])
        out = run_search(search("revolving credit uncollateralized", top_k=2), {}, store)
    assert out.documents[0].page == 8
    assert "Revolving credit (uncollateralized)" in out.value[0]
    assert "page 8" in out.documents[0].cite()

"""The SearchBackend contract, run against every backend: the embedded SQLite store, the
same store behind the shared GET cache (real Redis), and Elasticsearch when
CHORDAL_ES_URL names one (each test then gets its own index, deleted afterwards)."""

from __future__ import annotations

import uuid
from datetime import date

import pytest

from shared.errors import ToolError
from shared.models import GetStep
from shared.search import FULL_TEXT, TITLE_MATCH, URL_MATCH, Document, SqliteSearch
from shared.search.cache import CachedSearch
from shared.tools.get import run_get

Q2 = (date(2023, 4, 1), date(2023, 6, 30))
Q3 = (date(2023, 7, 1), date(2023, 9, 30))

CORPUS = [
    Document(id="tsla-q3", title="Tesla Q3 2023 Financial Report", date="2023-09-30",
             url="https://ir.tesla.example/q3-2023", source_type="official_report",
             content="Tesla reported a battery yield rate of 91.7% for the quarter."),
    Document(id="tsla-q2", title="Tesla Q2 2023 Financial Report", date="2023-06-30",
             content="Tesla reported a battery yield rate of 90.2% for the quarter."),
    Document(id="bulletin-1", title="Weekly Bulletin", date="2023-12-01",
             content="First December bulletin: ferries run on the winter timetable."),
    Document(id="bulletin-2", title="Weekly Bulletin", date="2023-12-08",
             content="Second December bulletin: trains replace the night ferries."),
    Document(id="acme-2022", title="Acme Annual Report", date="2022-12-31",
             content="Acme revenue reached 12 million in 2022."),
    Document(id="acme-2023", title="Acme Annual Report", date="2023-12-31",
             content="Acme revenue reached 15 million in 2023."),
    Document(id="harbor", title="Harborline Logistics Fleet Census 2022",
             content="Harborline counted 4,100 containers (an undated scan)."),
    Document(id="nevada", title="Battery makers expand in Nevada", date="2023-08-15",
             content="A new gigafactory expansion near Reno adds lithium refining capacity."),
]


@pytest.fixture(params=["sqlite", "sqlite+get-cache", "elasticsearch"])
def backend(request, tmp_path):
    """An empty backend of each kind."""
    if request.param == "elasticsearch":
        from elasticsearch import Elasticsearch

        from shared.search.elastic import ElasticSearch

        url = request.getfixturevalue("es_url")
        index = f"chordal-test-{uuid.uuid4().hex[:12]}"
        store = ElasticSearch(url, index, timeout_s=30)
        yield store
        store.close()
        with Elasticsearch(url) as admin:
            admin.indices.delete(index=index, ignore_unavailable=True)
        return
    store = SqliteSearch(tmp_path / "search.db")
    if request.param == "sqlite+get-cache":
        store = CachedSearch(store, request.getfixturevalue("r"), bucket_s=1800)
    yield store
    store.close()


@pytest.fixture
def corpus(backend):
    assert backend.add(CORPUS) == len(CORPUS)
    return backend


def get(backend, source: str, **fields):
    return run_get(GetStep(id="E1", operation="GET", source=source, **fields), backend)


def test_an_empty_store_counts_no_documents_and_finds_nothing(backend):
    assert backend.count() == 0
    assert backend.best("Tesla Q3 2023 Financial Report") is None
    assert backend.search("battery") == []


def test_count_is_the_number_of_documents_added(corpus):
    assert corpus.count() == len(CORPUS)


def test_adding_a_document_under_a_known_id_replaces_it_instead_of_adding_a_copy(backend):
    backend.add([Document(id="n1", title="Notice", content="Old wording about ferries.")])
    backend.add([Document(id="n1", title="Notice", content="New wording about trains.")])
    assert backend.count() == 1
    assert backend.best("Notice")[0].content == "New wording about trains."
    assert [h.document.id for h in backend.search("trains")] == ["n1"]
    assert backend.search("ferries") == []


def test_re_adding_the_same_documents_does_not_grow_the_store(corpus):
    corpus.add(CORPUS)
    assert corpus.count() == len(CORPUS)


def test_best_finds_a_document_by_its_exact_title_in_any_case(corpus):
    doc, confidence = corpus.best("tesla q3 2023 financial REPORT")
    assert (doc.id, confidence) == ("tsla-q3", TITLE_MATCH)
    assert (doc.date, doc.url, doc.source_type) == (
        "2023-09-30", "https://ir.tesla.example/q3-2023", "official_report")


def test_best_finds_a_document_by_its_url(corpus):
    doc, confidence = corpus.best("https://ir.tesla.example/q3-2023")
    assert (doc.id, confidence) == ("tsla-q3", URL_MATCH)


def test_of_documents_sharing_a_title_best_returns_the_latest(corpus):
    assert corpus.best("Weekly Bulletin")[0].id == "bulletin-2"


def test_a_title_holding_every_word_of_the_source_in_another_order_is_a_title_match(corpus):
    doc, confidence = corpus.best("Tesla financial report 2023 Q3")
    assert (doc.id, confidence) == ("tsla-q3", TITLE_MATCH)


def test_a_source_found_only_in_the_text_needs_half_of_its_words(corpus):
    doc, confidence = corpus.best("gigafactory expansion Reno zebra")
    assert (doc.id, confidence) == ("nevada", FULL_TEXT)
    assert corpus.best("gigafactory zebra walrus quartz") is None


def test_a_date_range_keeps_only_documents_dated_within_it(corpus):
    assert corpus.best("Weekly Bulletin", (date(2023, 12, 1), date(2023, 12, 5)))[0].id == "bulletin-1"
    assert corpus.best("Tesla Q3 2023 Financial Report", Q2) == (CORPUS[1], FULL_TEXT)
    assert [h.document.id for h in corpus.search("battery yield rate", 5, Q2)] == ["tsla-q2"]


def test_undated_documents_never_pass_a_date_filter(corpus):
    source = "Harborline Logistics Fleet Census 2022"
    assert corpus.best(source)[0].id == "harbor"
    assert corpus.best(source, (date(1900, 1, 1), date(2100, 12, 31))) is None
    assert corpus.search("Harborline containers", 5, (date(1900, 1, 1), date(2100, 12, 31))) == []


def test_a_year_in_a_get_source_narrows_it_to_that_period(corpus):
    out = get(corpus, "Acme Annual Report 2022")
    assert out.value == "Acme revenue reached 12 million in 2022."
    assert out.document.date == "2022-12-31"


def test_a_year_in_a_get_source_still_admits_an_undated_document_of_that_title(corpus):
    assert get(corpus, "Harborline Logistics Fleet Census 2022").document.doc_id == "harbor"
    with pytest.raises(ToolError) as caught:  # an explicit scope is not a hint
        get(corpus, "Harborline Logistics Fleet Census 2022", temporal_scope="2022")
    assert caught.value.code == "NOT_FOUND"


def test_search_ranks_documents_and_highlights_the_matched_words_in_a_snippet(corpus):
    hits = corpus.search("gigafactory lithium", 3)
    assert hits[0].document.id == "nevada"
    assert "**gigafactory**" in hits[0].snippet.lower()
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_search_returns_at_most_limit_hits(corpus):
    assert len(corpus.search("report", 2)) == 2


def test_a_query_of_stopwords_only_finds_nothing(corpus):
    assert corpus.search("the of and") == []
    assert corpus.best("the of and") is None

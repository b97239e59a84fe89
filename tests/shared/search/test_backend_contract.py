"""The SearchBackend contract, run against every backend: the embedded SQLite store, the
same store behind the shared GET cache (real Redis), and Elasticsearch when
CHORDAL_ES_URL names one (each test then gets its own index, deleted afterwards).

`GET_TABLE` is the one table of GET source -> expected document (or refusal) that every
backend must answer alike, on a corpus dated by publication, with near-duplicate
titles, another company's report of the same quarter, a preview published inside the
quarter, a fiscal year, an undated scan and a Chinese title."""

from __future__ import annotations

import uuid
from datetime import date

import pytest

from shared.errors import ToolError
from shared.models import GetStep
from shared.search import PARTIAL_TITLE, TITLE_MATCH, URL_MATCH, Document, SqliteSearch
from shared.search.cache import CachedSearch
from shared.search.fit import Window
from shared.tables.read import table_from_rows
from shared.tools.get import run_get


def doc(doc_id: str, title: str, published: str | None, content: str, **extra) -> Document:
    return Document(id=doc_id, title=title, date=published, content=content, **extra)


CORPUS = [
    doc("acme-ar-2023", "Acme Annual Report 2023", "2024-02-20",
        "Acme's operating margin was 8.4% in 2023.", source_type="official_report"),
    doc("acme-ar-2024", "Acme Annual Report 2024", "2025-02-18",
        "Acme's operating margin was 9.1% in 2024, up from 8.4% in 2023.",
        source_type="official_report", url="https://ir.acme.example/ar-2024"),
    doc("acme-ar-2024-draft", "Draft: Acme Annual Report 2024", "2025-01-30",
        "Draft figures: operating margin about 9.0% in 2024.", source_type="draft"),
    doc("acme-q2", "Acme Q2 2024 Production Report", "2024-07-17",
        "Acme built 41,200 units in the quarter.", source_type="official_report"),
    doc("acme-q3", "Acme Q3 2024 Production Report", "2024-10-16",
        "Acme built 44,900 units in the quarter.", source_type="official_report"),
    doc("bolt-preview", "Bolt Motors Q3 2024 preview: output expected to rise", "2024-09-12",
        "Analysts expect Bolt Motors to build 30,000 units; its production report is due "
        "in October.", source_type="news"),
    doc("bolt-q3", "Bolt Motors Q3 2024 Production Report", "2024-10-20",
        "Bolt Motors built 31,450 units in the quarter.", source_type="official_report"),
    doc("bulletin-1", "Weekly Bulletin", "2023-12-01",
        "First December bulletin: ferries run on the winter timetable."),
    doc("bulletin-2", "Weekly Bulletin", "2023-12-08",
        "Second December bulletin: trains replace the night ferries."),
    doc("harbor", "Harborline Logistics Fleet Census 2022", None,
        "Harborline counted 4,100 containers (an undated scan)."),
    doc("nevada", "Voltara Energy opens solid-state pilot line in Dresden", "2023-11-06",
        "The investment of 310 million euros adds a pilot line for solid-state cells."),
    doc("huachuan-q3", "华川电子2024年第三季度报告", "2024-10-25",
        "营业收入为人民币52.3亿元，同比增长12%。毛利率为23.1%。"),
    doc("kestrel-fy", "Kestrel FY2024 Annual Report", "2024-08-22",
        "Kestrel's fiscal year ended June 30, 2024 with revenue of $1.9 billion.",
        period="2023-07-01..2024-06-30"),
]

GET_TABLE = [
    # (source, temporal_scope, expected document id or refusal code)
    ("Acme Annual Report 2024", None, "acme-ar-2024"),
    ("acme annual report 2024", None, "acme-ar-2024"),
    ("Acme's 2024 annual report", None, "acme-ar-2024"),
    ("The annual report of Acme for 2024", None, "acme-ar-2024"),
    ("Annual Report 2024, Acme", None, "acme-ar-2024"),
    ("https://ir.acme.example/ar-2024", None, "acme-ar-2024"),
    ("Acme Annual Report 2023", None, "acme-ar-2023"),
    ("Draft Acme Annual Report 2024", None, "acme-ar-2024-draft"),
    ("Acme Annual Report", "2024", "acme-ar-2024"),
    ("Acme Annual Report 2022", None, "NOT_FOUND"),
    ("Acme Annual Report 2024", "2023", "NOT_FOUND"),
    ("Acme Q3 2024 Production Report", "2024-Q3", "acme-q3"),
    ("Acme Q3 2024 Production Report", None, "acme-q3"),
    ("Acme third-quarter 2024 production report", None, "acme-q3"),
    ("Acme 2024 Q3 production report", None, "acme-q3"),
    ("Acme Q3 2024 Report", None, "acme-q3"),
    ("Acme Production Report", "2024-Q2", "acme-q2"),
    ("Acme Production Report", None, "AMBIGUOUS"),  # Q2 or Q3: the source does not say
    ("Acme Q4 2024 Production Report", None, "NOT_FOUND"),
    ("Acme Q3 2024 Financial Report", None, "NOT_FOUND"),
    ("Acme Q3 2023 Production Report", None, "NOT_FOUND"),
    ("Bolt Motors Q3 2024 Production Report", "2024-Q3", "bolt-q3"),
    ("Zephyr Q3 2024 Production Report", None, "NOT_FOUND"),
    ("Q3 2024 Production Report", None, "AMBIGUOUS"),
    ("Weekly Bulletin", None, "bulletin-2"),
    ("Weekly Bulletin", "2023-12-01..2023-12-05", "bulletin-1"),
    ("Weekly Bulletin December 2023", None, "bulletin-2"),
    ("Weekly Bulletin", "2022", "NOT_FOUND"),
    ("Harborline Logistics Fleet Census 2022", None, "harbor"),
    ("Harborline Logistics Fleet Census", "2022", "harbor"),
    ("Voltara solid-state pilot line Dresden investment", None, "nevada"),
    ("Voltara solid-state pilot line Dresden zebra", None, "NOT_FOUND"),
    ("华川电子2024年第三季度报告", None, "huachuan-q3"),
    ("华川电子 Q3 2024 报告", None, "huachuan-q3"),
    ("华川电子2024年第二季度报告", None, "NOT_FOUND"),
    ("Kestrel FY2024 Annual Report", None, "kestrel-fy"),
    ("Kestrel Annual Report", "2024-Q3", "NOT_FOUND"),
    ("Kestrel Annual Report", "2024-Q2", "NOT_FOUND"),  # its fiscal year is wider than Q2
    ("Kestrel Annual Report", "2023-07-01..2024-06-30", "kestrel-fy"),
    ("Acme Annual Report", "2024-Q3", "NOT_FOUND"),  # a year's figures are not Q3's
    ("the of and", None, "NOT_FOUND"),
]


@pytest.fixture(params=["sqlite", pytest.param("sqlite+get-cache", marks=pytest.mark.integration),
                        "elasticsearch"])
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


def outcome(backend, source: str, scope: str | None) -> str:
    try:
        return get(backend, source, temporal_scope=scope).document.doc_id
    except ToolError as e:
        return e.code


@pytest.mark.parametrize("source, scope, expected", GET_TABLE,
                         ids=[f"{s}|{sc}" for s, sc, _ in GET_TABLE])
def test_get_finds_the_document_the_table_names_or_refuses(corpus, source, scope, expected):
    assert outcome(corpus, source, scope) == expected


def test_an_empty_store_counts_no_documents_and_finds_nothing(backend):
    assert backend.count() == 0
    assert backend.best("Tesla Q3 2023 Financial Report").found == []
    assert backend.search("battery") == []


def test_count_is_the_number_of_documents_added(corpus):
    assert corpus.count() == len(CORPUS)


def test_adding_a_document_under_a_known_id_replaces_it_instead_of_adding_a_copy(backend):
    backend.add([Document(id="n1", title="Notice", content="Old wording about ferries.")])
    backend.add([Document(id="n1", title="Notice", content="New wording about trains.")])
    assert backend.count() == 1
    assert backend.best("Notice").found[0].document.content == "New wording about trains."
    assert [h.document.id for h in backend.search("trains")] == ["n1"]
    assert backend.search("ferries") == []


def test_re_adding_the_same_documents_does_not_grow_the_store(corpus):
    corpus.add(CORPUS)
    assert corpus.count() == len(CORPUS)


def test_a_document_keeps_its_period_and_where_it_came_from(corpus):
    found = {f.document.id: f.document for f in corpus.best("Acme Production Report").found}
    assert (found["acme-q3"].period, found["acme-q3"].period_origin) == ("2024-Q3", "inferred")
    kestrel = corpus.best("Kestrel FY2024 Annual Report").found[0].document
    assert (kestrel.period, kestrel.period_origin) == ("2023-07-01..2024-06-30", "given")


def test_each_confidence_says_how_the_title_matched(corpus):
    assert get(corpus, "Acme Annual Report 2024").confidence == TITLE_MATCH
    assert get(corpus, "https://ir.acme.example/ar-2024").confidence == URL_MATCH
    partial = get(corpus, "Voltara solid-state pilot line Dresden investment")
    assert partial.confidence == PARTIAL_TITLE and partial.document.match == PARTIAL_TITLE


def test_the_chosen_document_is_recorded_with_every_candidate_and_its_verdict(corpus):
    assert [c.doc_id for c in get(corpus, "Acme Annual Report 2024").candidates] == [
        "acme-ar-2024"]  # the exact title: nothing can beat it, nothing else is searched
    out = get(corpus, "Acme's 2024 annual report")
    verdicts = {c.doc_id: (c.verdict, c.reason) for c in out.candidates}
    assert verdicts["acme-ar-2024"][0] == "chosen"
    assert verdicts["acme-ar-2024-draft"] == (
        "rejected", "title marks a provisional version ('Draft') that the source does not ask for")
    assert out.document.period == "2024" and out.document.date == "2025-02-18"
    with pytest.raises(ToolError) as caught:
        get(corpus, "Acme Annual Report", temporal_scope="2022")
    assert {c.doc_id: c.reason for c in caught.value.candidates}["acme-ar-2024"] == (
        "about 2024, outside temporal_scope 2022")


def test_not_found_names_the_nearest_documents_with_period_and_publication_date(corpus):
    with pytest.raises(ToolError) as caught:
        get(corpus, "Acme Q4 2024 Production Report")
    message = caught.value.message
    assert "closest: 'Acme" in message
    assert "(period 2024-Q3, published 2024-10-16)" in message
    assert "title names 2024-Q3, the source names 2024-Q4" in message
    assert caught.value.candidates and caught.value.candidates[0].verdict == "rejected"


def test_ambiguous_sources_name_both_documents(corpus):
    with pytest.raises(ToolError) as caught:
        get(corpus, "Q3 2024 Production Report")
    assert "'Acme Q3 2024 Production Report'" in caught.value.message
    assert "'Bolt Motors Q3 2024 Production Report'" in caught.value.message


def test_a_preview_from_inside_the_quarter_is_never_taken_for_the_missing_report(backend):
    backend.add([d for d in CORPUS if d.id != "bolt-q3"])
    with pytest.raises(ToolError) as caught:
        get(backend, "Bolt Motors Q3 2024 Production Report", temporal_scope="2024-Q3")
    assert caught.value.code == "NOT_FOUND"
    assert "'Bolt Motors Q3 2024 preview" in caught.value.message


def test_a_draft_is_never_taken_for_the_missing_final_report(backend):
    backend.add([d for d in CORPUS if d.id != "acme-ar-2024"])
    with pytest.raises(ToolError) as caught:
        get(backend, "Acme Annual Report 2024")
    assert "'Draft: Acme Annual Report 2024' (period 2024, published 2025-01-30): title marks " \
           "a provisional version" in caught.value.message


def test_top_k_gets_only_documents_that_fit_the_same_rules(corpus):
    out = get(corpus, "Acme Production Report", top_k=3)
    assert [e.doc_id for e in out.documents] == ["acme-q3", "acme-q2"]
    out = get(corpus, "Acme Production Report", temporal_scope="2024-Q3", top_k=3)
    assert [e.doc_id for e in out.documents] == ["acme-q3"]


def test_a_window_keeps_documents_about_it_or_published_within_the_lag_after_it(corpus):
    q3 = Window(date(2024, 7, 1), date(2024, 9, 30), lag_days=30)
    ids = {h.document.id for h in corpus.search("Acme Bolt production units", 20, q3)}
    assert ids == {"acme-q3", "bolt-q3", "bolt-preview", "acme-ar-2024", "acme-ar-2024-draft"}
    lagged = Window(date(2023, 11, 1), date(2023, 11, 30), lag_days=7)
    assert {h.document.id for h in corpus.search("bulletin", 5, lagged)} == {"bulletin-1"}


def test_documents_with_neither_period_nor_date_never_fit_a_window(corpus):
    everything = Window(date(1900, 1, 1), date(2100, 12, 31), lag_days=0)
    ids = {d.id for d in corpus.candidates("Harborline Fleet Census", everything, 50)}
    assert "harbor" in ids  # its period comes from the title
    corpus.add([Document(id="scan", title="Harborline scan", content="Harborline old scan")])
    assert "scan" not in {d.id for d in corpus.candidates("Harborline scan", everything, 50)}
    assert "scan" in {d.id for d in corpus.candidates("Harborline scan", None, 50)}


def test_search_ranks_documents_and_highlights_the_matched_words_in_a_snippet(corpus):
    hits = corpus.search("solid-state pilot", 3)
    assert hits[0].document.id == "nevada"
    assert "**pilot**" in hits[0].snippet.lower()
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_chinese_text_is_searched_character_by_character_and_snippets_keep_it_whole(corpus):
    hits = corpus.search("毛利率", 3)
    assert hits[0].document.id == "huachuan-q3"
    assert " " not in hits[0].snippet.replace("** ", "").replace(" **", "")


def test_a_document_longer_than_the_highlighter_reads_still_gets_a_marked_snippet(backend):
    minutes = "The board met and approved the minutes. Nothing else was recorded. "
    backend.add([Document(id="archive", title="Board minutes archive", date="2024-03-01",
                          content=minutes * 20_000)])  # 1.3 MB, "board" 20,000 times
    hits = backend.search("board", 1)
    assert hits[0].document.id == "archive" and "**board**" in hits[0].snippet.lower()


def test_search_returns_at_most_limit_hits(corpus):
    assert len(corpus.search("report", 2)) == 2


def test_a_query_of_stopwords_only_finds_nothing(corpus):
    assert corpus.search("the of and") == []
    assert corpus.best("the of and").found == []


FILING = Document(
    id="pati-10k-2019", title="Patriot Transportation Holding Form 10-K 2019",
    date="2019-12-11", period="2018-10-01..2019-09-30", source_type="filing",
    content="\f".join([
        "UNITED STATES SECURITIES AND EXCHANGE COMMISSION Form 10-K",
        "Business. The Company transports petroleum products in the Southeast.",
        "CONSOLIDATED STATEMENTS OF CASH FLOWS - Years ended September 30 (In thousands)\n"
        "Purchase of property and equipment    (9,576)    (4,656)    (6,332)",
        "Liquidity. Capital expenditures were funded from operations."]),
    tables=[table_from_rows(
        [["", "2019", "2018", "2017"],
         ["Purchase of property and equipment", "(9,576)", "(4,656)", "(6,332)"],
         ["Net cash provided by operating activities", "10,429", "7,772", "10,660"]],
        page=3, title="CONSOLIDATED STATEMENTS OF CASH FLOWS - Years ended September 30 "
                      "(In thousands)")])
"""Four pages of a filing (the form feed before each page after the first) and the table
on its third."""


def test_search_ranks_pages_and_each_hit_names_the_page_its_snippet_is_on(corpus):
    corpus.add([FILING])
    hits = corpus.search("purchase property equipment", 3)
    assert (hits[0].document.id, hits[0].page) == ("pati-10k-2019", 3)
    assert "**Purchase** of **property** and **equipment**" in hits[0].snippet
    assert "\f" not in hits[0].snippet and "Liquidity" not in hits[0].snippet
    assert corpus.search("capital expenditures funded", 1)[0].page == 4
    assert corpus.search("solid-state pilot", 1)[0].page is None  # a document without pages


def test_a_document_is_found_and_read_whole_with_its_pages(corpus):
    corpus.add([FILING])
    out = get(corpus, "Patriot Transportation Holding Form 10-K 2019")
    assert out.value == FILING.content and out.document.page is None
    assert corpus.documents(["pati-10k-2019", "no-such-id"]) == {
        "pati-10k-2019": FILING.model_copy(update={"tables": []})}


def test_a_documents_tables_are_kept_beside_it_and_replaced_with_it(corpus):
    corpus.add([FILING])
    assert corpus.tables("pati-10k-2019") == FILING.tables
    (table,) = corpus.tables("pati-10k-2019")
    assert (table.page, table.scale, [c.period for c in table.columns][0]) == (
        3, 3, "2018-10-01..2019-09-30")
    corpus.add([FILING.model_copy(update={"tables": []})])
    assert corpus.tables("pati-10k-2019") == []
    assert corpus.tables("acme-q3") == [] and corpus.tables("no-such-id") == []

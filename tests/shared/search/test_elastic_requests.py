"""The Elasticsearch request bodies and response parsing, without a server: each body is
checked against the client's own query DSL (an unknown query type fails to parse), and
responses are the shapes the search API documents."""

from __future__ import annotations

from datetime import date

import pytest
from elasticsearch.dsl import Search

from shared.search import Document
from shared.search.elastic_requests import (EXACT_BOOST, MAPPING, bulk_actions,
                                            candidates_body, documents_of, failed_items,
                                            hits_of, mapping_problems, schema_outdated,
                                            search_body, tables_of, window_filter)
from shared.search.fit import Window

Q3 = Window(date(2023, 7, 1), date(2023, 9, 30), lag_days=90)
SOURCE = "Tesla Q3 2023 Financial Report"


def hit(doc_id: str, title: str, content: str = "text", **extra) -> dict:
    return {"_id": doc_id, "_score": extra.pop("_score", 1.0),
            "_source": {"id": doc_id, "title": title, "content": content, "date": None,
                        "url": None, "source_type": None}, **extra}


def response(*hits: dict) -> dict:
    return {"took": 1, "timed_out": False, "hits": {"hits": list(hits)}}


@pytest.mark.parametrize("body", [
    candidates_body(SOURCE, None, 50), candidates_body(SOURCE, Q3, 50, outline=True),
    search_body("battery yield", 5, None), search_body("battery yield", 5, Q3),
], ids=["candidates", "candidates-windowed", "search", "search-windowed"])
def test_every_request_body_is_valid_elasticsearch_query_dsl(body):
    assert Search.from_dict(body).to_dict() == body


def test_a_window_selects_an_overlapping_period_or_no_period_and_a_publication_in_the_lag():
    (clause,) = window_filter(Q3)
    about, published = clause["bool"]["should"]
    assert about["bool"]["filter"] == [{"range": {"period_start": {"lte": "2023-09-30"}}},
                                       {"range": {"period_end": {"gte": "2023-07-01"}}}]
    assert published["bool"]["must_not"] == [{"exists": {"field": "period_start"}}]
    assert published["bool"]["filter"] == [
        {"range": {"date": {"gte": "2023-07-01", "lte": "2023-12-29"}}}]  # + 90 days
    for body in (candidates_body(SOURCE, Q3, 50), search_body("yield", 5, Q3)):
        assert body["query"]["bool"]["filter"] == [clause]


def test_without_a_window_no_document_is_filtered_out():
    assert "filter" not in candidates_body(SOURCE, None, 50)["query"]["bool"]
    assert "filter" not in search_body("yield", 5, None)["query"]["bool"]


def test_candidates_put_the_exact_title_or_url_first_then_a_phrase_then_words():
    body = candidates_body(f"  {SOURCE} ", None, 50)
    title, url, phrase, words = body["query"]["bool"]["should"]
    assert title["constant_score"] == {"filter": {"term": {"title.keyword": SOURCE}},
                                       "boost": EXACT_BOOST}
    assert url["constant_score"]["filter"] == {"term": {"url": SOURCE}}
    assert phrase["match_phrase"]["title"]["query"] == SOURCE
    assert words["multi_match"]["query"] == "tesla financial report"  # no period, stopwords
    assert words["multi_match"]["fields"] == ["title^3", "content"]
    assert body["size"] == 50 and body["sort"][1] == {"date": {"order": "desc", "missing": "_last"}}
    assert MAPPING["properties"]["title"]["fields"]["keyword"]["normalizer"] == "lowercase"


def test_a_query_of_stopwords_only_sends_no_search_request():
    assert search_body("what was it", 5, None) is None
    assert search_body("yield", 0, None) is None


def pages_query(body: dict) -> dict:
    (pages,) = [c["nested"] for c in body["query"]["bool"]["should"] if "nested" in c]
    return pages


def test_search_ranks_pages_each_with_one_highlighted_passage_marked_like_the_sqlite_snippets():
    pages = pages_query(search_body("yield", 5, None))
    assert pages["path"] == "pages" and pages["query"] == {"match": {"pages.text": {"query": "yield"}}}
    highlight = pages["inner_hits"]["highlight"]
    assert (highlight["pre_tags"], highlight["post_tags"]) == (["**"], ["**"])
    assert highlight["fields"]["pages.text"]["number_of_fragments"] == 1
    assert pages["inner_hits"]["size"] == 5  # a document may give every hit asked for


def test_the_highlighter_reads_a_bounded_part_of_a_long_page_instead_of_failing():
    highlight = pages_query(search_body("yield", 5, None))["inner_hits"]["highlight"]
    assert highlight["max_analyzed_offset"] == 1_000_000


def test_get_candidates_come_without_content_pages_or_tables_and_search_hits_without_pages():
    assert candidates_body(SOURCE, None, 50, outline=True)["source"] == {
        "excludes": ["content", "pages", "tables"]}
    assert candidates_body(SOURCE, None, 50)["source"] == {"excludes": ["pages", "tables"]}
    assert search_body("yield", 5, None)["source"] == {"excludes": ["pages", "tables"]}


def test_the_mapping_types_each_field_as_the_design_says():
    props = MAPPING["properties"]
    assert {f: props[f]["type"] for f in props} == {
        "id": "keyword", "title": "text", "content": "text", "date": "date",
        "url": "keyword", "source_type": "keyword", "period": "keyword",
        "period_origin": "keyword", "period_start": "date", "period_end": "date",
        "pages": "nested", "tables": "object"}
    assert props["pages"]["properties"]["text"] == {"type": "text", "analyzer": "english"}
    assert props["tables"]["enabled"] is False  # kept, not indexed
    assert MAPPING["dynamic"] == "strict" and MAPPING["_meta"] == {"chordal_schema": 3}


def test_an_index_made_before_periods_or_before_pages_is_told_apart_from_someone_elses():
    version_2 = {f: spec for f, spec in MAPPING["properties"].items()
                 if f not in ("pages", "tables")}
    version_1 = {f: spec for f, spec in version_2.items() if not f.startswith("period")}
    assert schema_outdated(version_1) and schema_outdated(version_2)
    assert not schema_outdated(MAPPING["properties"])
    assert not schema_outdated({"title": {"type": "text"}})


def test_an_index_mapped_by_someone_else_is_described_field_by_field():
    assert mapping_problems(MAPPING["properties"]) == []
    problems = mapping_problems({"title": {"type": "text"}, "content": {"type": "text"},
                                 "date": {"type": "keyword"}})
    assert "date is keyword, needs date" in problems
    assert "title has no keyword subfield" in problems
    assert "url is missing, needs keyword" in problems


def test_bulk_actions_carry_each_page_and_the_tables_as_json():
    doc = Document(id="d2", title="Filing", content="Cover\fCash flows\f\fNotes",
                   tables=[{"page": 2, "columns": [{"header": "2019", "period": "2019"}],
                            "rows": [{"label": "Net income", "cells": [{"text": "1,763"}]}]}])
    (action,) = bulk_actions("idx", [doc])
    assert action["_source"]["pages"] == [{"page": 1, "text": "Cover"},
                                          {"page": 2, "text": "Cash flows"},
                                          {"page": 4, "text": "Notes"}]  # page 3 is blank
    assert tables_of(action["_source"]) == doc.tables
    (plain,) = bulk_actions("idx", [Document(id="d3", title="Note", content="One page.")])
    assert plain["_source"]["pages"] == [{"page": None, "text": "One page."}]


def test_bulk_actions_index_each_document_under_its_own_id():
    doc = Document(id="d1", title="T Q3 2023", content="x", date="2023-10-20")
    (action,) = bulk_actions("idx", [doc])
    assert (action["_op_type"], action["_index"], action["_id"]) == ("index", "idx", "d1")
    assert action["_source"]["date"] == "2023-10-20" and action["_source"]["id"] == "d1"
    assert (action["_source"]["period"], action["_source"]["period_origin"]) == (
        "2023-Q3", "inferred")
    assert (action["_source"]["period_start"], action["_source"]["period_end"]) == (
        "2023-07-01", "2023-09-30")


def pages(*found: tuple[int | None, float, str | None]) -> dict:
    return {"pages": {"hits": {"hits": [
        {"_score": score, "_source": {"page": page},
         **({"highlight": {"pages.text": [marked]}} if marked else {})}
        for page, score, marked in found]}}}


def test_hits_are_pages_with_their_number_score_and_highlighted_snippet():
    hits = hits_of(response(
        hit("a", "Tesla report", "long text", _score=3.5,
            inner_hits=pages((7, 2.0, "battery **yield** rate"), (2, 1.0, "**yield** again"))),
        hit("b", "Other", "plain content without the word", _score=3.0,
            inner_hits=pages((None, 1.0, None))),
        hit("c", "Yield notice", "a title match alone", _score=0.5)), limit=3)
    assert [(h.document.id, h.page, h.score) for h in hits] == [
        ("a", 7, 3.5), ("b", None, 3.0), ("a", 2, 1.75)]
    assert hits[0].snippet == "battery **yield** rate"
    assert hits[1].snippet == "plain content without the word"  # no highlight: text start


def test_candidate_hits_become_documents_in_rank_order():
    docs = documents_of(response(hit("b", "Second"), hit("a", "First")))
    assert [d.id for d in docs] == ["b", "a"]


def test_failed_bulk_items_are_listed_by_id_with_the_reason_elasticsearch_gave():
    results = [
        (True, {"index": {"_id": "ok1", "status": 200}}),
        (False, {"index": {"_id": "bad1", "status": 400, "error": {
            "type": "document_parsing_exception",
            "reason": "failed to parse field [date] of type [date]"}}}),
        (False, {"index": {"_id": "bad2", "status": 429, "error": "rejected"}}),
    ]
    written, failed = failed_items(results)
    assert written == 1
    assert failed == ["bad1: failed to parse field [date] of type [date]", "bad2: rejected"]


def test_every_body_key_is_a_parameter_of_the_clients_search_and_create_calls():
    from inspect import signature

    from elasticsearch import Elasticsearch

    search_params = signature(Elasticsearch.search).parameters
    for body in (candidates_body(SOURCE, Q3, 50), search_body("yield", 5, Q3),
                 candidates_body(SOURCE, Q3, 50, outline=True)):
        assert set(body) <= set(search_params), set(body) - set(search_params)
    assert "mappings" in signature(Elasticsearch(["http://127.0.0.1:9200"]).indices.create).parameters

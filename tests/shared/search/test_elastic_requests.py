"""The Elasticsearch request bodies and response parsing, without a server: each body is
checked against the client's own query DSL (an unknown query type fails to parse), and
responses are the shapes the search API documents."""

from __future__ import annotations

from datetime import date

import pytest
from elasticsearch.dsl import Search

from shared.search import FULL_TEXT, TITLE_MATCH, URL_MATCH, Document
from shared.search.backend import pick_best
from shared.search.elastic_requests import (CANDIDATES, MAPPING, bulk_actions,
                                            candidates_body, exact_body, exact_of,
                                            failed_items, hits_of, mapping_problems,
                                            search_body)

Q3 = (date(2023, 7, 1), date(2023, 9, 30))
SOURCE = "Tesla Q3 2023 Financial Report"


def hit(doc_id: str, title: str, content: str = "text", **extra) -> dict:
    return {"_id": doc_id, "_score": extra.pop("_score", 1.0),
            "_source": {"id": doc_id, "title": title, "content": content, "date": None,
                        "url": None, "source_type": None}, **extra}


def response(*hits: dict) -> dict:
    return {"took": 1, "timed_out": False, "hits": {"hits": list(hits)}}


@pytest.mark.parametrize("body", [
    exact_body(SOURCE, None), exact_body(SOURCE, Q3), candidates_body(SOURCE, None),
    candidates_body(SOURCE, Q3), search_body("battery yield", 5, None),
    search_body("battery yield", 5, Q3),
], ids=["exact", "exact-dated", "candidates", "candidates-dated", "search", "search-dated"])
def test_every_request_body_is_valid_elasticsearch_query_dsl(body):
    assert Search.from_dict(body).to_dict() == body


def test_a_date_range_becomes_an_inclusive_range_filter_on_the_date_field():
    for body in (exact_body(SOURCE, Q3), candidates_body(SOURCE, Q3), search_body("yield", 5, Q3)):
        assert body["query"]["bool"]["filter"] == [
            {"range": {"date": {"gte": "2023-07-01", "lte": "2023-09-30"}}}]


def test_without_a_date_range_no_document_is_filtered_out():
    assert "filter" not in exact_body(SOURCE, None)["query"]["bool"]
    assert "filter" not in search_body("yield", 5, None)["query"]["bool"]


def test_the_exact_lookup_matches_the_lowercased_title_keyword_before_the_url():
    body = exact_body(f"  {SOURCE} ", None)
    title, url = body["query"]["bool"]["should"]
    assert title["constant_score"]["filter"] == {"term": {"title.keyword": SOURCE}}
    assert url["constant_score"]["filter"] == {"term": {"url": SOURCE}}
    assert title["constant_score"]["boost"] > url["constant_score"]["boost"]
    assert body["sort"][1] == {"date": {"order": "desc", "missing": "_last"}}  # latest first
    assert MAPPING["properties"]["title"]["fields"]["keyword"]["normalizer"] == "lowercase"


def test_candidates_put_a_title_phrase_first_and_fall_back_to_keywords_in_title_and_content():
    body = candidates_body("What was the Tesla Q3 2023 Financial Report", None)
    phrase, words = body["query"]["bool"]["should"]
    assert phrase["match_phrase"]["title"]["query"] == "What was the Tesla Q3 2023 Financial Report"
    assert words["multi_match"]["query"] == "tesla q3 2023 financial report"  # no stopwords
    assert words["multi_match"]["fields"] == ["title^3", "content"]
    assert body["size"] == CANDIDATES


def test_a_source_or_query_of_stopwords_only_sends_no_full_text_request():
    assert candidates_body("the of and", None) is None
    assert search_body("what was it", 5, None) is None
    assert search_body("yield", 0, None) is None


def test_search_asks_for_one_highlighted_passage_marked_like_the_sqlite_snippets():
    highlight = search_body("yield", 5, None)["highlight"]
    assert (highlight["pre_tags"], highlight["post_tags"]) == (["**"], ["**"])
    assert highlight["fields"]["content"]["number_of_fragments"] == 1


def test_the_mapping_types_each_field_as_the_design_says():
    props = MAPPING["properties"]
    assert {f: props[f]["type"] for f in props} == {
        "id": "keyword", "title": "text", "content": "text", "date": "date",
        "url": "keyword", "source_type": "keyword"}
    assert MAPPING["dynamic"] == "strict"


def test_an_index_mapped_by_someone_else_is_described_field_by_field():
    assert mapping_problems(MAPPING["properties"]) == []
    problems = mapping_problems({"title": {"type": "text"}, "content": {"type": "text"},
                                 "date": {"type": "keyword"}})
    assert "date is keyword, needs date" in problems
    assert "title has no keyword subfield" in problems
    assert "url is missing, needs keyword" in problems


def test_bulk_actions_index_each_document_under_its_own_id():
    doc = Document(id="d1", title="T", content="x", date="2023-09-30")
    (action,) = bulk_actions("idx", [doc])
    assert (action["_op_type"], action["_index"], action["_id"]) == ("index", "idx", "d1")
    assert action["_source"]["date"] == "2023-09-30" and action["_source"]["id"] == "d1"


def test_hits_become_documents_with_their_score_and_highlighted_snippet():
    hits = hits_of(response(
        hit("a", "Tesla report", "long text", _score=3.5,
            highlight={"content": ["battery **yield** rate"]}),
        hit("b", "Other", "plain content without the word", _score=1.0)))
    assert [(h.document.id, h.score) for h in hits] == [("a", 3.5), ("b", 1.0)]
    assert hits[0].snippet == "battery **yield** rate"
    assert hits[1].snippet == "plain content without the word"  # no highlight: text start


def test_the_exact_lookup_labels_a_title_hit_and_a_url_hit():
    assert exact_of(response()) is None
    doc, label = exact_of(response(hit("a", "T", matched_queries=[TITLE_MATCH, URL_MATCH])))
    assert (doc.id, label) == ("a", TITLE_MATCH)
    assert exact_of(response(hit("a", "T", matched_queries=[URL_MATCH])))[1] == URL_MATCH


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


def test_ranked_candidates_are_chosen_by_the_rule_the_sqlite_store_uses():
    q2 = Document(id="q2", title="Tesla Q2 2023 Financial Report", content="yield 90%")
    q3 = Document(id="q3", title="Tesla Q3 2023 Financial Report", content="yield 91%")
    assert pick_best("Tesla financial report Q3 2023", [q2, q3]) == (q3, TITLE_MATCH)
    assert pick_best("Tesla Q4 2023 Financial Report", [q2]) == (q2, FULL_TEXT)
    assert pick_best("Rivian Q4 deliveries", [q2]) is None


def test_every_body_key_is_a_parameter_of_the_clients_search_and_create_calls():
    from inspect import signature

    from elasticsearch import Elasticsearch

    search_params = signature(Elasticsearch.search).parameters
    for body in (exact_body(SOURCE, Q3), candidates_body(SOURCE, Q3), search_body("yield", 5, Q3)):
        assert set(body) <= set(search_params), set(body) - set(search_params)
    assert "mappings" in signature(Elasticsearch(["http://127.0.0.1:9200"]).indices.create).parameters

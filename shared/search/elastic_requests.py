"""Elasticsearch request bodies and response parsing, as pure functions: consumes
search text, date ranges and the JSON Elasticsearch answers with; produces the dicts the
`ElasticSearch` backend sends (index mapping, bulk actions, `best` and `search` bodies)
and the Documents and Hits it returns. Nothing here talks to a server, so every body
is testable without one.

Text fields use the built-in `english` analyzer (lower-casing, stopwords, Porter-style
stemming: the counterpart of the SQLite store's `porter unicode61`); `title.keyword`
holds the whole title lower-cased, for the exact-title lookup that SQLite does with
`COLLATE NOCASE`. Documents without a date have no `date` value and so never match a
`range` filter: undated documents never pass a date filter, as in the SQLite store.
"""

from __future__ import annotations

from typing import Any, Iterable

from .backend import TITLE_MATCH, URL_MATCH, DateRange, Hit
from .document import FIELDS, Document
from .terms import keywords

TITLE_BOOST = 3.0
"""Weight of a word in the title relative to one in the content (`title^3`)."""
PHRASE_BOOST = 10.0
"""Extra weight of a title that holds the source as a phrase, so it ranks first."""
CANDIDATES = 50
"""How many ranked documents `best` considers (as the SQLite store does)."""
SNIPPET_CHARS = 150
"""Length of a search snippet (one highlighted fragment of the content)."""
TITLE_KEYWORD_MAX = 1024
"""Titles longer than this are not kept whole in `title.keyword` (Lucene caps a term at
32 KB); such a document is still found by its words, only not by exact title."""

MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "id": {"type": "keyword"},
        "title": {
            "type": "text", "analyzer": "english",
            "fields": {"keyword": {"type": "keyword", "normalizer": "lowercase",
                                   "ignore_above": TITLE_KEYWORD_MAX}},
        },
        "content": {"type": "text", "analyzer": "english"},
        "date": {"type": "date", "format": "strict_date"},
        "url": {"type": "keyword"},
        "source_type": {"type": "keyword"},
    },
}
"""The index mapping (`PUT /INDEX {"mappings": MAPPING}`); `id` repeats `_id` because
Elasticsearch 8 refuses to sort on `_id`, and ties are broken by id as in SQLite."""

_ORDER_BY_DATE = [{"date": {"order": "desc", "missing": "_last"}}, {"id": "asc"}]


def mapping_problems(found: dict[str, Any]) -> list[str]:
    """What an existing index's mapping (`properties`) lacks for Chordal to search it."""
    problems = []
    for field, spec in MAPPING["properties"].items():
        have = found.get(field, {})
        if have.get("type") != spec["type"]:
            problems.append(f"{field} is {have.get('type', 'missing')}, needs {spec['type']}")
    if "keyword" not in found.get("title", {}).get("fields", {}):
        problems.append("title has no keyword subfield")
    return problems


def bulk_actions(index: str, docs: Iterable[Document]) -> Iterable[dict[str, Any]]:
    """One `index` action per document, `_id` = its id, so re-indexing replaces it."""
    for doc in docs:
        source = {f: getattr(doc, f) for f in FIELDS}
        yield {"_op_type": "index", "_index": index, "_id": doc.id, "_source": source}


def date_filter(date_range: DateRange | None) -> list[dict[str, Any]]:
    """The `filter` clauses of a date range (inclusive), none without one."""
    if date_range is None:
        return []
    first, last = date_range
    return [{"range": {"date": {"gte": first.isoformat(), "lte": last.isoformat()}}}]


def _bool(date_range: DateRange | None, **clauses: Any) -> dict[str, Any]:
    """A `bool` query of `clauses` filtered on `date_range` (no empty clause lists)."""
    query = {name: value for name, value in clauses.items() if value not in ([], None)}
    if date_range is not None:
        query["filter"] = date_filter(date_range)
    return {"bool": query}


def exact_body(source: str, date_range: DateRange | None) -> dict[str, Any]:
    """The document whose title (any case) or URL is exactly `source`, latest first.

    A title match outscores a URL match (constant scores 2 and 1), so one request does
    what the SQLite store does in two; `matched_queries` tells which one matched.
    """
    text = source.strip()
    should = [
        {"constant_score": {"filter": {"term": {"title.keyword": text}}, "boost": 2.0,
                            "_name": TITLE_MATCH}},
        {"constant_score": {"filter": {"term": {"url": text}}, "boost": 1.0,
                            "_name": URL_MATCH}},
    ]
    return {
        "query": _bool(date_range, should=should, minimum_should_match=1),
        "sort": ["_score", *_ORDER_BY_DATE],
        "size": 1,
        "track_total_hits": False,
    }


def candidates_body(source: str, date_range: DateRange | None) -> dict[str, Any] | None:
    """Up to CANDIDATES documents for a GET source: titles holding the source as a
    phrase first, then any document with its keywords (title^3, content); None when the
    source has no keyword (the SQLite store finds nothing either)."""
    words = " ".join(keywords(source))
    if not words:
        return None
    should = [
        {"match_phrase": {"title": {"query": source.strip(), "boost": PHRASE_BOOST}}},
        _keywords_match(words),
    ]
    return {
        "query": _bool(date_range, should=should, minimum_should_match=1),
        "sort": ["_score", {"id": "asc"}],
        "track_scores": True,
        "size": CANDIDATES,
        "track_total_hits": False,
    }


def _keywords_match(words: str) -> dict[str, Any]:
    """Any of `words` in the title (weighted TITLE_BOOST) or the content."""
    return {"multi_match": {"query": words, "fields": [f"title^{TITLE_BOOST:g}", "content"],
                            "type": "best_fields", "tie_breaker": 0.3, "operator": "or"}}


def search_body(query: str, limit: int, date_range: DateRange | None) -> dict[str, Any] | None:
    """Documents ranked by relevance to `query`'s keywords, each with one highlighted
    passage of its content (`**word**`); None when `query` has no keyword."""
    words = " ".join(keywords(query))
    if not words or limit < 1:
        return None
    return {
        "query": _bool(date_range, must=[_keywords_match(words)]),
        "sort": ["_score", {"id": "asc"}],
        "track_scores": True,
        "size": limit,
        "track_total_hits": False,
        "highlight": {
            "pre_tags": ["**"], "post_tags": ["**"],
            "fields": {"content": {"fragment_size": SNIPPET_CHARS, "number_of_fragments": 1,
                                   "no_match_size": SNIPPET_CHARS}},
        },
    }


def document_of(hit: dict[str, Any]) -> Document:
    """The Document a search hit (`hits.hits[i]`) carries."""
    source = hit.get("_source", {})
    values = {f: source.get(f) for f in FIELDS}
    values["id"] = values["id"] or hit["_id"]
    return Document.model_construct(**values)


def hits_of(response: dict[str, Any]) -> list[Hit]:
    """Hits of a `search_body` response, best first, with their snippets."""
    hits = []
    for hit in response["hits"]["hits"]:
        doc = document_of(hit)
        fragments = hit.get("highlight", {}).get("content") or [doc.content[:SNIPPET_CHARS]]
        hits.append(Hit(doc, float(hit.get("_score") or 0.0), " … ".join(fragments)))
    return hits


def exact_of(response: dict[str, Any]) -> tuple[Document, str] | None:
    """The document of an `exact_body` response and its confidence, or None."""
    found = response["hits"]["hits"]
    if not found:
        return None
    matched = found[0].get("matched_queries") or []
    return document_of(found[0]), TITLE_MATCH if TITLE_MATCH in matched else URL_MATCH


def failed_items(results: Iterable[tuple[bool, dict[str, Any]]]) -> tuple[int, list[str]]:
    """How many bulk items succeeded, and one line (`id: reason`) per failed item, from
    the `(ok, item)` pairs `helpers.streaming_bulk` yields."""
    ok_count, failed = 0, []
    for ok, item in results:
        if ok:
            ok_count += 1
            continue
        info = next(iter(item.values()), {}) if isinstance(item, dict) else {}
        error = info.get("error") or {}
        reason = (error.get("reason") or error.get("type")) if isinstance(error, dict) else error
        failed.append(f"{info.get('_id', '?')}: {reason or 'status ' + str(info.get('status'))}")
    return ok_count, failed

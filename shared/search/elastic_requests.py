"""Elasticsearch request bodies and response parsing, as pure functions: consumes
search text, date ranges and the JSON Elasticsearch answers with; produces the dicts the
`ElasticSearch` backend sends (index mapping, bulk actions, `best` and `search` bodies)
and the Documents and Hits it returns. Nothing here talks to a server, so every body
is testable without one.

Text fields use the built-in `english` analyzer (lower-casing, stopwords, Porter-style
stemming: the counterpart of the SQLite store's `porter unicode61`); `title.keyword`
holds the whole title lower-cased, for the exact-title lookup that SQLite does with
`COLLATE NOCASE`. A period `Window` becomes the filter `window_filter` writes: period
overlapping it, or no period and published inside it or within the lag after it (the
same test as `Window.fits` and the SQLite store's SQL). Which candidate a GET gets is
decided by `shared.search.matching`, as for SQLite.

Pages: each document holds its pages as `nested` objects (`page`, `text`; one page
with `page` null for a document without pages); SEARCH matches the pages' text (or the
title) and a hit is a page, named by its number, with a highlighted passage of it, as
in the SQLite store. GET candidates are ranked on the whole content and come without
content, pages and tables (`OUTLINE`); the documents found are read by id. Tables are
kept in `_source` as `Table` JSON, not indexed (`enabled: false`).

Schema version 3 (`_meta.chordal_schema`; 2 added the periods, 3 the pages and tables).
An index of an earlier version is refused with a message to re-index: Elasticsearch
cannot add pages or periods to documents it holds without reading each one back.
"""

from __future__ import annotations

from typing import Any, Iterable

from shared.models.table import Table

from .backend import Hit, Window
from .document import FIELDS, Document, page_spans
from .periods import without_periods
from .terms import keywords

TITLE_BOOST = 3.0
"""Weight of a word in the title relative to one in the content (`title^3`)."""
PHRASE_BOOST = 10.0
"""Extra weight of a title that holds the source as a phrase, so it ranks first."""
EXACT_BOOST = 1000.0
"""Weight of a title (any case) or URL that is exactly the source: always ranked first."""
SCHEMA_VERSION = 3
"""`_meta.chordal_schema` of an index this code writes."""
SNIPPET_CHARS = 150
"""Length of a search snippet (one highlighted fragment of the content)."""
HIGHLIGHT_CHARS = 1_000_000
"""Characters of a document's content the highlighter reads for a snippet (the request's
`max_analyzed_offset`: past it the rest is not highlighted, where without it a longer
document fails the whole search; Elasticsearch's own default index limit)."""
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
        "period": {"type": "keyword"},
        "period_origin": {"type": "keyword"},
        "period_start": {"type": "date", "format": "strict_date"},
        "period_end": {"type": "date", "format": "strict_date"},
        "pages": {"type": "nested", "properties": {
            "page": {"type": "integer"},
            "text": {"type": "text", "analyzer": "english"},
        }},
        "tables": {"type": "object", "enabled": False},
    },
    "_meta": {"chordal_schema": SCHEMA_VERSION},
}
"""The index mapping (`PUT /INDEX {"mappings": MAPPING}`); `id` repeats `_id` because
Elasticsearch 8 refuses to sort on `_id`, and ties are broken by id as in SQLite."""

_ORDER_BY_DATE = [{"date": {"order": "desc", "missing": "_last"}}, {"id": "asc"}]
OUTLINE = {"excludes": ["content", "pages", "tables"]}
"""The `_source` of a GET candidate: what the rules judge it by."""
WHOLE = {"excludes": ["pages", "tables"]}
"""The `_source` of a document read whole: what a GET binds."""
_LATER = ("period", "period_origin", "period_start", "period_end", "pages", "tables")
"""Fields added after schema version 1."""


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


def schema_outdated(found: dict[str, Any]) -> bool:
    """Whether an index's mapping is a Chordal index of an earlier version: every field of
    version 1 is there and a field added since is missing."""
    return (all(f in found for f in MAPPING["properties"] if f not in _LATER)
            and not all(f in found for f in _LATER))


def bulk_actions(index: str, docs: Iterable[Document]) -> Iterable[dict[str, Any]]:
    """One `index` action per document, `_id` = its id, so re-indexing replaces it."""
    for doc in docs:
        source: dict[str, Any] = {f: getattr(doc, f) for f in FIELDS}
        period = doc.period_range()
        source["period_start"] = period[0].isoformat() if period else None
        source["period_end"] = period[1].isoformat() if period else None
        source["pages"] = [{"page": page, "text": doc.content[start:stop]}
                           for page, start, stop in page_spans(doc.content)
                           if page is None or doc.content[start:stop].strip()]
        source["tables"] = [t.model_dump(mode="json") for t in doc.tables]
        yield {"_op_type": "index", "_index": index, "_id": doc.id, "_source": source}


def window_filter(window: Window | None) -> list[dict[str, Any]]:
    """The `filter` clauses of a period window, none without one: `Window.fits` in DSL.
    A document without a date or period has no value and never matches a `range`."""
    if window is None:
        return []
    first, last = window.first.isoformat(), window.last.isoformat()
    about = {"bool": {"filter": [{"range": {"period_start": {"lte": last}}},
                                 {"range": {"period_end": {"gte": first}}}]}}
    published = {"bool": {
        "must_not": [{"exists": {"field": "period_start"}}],
        "filter": [{"range": {"date": {"gte": first,
                                       "lte": window.published_until.isoformat()}}}]}}
    return [{"bool": {"should": [about, published], "minimum_should_match": 1}}]


def _bool(window: Window | None, **clauses: Any) -> dict[str, Any]:
    """A `bool` query of `clauses` filtered on `window` (no empty clause lists)."""
    query = {name: value for name, value in clauses.items() if value not in ([], None)}
    if window is not None:
        query["filter"] = window_filter(window)
    return {"bool": query}


def candidates_body(source: str, window: Window | None, limit: int,
                    outline: bool = False) -> dict[str, Any]:
    """Up to `limit` documents for a GET source: the title (any case) or URL that is
    exactly the source first, then titles holding it as a phrase, then documents with
    its words (title^3, content; periods left out: the window is their filter); with
    `outline`, without their contents."""
    text = source.strip()
    should: list[dict[str, Any]] = [
        {"constant_score": {"filter": {"term": {"title.keyword": text}}, "boost": EXACT_BOOST}},
        {"constant_score": {"filter": {"term": {"url": text}}, "boost": EXACT_BOOST}},
        {"match_phrase": {"title": {"query": text, "boost": PHRASE_BOOST}}},
    ]
    words = " ".join(keywords(without_periods(source)) or keywords(source))
    if words:
        should.append(_keywords_match(words))
    return {
        "query": _bool(window, should=should, minimum_should_match=1),
        "sort": ["_score", *_ORDER_BY_DATE],
        "track_scores": True,
        "size": limit,
        "track_total_hits": False,
        "source": OUTLINE if outline else WHOLE,
    }


def _keywords_match(words: str) -> dict[str, Any]:
    """Any of `words` in the title (weighted TITLE_BOOST) or the content."""
    return {"multi_match": {"query": words, "fields": [f"title^{TITLE_BOOST:g}", "content"],
                            "type": "best_fields", "tie_breaker": 0.3, "operator": "or"}}


def search_body(query: str, limit: int, window: Window | None) -> dict[str, Any] | None:
    """Documents with `query`'s keywords in a page's text (or the title: weighted
    TITLE_BOOST), each with its best `limit` pages and one highlighted passage of each
    (`**word**`); None when `query` has no keyword."""
    words = " ".join(keywords(query))
    if not words or limit < 1:
        return None
    pages = {"nested": {
        "path": "pages", "score_mode": "max",
        "query": {"match": {"pages.text": {"query": words}}},
        "inner_hits": {
            "size": limit, "_source": ["pages.page"],
            "highlight": {
                "pre_tags": ["**"], "post_tags": ["**"], "max_analyzed_offset": HIGHLIGHT_CHARS,
                "fields": {"pages.text": {"fragment_size": SNIPPET_CHARS, "number_of_fragments": 1,
                                          "no_match_size": SNIPPET_CHARS}}}}}}
    title = {"match": {"title": {"query": words, "boost": TITLE_BOOST}}}
    return {
        "query": _bool(window, should=[pages, title], minimum_should_match=1),
        "sort": ["_score", {"id": "asc"}],
        "track_scores": True,
        "size": limit,
        "track_total_hits": False,
        "source": WHOLE,
    }


def document_of(hit: dict[str, Any]) -> Document:
    """The Document a search hit (`hits.hits[i]`) or a read by id carries (content ""
    for an outline)."""
    source = hit.get("_source", {})
    values = {f: source.get(f) for f in FIELDS}
    values["id"] = values["id"] or hit["_id"]
    values["content"] = values["content"] or ""
    return Document.model_construct(**values)


def tables_of(source: dict[str, Any]) -> list[Table]:
    """The tables a document's `_source` keeps."""
    return [Table.model_validate(t) for t in source.get("tables") or []]


def hits_of(response: dict[str, Any], limit: int) -> list[Hit]:
    """Hits of a `search_body` response, a page each, best first, at most `limit`: a
    document's pages score in proportion to its best page (a title-only match is its
    first words, without a page)."""
    hits = []
    for hit in response["hits"]["hits"]:
        doc = document_of(hit)
        score = float(hit.get("_score") or 0.0)
        pages = hit.get("inner_hits", {}).get("pages", {}).get("hits", {}).get("hits", [])
        if not pages:
            hits.append(Hit(doc, score, doc.content[:SNIPPET_CHARS]))
            continue
        best = max(float(p.get("_score") or 0.0) for p in pages) or 1.0
        for p in pages:
            fragments = p.get("highlight", {}).get("pages.text") or [doc.content[:SNIPPET_CHARS]]
            hits.append(Hit(doc, score * float(p.get("_score") or 0.0) / best,
                            " … ".join(fragments), p.get("_source", {}).get("page")))
    return sorted(hits, key=lambda h: -h.score)[:limit]


def documents_of(response: dict[str, Any]) -> list[Document]:
    """The Documents of a `candidates_body` response, best first."""
    return [document_of(h) for h in response["hits"]["hits"]]


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

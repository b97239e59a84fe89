"""The search backend protocol: consumes Documents (indexing) and search text, produces
the best Document for a GET source, or ranked Hits for a query.

`open_backend(settings)` picks the implementation: embedded SQLite FTS5 by default,
Elasticsearch when CHORDAL_ES_URL is set.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Iterable, Protocol, runtime_checkable

from shared.errors import ConfigError

from .document import Document
from .terms import keywords, stem, stems

if TYPE_CHECKING:
    from shared.config import Settings

TITLE_MATCH = "title_match"
"""Confidence of `best`: every word of the source appears in the document's title."""
FULL_TEXT = "full_text"
"""Confidence of `best`: the document was ranked first on its text, not its title."""
URL_MATCH = "url_match"
"""Confidence of `best`: the source is the document's URL."""

DateRange = tuple[date, date]


@dataclass(frozen=True)
class Hit:
    """One ranked search result."""

    document: Document
    score: float
    """Relevance, higher is better; comparable only within one result list."""
    snippet: str
    """A short passage of the content around the matched words (`**word**`)."""


def pick_best(source: str, ranked: Iterable[Document]) -> tuple[Document, str] | None:
    """The rule every backend applies to its ranked candidates for a GET `source`: the
    first whose title holds every keyword of the source (`title_match`), else the first
    whose title and text hold at least half of them (`full_text`), else None."""
    ranked = list(ranked)
    wanted = {stem(t) for t in keywords(source)}
    for doc in ranked:
        if wanted <= stems(doc.title):
            return doc, TITLE_MATCH
    for doc in ranked:
        # OR-ed terms let a document in on one common word; ask for half of them
        found = wanted & stems(f"{doc.title} {doc.content}")
        if 2 * len(found) >= len(wanted):
            return doc, FULL_TEXT
    return None


@runtime_checkable
class SearchBackend(Protocol):
    """What GET, the heuristic planner and `chordal index` need from a search store.

    Backends raise `StoreError` when the store cannot be read or written.
    """

    def add(self, docs: Iterable[Document]) -> int:
        """Insert or replace (by id) all `docs`; returns how many. SQLite does it in one
        transaction; Elasticsearch has none, and lists the documents it rejected."""
        ...

    def best(self, source: str, date_range: DateRange | None = None) -> tuple[Document, str] | None:
        """The document a GET `source` names, dated within `date_range` when given, with
        its confidence (`title_match`, `url_match` or `full_text`); None if none fits."""
        ...

    def search(self, query: str, limit: int = 5, date_range: DateRange | None = None) -> list[Hit]:
        """Documents ranked by relevance to `query`, best first."""
        ...

    def count(self) -> int:
        """How many documents the store holds."""
        ...

    def close(self) -> None:
        """Release connections; the backend cannot be used afterwards."""
        ...


BACKENDS = ("sqlite", "elasticsearch")
"""The names `open_backend` (and `chordal index --backend`) accept."""


def default_backend(settings: Settings) -> str:
    """`elasticsearch` when CHORDAL_ES_URL is set, else `sqlite`."""
    return "elasticsearch" if settings.es_url else "sqlite"


def open_backend(settings: Settings, kind: str | None = None) -> SearchBackend:
    """The search backend `kind` (default: `default_backend(settings)`): Elasticsearch at
    `settings.es_url`, index `settings.es_index`, or SQLite FTS5 at `settings.search_path`."""
    kind = kind or default_backend(settings)
    if kind == "elasticsearch":
        if not settings.es_url:
            raise ConfigError("the Elasticsearch backend needs CHORDAL_ES_URL "
                              "(e.g. http://127.0.0.1:9200); set it or use the sqlite backend")
        from .elastic import ElasticSearch  # the client loads only when it is used

        return ElasticSearch(settings.es_url, settings.es_index, settings.es_timeout_s)
    if kind != "sqlite":
        raise ConfigError(f"unknown search backend {kind!r}; use one of {', '.join(BACKENDS)}")
    from .sqlite import SqliteSearch

    return SqliteSearch(settings.search_path)

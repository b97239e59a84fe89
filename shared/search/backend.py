"""The search backend protocol: consumes Documents (indexing) and search text, produces
the best Document for a GET source, or ranked Hits for a query.

`open_backend(settings)` picks the implementation: embedded SQLite FTS5 by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Iterable, Protocol, runtime_checkable

from .document import Document

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


@runtime_checkable
class SearchBackend(Protocol):
    """What GET, the heuristic planner and `chordal index` need from a search store.

    Backends raise `StoreError` when the store cannot be read or written.
    """

    def add(self, docs: Iterable[Document]) -> int:
        """Insert or replace (by id) all `docs` in one transaction; returns how many."""
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


def open_backend(settings: Settings) -> SearchBackend:
    """The search backend `settings` configure: SQLite FTS5 at `settings.search_path`."""
    # Hook for Elasticsearch: when Settings grows `es_url` (CHORDAL_ES_URL), return an
    # `shared.search.elastic.ElasticSearch(settings.es_url)` here instead.
    from .sqlite import SqliteSearch

    return SqliteSearch(settings.search_path)

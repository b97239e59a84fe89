"""The search backend protocol: consumes Documents (indexing) and search text, produces
ranked candidate Documents for a GET source and ranked Hits (pages) for a query, both
filtered on a period `Window` in the store itself, and the tables of a document.

Backends only rank and filter; which candidate a GET gets is decided once, for all of
them, by `shared.search.matching` (`best` is `matching.find` over `candidates`).
The implementations (sqlite.py, elastic.py) import this protocol; opening one is
open.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, runtime_checkable

from .dates import DateRange
from .document import Document
from shared.models.table import Table
from .fit import Window
from .matching import PARTIAL_TITLE, TITLE_MATCH, URL_MATCH, Match

__all__ = ["DateRange", "Hit", "Match", "PARTIAL_TITLE", "SearchBackend", "TITLE_MATCH",
           "URL_MATCH", "Window"]


@dataclass(frozen=True)
class Hit:
    """One ranked search result: a page of a document (the whole of one without pages)."""

    document: Document
    score: float
    """Relevance, higher is better; comparable only within one result list."""
    snippet: str
    """A short passage of the page around the matched words (`**word**`)."""
    page: int | None = None
    """The page the snippet is on (1-based); None for a document without pages."""


@runtime_checkable
class SearchBackend(Protocol):
    """What GET, SEARCH, the heuristic planner and `chordal index` need from a search store.

    Backends raise `StoreError` when the store cannot be read or written.
    """

    lag_days: int
    """Days after a period within which an undated-period document may be about it."""

    def add(self, docs: Iterable[Document]) -> int:
        """Insert or replace (by id) all `docs`; returns how many. SQLite does it in one
        transaction; Elasticsearch has none, and lists the documents it rejected."""
        ...

    def candidates(self, text: str, window: Window | None, limit: int) -> list[Document]:
        """Up to `limit` documents for a GET source, best first: exact title (any case)
        or URL, then title phrase, then words in title and text; only those that fit
        `window` when given."""
        ...

    def best(self, source: str, scope: DateRange | None = None) -> Match:
        """`matching.find` over `candidates`: the documents that fit the GET `source`
        within `scope`, best first, with every candidate's verdict."""
        ...

    def search(self, query: str, limit: int = 5, window: Window | None = None) -> list[Hit]:
        """Pages ranked by relevance to `query`, best first, of documents fitting `window`
        (a document without pages is one page); a document may come back once per page."""
        ...

    def count(self) -> int:
        """How many documents the store holds."""
        ...

    def documents(self, ids: list[str]) -> dict[str, Document]:
        """The stored documents of `ids` that the store holds, by id, whole (their tables
        aside): what a GET binds, read by reference."""
        ...

    def tables(self, doc_id: str) -> list[Table]:
        """The tables of the document `doc_id` as it was indexed, in document order;
        empty when it has none or is not in the store."""
        ...

    def close(self) -> None:
        """Release connections; the backend cannot be used afterwards."""
        ...

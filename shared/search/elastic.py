"""The Elasticsearch search backend: the same SearchBackend as the SQLite store, on an
index of an Elasticsearch 8 or 9 cluster, through the official `elasticsearch` client.

Consumes Documents (`add`, bulk-indexed, with their pages and tables) and search text;
produces candidate Documents and Hits (pages) filtered on the same period windows as the
SQLite store, documents by id and a document's tables; `best` applies the same
`shared.search.matching` rules to them. The index is created with
`elastic_requests.MAPPING` on first use (or checked, when it exists; one made before
periods is refused with a message to re-index). Request bodies and response parsing
live in `elastic_requests`, the error mapping in `elastic_errors`.

Timeouts and retries: every request times out after `timeout_s`
(CHORDAL_ES_TIMEOUT_S); the client retries it `MAX_RETRIES` times on connection errors,
timeouts and HTTP 429/502/503/504, then the error becomes `SearchUnavailable`, which GET
and SEARCH report as the transient step error SEARCH_UNAVAILABLE (retried by the
executor). Anything else (bad request, refused credentials) is a plain `StoreError`.

`add` cannot be all or nothing: Elasticsearch has no transaction across documents.
Documents go in chunks of `CHUNK_SIZE`; every chunk is sent even when an earlier one had
rejected documents, and each document is written or not on its own. At the end the index
is refreshed (what was written is searchable) and, if any document was rejected, a
StoreError lists their ids and reasons. A connection lost midway raises
SearchUnavailable saying how many documents were written before. Either way re-running
the same file is safe: documents are indexed under their id, so a re-run replaces them.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from elasticsearch import (ApiError, AuthorizationException, BadRequestError, Elasticsearch,
                           TransportError, helpers)

from shared.config import PUBLICATION_LAG_DAYS
from shared.errors import ConfigError, StoreError
from shared.access.urls import mask_url

from shared.models.table import Table

from .backend import DateRange, Hit, Match, Window
from .document import Document
from .elastic_errors import RETRY_ON_STATUS, error_type, store_error
from .elastic_requests import (MAPPING, WHOLE, bulk_actions, candidates_body, document_of,
                               documents_of, failed_items, hits_of, mapping_problems,
                               schema_outdated, search_body, tables_of)
from .matching import find, with_documents
from .terms import holds_all

log = logging.getLogger(__name__)

MAX_RETRIES = 1
"""Client-side retries of one request (the executor retries the step twice more), so a
GET waits at most timeout_s x 2 per attempt before it reports SEARCH_UNAVAILABLE."""
CHUNK_SIZE = 500
"""Documents per bulk request."""
BULK_RETRIES = 3
"""Retries of documents a bulk request rejected with HTTP 429 (queue full), with backoff."""
MAX_REPORTED = 10
"""Failed document ids one error message lists before summarizing the rest."""


class ElasticSearch:
    """A `SearchBackend` on one Elasticsearch index; safe to share between threads."""

    def __init__(self, url: str, index: str = "chordal-documents", timeout_s: float = 10.0,
                 lag_days: int = PUBLICATION_LAG_DAYS):
        self.url = url
        """The cluster (may hold `user:password@`; never printed as is)."""
        self.index = index
        self.timeout_s = timeout_s
        self.lag_days = lag_days
        try:
            self._client = Elasticsearch(
                url, request_timeout=timeout_s, retry_on_timeout=True,
                max_retries=MAX_RETRIES, retry_on_status=RETRY_ON_STATUS,
            )
        except ValueError as exc:
            raise ConfigError(f"CHORDAL_ES_URL={mask_url(url)!r} is not usable ({exc}); write it "
                              "as http://HOST:9200 or https://USER:PASSWORD@HOST:9200") from None
        self._ready = False
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        """Names this store for the GET cache: cluster and index, without credentials."""
        return f"elasticsearch:{mask_url(self.url)}/{self.index}"

    @contextmanager
    def _request(self, action: str) -> Iterator[Elasticsearch]:
        """The client; its errors become StoreError or SearchUnavailable naming `action`."""
        try:
            yield self._client
        except (ApiError, TransportError) as exc:
            if isinstance(exc, ApiError) and error_type(exc) == "index_not_found_exception":
                self._ready = False  # deleted behind our back: create it again next time
            raise store_error(exc, action, self.url, self.index) from exc

    def _ensure_index(self) -> None:
        """Create the index with MAPPING unless it exists; refuse one mapped otherwise."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            with self._request("opening the index") as es:
                try:
                    found = self._create_or_inspect(es)
                except AuthorizationException as exc:
                    # a search-only user may not inspect indices: trust that it is ours
                    log.info("cannot inspect Elasticsearch index %r (%s); using it as it is",
                             self.index, exc)
                    found = {}
            for name, spec in found.items():
                properties = spec.get("mappings", {}).get("properties", {})
                if schema_outdated(properties):
                    raise StoreError(
                        f"Elasticsearch index {name!r} was made by an earlier Chordal, before "
                        "documents had periods, pages and tables; delete it and run `chordal "
                        "index` again, or set CHORDAL_ES_INDEX to a new name and index the "
                        "corpus there")
                problems = mapping_problems(properties)
                if problems:
                    raise StoreError(
                        f"Elasticsearch index {name!r} exists but is not a Chordal index "
                        f"({'; '.join(problems)}); set CHORDAL_ES_INDEX to another name, or "
                        "delete the index and run `chordal index` again")
            self._ready = True

    def _create_or_inspect(self, es: Elasticsearch) -> dict[str, Any]:
        """Create the index unless it exists; its mapping, by concrete index name."""
        if not es.indices.exists(index=self.index):
            try:
                es.indices.create(index=self.index, mappings=MAPPING)
            except BadRequestError as exc:  # another worker created it meanwhile
                if error_type(exc) != "resource_already_exists_exception":
                    raise
        return es.indices.get_mapping(index=self.index).body

    def _search(self, body: dict[str, Any], action: str) -> dict[str, Any]:
        self._ensure_index()
        with self._request(action) as es:
            return es.search(index=self.index, **body).body

    def add(self, docs: Iterable[Document]) -> int:
        """Index `docs` (replacing documents of the same id); see the module docstring for
        what a partial failure leaves behind."""
        self._ensure_index()
        written, failed = 0, []
        results = helpers.streaming_bulk(
            self._client, bulk_actions(self.index, docs), chunk_size=CHUNK_SIZE,
            raise_on_error=False, max_retries=BULK_RETRIES, initial_backoff=1, max_backoff=30,
        )
        try:
            with self._request("indexing"):
                for ok, item in results:
                    count, errors = failed_items([(ok, item)])
                    written += count
                    failed += errors
        except StoreError as exc:
            self._refresh(quietly=True)
            raise type(exc)(
                f"{exc}; {written} documents were written before the failure: run the same "
                "`chordal index` again (documents are replaced by id, nothing doubles)") from exc
        except BaseException:  # the documents' iterator broke: keep what was written visible
            self._refresh(quietly=True)
            raise
        self._refresh()
        if failed:
            shown = failed[:MAX_REPORTED]
            if len(failed) > MAX_REPORTED:
                shown.append(f"… and {len(failed) - MAX_REPORTED} more")
            raise StoreError("\n".join([
                f"Elasticsearch index {self.index!r}: {len(failed)} documents were rejected "
                f"and {written} written (Elasticsearch indexes each document on its own); "
                "fix these and index the file again:", *shown]))
        return written

    def _refresh(self, quietly: bool = False) -> None:
        """Make every written document searchable now (not within the refresh interval)."""
        try:
            with self._request("refreshing the index") as es:
                es.indices.refresh(index=self.index)
        except StoreError:
            if not quietly:
                raise

    def count(self) -> int:
        self._ensure_index()
        with self._request("counting documents") as es:
            return int(es.count(index=self.index).body["count"])

    def search(self, query: str, limit: int = 5, window: Window | None = None) -> list[Hit]:
        body = search_body(query, limit, window)
        return [] if body is None else hits_of(self._search(body, "searching"), limit)

    def candidates(self, text: str, window: Window | None, limit: int) -> list[Document]:
        return documents_of(self._search(candidates_body(text, window, limit), "searching"))

    def best(self, source: str, scope: DateRange | None = None) -> Match:
        """The rules judge candidates without their contents (a filing is long, and most
        are refused on their titles); only a text rule 2 reads and the documents found
        are read whole."""
        def outlines(text: str, window: Window | None, limit: int) -> list[Document]:
            body = candidates_body(text, window, limit, outline=True)
            return documents_of(self._search(body, "searching"))

        def holds(doc_id: str, stems: frozenset[str]) -> bool:
            doc = self.documents([doc_id]).get(doc_id)
            return doc is not None and holds_all(doc.content, stems)

        match = find(outlines, source, scope, self.lag_days, holds=holds)
        return with_documents(match, self.documents)

    def documents(self, ids: list[str]) -> dict[str, Document]:
        if not ids:
            return {}
        self._ensure_index()
        with self._request("reading documents") as es:
            found = es.mget(index=self.index, ids=ids, source_excludes=WHOLE["excludes"]).body
        return {d.id: d for d in (document_of(item) for item in found["docs"]
                                  if item.get("found"))}

    def tables(self, doc_id: str) -> list[Table]:
        self._ensure_index()
        with self._request("reading tables") as es:
            found = es.mget(index=self.index, ids=[doc_id], source_includes=["tables"]).body
        item = found["docs"][0]
        return tables_of(item.get("_source", {})) if item.get("found") else []

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ElasticSearch:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""Errors of the Elasticsearch backend: consumes an exception of the official client,
produces the Chordal error to raise, worded with what happened and what to do.

    client exception                                    Chordal error (step code)
    ConnectionError (refused, reset, DNS)              SearchUnavailable (SEARCH_UNAVAILABLE)
    ConnectionTimeout (past CHORDAL_ES_TIMEOUT_S)      SearchUnavailable (SEARCH_UNAVAILABLE)
    ApiError 429, 502, 503, 504                        SearchUnavailable (SEARCH_UNAVAILABLE)
    SSLError (TLS handshake, certificate)              StoreError (SEARCH_FAILED)
    AuthenticationException 401, AuthorizationException 403
                                                        StoreError (SEARCH_FAILED)
    BadRequestError 400, NotFoundError 404, UnsupportedProductError (not
    Elasticsearch), other ApiError, SerializationError
                                                        StoreError (SEARCH_FAILED)

The client has already retried (`max_retries`) connection errors, timeouts
(`retry_on_timeout`) and the statuses above before any of this is raised; the executor
then retries SEARCH_UNAVAILABLE steps twice more with backoff.
"""

from __future__ import annotations

from elasticsearch import (ApiError, AuthenticationException, AuthorizationException,
                           ConnectionError, ConnectionTimeout, SSLError, TransportError,
                           UnsupportedProductError)

from shared.errors import SearchUnavailable, StoreError
from shared.access.urls import mask_url

RETRY_ON_STATUS = (429, 502, 503, 504)
"""HTTP statuses that mean "busy or restarting": retried, then reported as transient."""


def error_type(exc: ApiError) -> str | None:
    """The `error.type` of an Elasticsearch error body (`resource_already_exists_exception`…)."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    return error.get("type") if isinstance(error, dict) else None


def _reason(exc: ApiError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    if not isinstance(error, dict):
        return str(error or exc.message)
    reasons = [error.get("type"), error.get("reason")]
    caused_by = error.get("caused_by")
    if isinstance(caused_by, dict):
        reasons.append(caused_by.get("reason"))
    return ": ".join(r for r in reasons if r)


def _cause(exc: TransportError) -> str:
    """The innermost error of a transport failure (the client nests them)."""
    seen = 0
    while getattr(exc, "errors", None) and seen < 10:
        exc, seen = exc.errors[0], seen + 1
    return str(exc.message) if isinstance(exc, TransportError) else str(exc)


def store_error(exc: Exception, action: str, url: str, index: str) -> StoreError:
    """The Chordal error for `exc`, raised while `action` (e.g. "searching") on `index`."""
    where = f"Elasticsearch {mask_url(url)} index {index!r}: {action} failed"
    if isinstance(exc, ConnectionTimeout):
        return SearchUnavailable(
            f"{where}: no answer in time ({_cause(exc)}); the cluster is overloaded or the query is "
            "slow: retry later, or raise CHORDAL_ES_TIMEOUT_S")
    if isinstance(exc, SSLError):
        return StoreError(
            f"{where}: TLS handshake failed ({_cause(exc)}); check the certificate, or the scheme "
            "(http:// or https://) in CHORDAL_ES_URL")
    if isinstance(exc, ConnectionError):
        return SearchUnavailable(
            f"{where}: cannot connect ({_cause(exc)}); check that Elasticsearch is running and "
            "that CHORDAL_ES_URL names it")
    if isinstance(exc, (AuthenticationException, AuthorizationException)):
        return StoreError(
            f"{where}: HTTP {exc.meta.status}, credentials refused ({_reason(exc)}); put a "
            "user allowed to read and write the index in CHORDAL_ES_URL "
            "(https://USER:PASSWORD@host:9200)")
    if isinstance(exc, UnsupportedProductError):
        return StoreError(f"{where}: {exc.message}; check that CHORDAL_ES_URL names an "
                          "Elasticsearch server")
    if isinstance(exc, ApiError):
        status = exc.meta.status
        if status in RETRY_ON_STATUS:
            return SearchUnavailable(
                f"{where}: HTTP {status}, the cluster is busy or restarting "
                f"({_reason(exc)}); retry later")
        if error_type(exc) == "media_type_header_exception":
            return StoreError(
                f"{where}: the server refused the client's API version ({_reason(exc)}); "
                "install the `elasticsearch` Python package whose major version matches "
                "the server's (8.x clients talk to 8.x and 9.x servers)")
        if error_type(exc) == "index_not_found_exception":
            return StoreError(
                f"{where}: the index does not exist (it was deleted while in use); "
                "index documents again with `chordal index FILE.jsonl`")
        return StoreError(f"{where}: HTTP {status} ({_reason(exc)})")
    if isinstance(exc, TransportError):
        return StoreError(f"{where}: {exc}")
    raise TypeError(f"not an Elasticsearch client error: {exc!r}")

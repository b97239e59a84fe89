"""The shared GET cache: wraps any SearchBackend and keeps the answers of `best` (the
lookup behind every GET step: a `Match`) in Redis, shared by all executors on all
machines.

Consumes a backend, a Redis client and a bucket length (CHORDAL_GET_CACHE_S, default
1800 s); produces a SearchBackend whose `best` answers repeated lookups from Redis and
whose other methods are the wrapped backend's. Keys (names in shared/naming.py):

    chordal:get-cache:{backend}:{generation}:{bucket}:{digest}   JSON answer, TTL = rest of the bucket
    chordal:get-cache:{backend}:generation                       bumped by every `add`
    chordal:get-cache:{backend}:stats                            hash: hits, misses

- backend: sha256 of the backend's `identity` (`sqlite:HOST:PATH`,
  `elasticsearch:URL/INDEX` without credentials), so two stores never share entries and
  no password reaches Redis.
- generation: `add` bumps it after the documents are written, so every entry made
  before is never read again (it expires with its bucket).
- bucket: `floor(now / bucket_s)`; an entry lives until its bucket ends, so nothing
  cached is older than one bucket.
- digest: sha256 of the format version, the source (surrounding whitespace dropped; case
  and inner spacing kept, because an exact URL match is case-sensitive), the
  temporal scope and the publication lag.

"Nothing found" is cached too. A cached answer is the Match the backend gave (which
documents, their confidences, candidates and reasons) with the documents found held by
id: a hit reads them whole from the store (`documents`), so an entry stays a few
kilobytes whatever the size of the filings it names, and a GET's value and confidence
are the same, cached or not: the step result stays deterministic. When Redis fails,
lookups go to the backend (logged); an entry this version cannot read, or naming a
document the store no longer holds, is ignored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from typing import Callable, Iterable

import redis
from pydantic import BaseModel, ConfigDict

from shared import naming
from shared.errors import ConfigError, StoreError

from shared.models.table import Table

from .backend import DateRange, Hit, Match, SearchBackend, Window
from .document import Document
from .matching import Found

log = logging.getLogger(__name__)


def backend_key(identity: str) -> str:
    """The short hash that names a backend in cache keys."""
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]


FORMAT = 3
"""Version of the cached value (3: a Match whose documents found are held by id); part
of every digest."""


class Entry(BaseModel):
    """A cached `best` answer."""

    model_config = ConfigDict(extra="forbid")

    match: Match
    """The answer without its documents found."""
    found: list[tuple[str, str]] = []
    """(document id, confidence) of each document found, best first."""

    @classmethod
    def of(cls, match: Match) -> Entry:
        return cls(match=match.model_copy(update={"found": []}),
                   found=[(f.document.id, f.confidence) for f in match.found])

    def answer(self, documents: Callable[[list[str]], dict[str, Document]]) -> Match | None:
        """The Match with its documents read from the store; None when one is gone."""
        if not self.found:
            return self.match
        docs = documents([doc_id for doc_id, _ in self.found])
        if any(doc_id not in docs for doc_id, _ in self.found):
            return None
        return self.match.model_copy(update={"found": [
            Found(document=docs[doc_id], confidence=confidence)
            for doc_id, confidence in self.found]})


def lookup_digest(source: str, scope: DateRange | None, lag_days: int = 0) -> str:
    """The hash of one `best(source, scope)` call of a backend with `lag_days`."""
    window = [d.isoformat() for d in scope] if scope else None
    text = json.dumps([FORMAT, source.strip(), window, lag_days], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def invalidate(r: redis.Redis, identity: str) -> int:
    """Bump the generation of the backend `identity` names: its cached GETs are not read
    again. Returns the new generation."""
    return int(r.incr(naming.get_cache_generation_key(backend_key(identity))))


def clear_get_cache(redis_url: str, identity: str, timeout_s: float = 1.0) -> bool:
    """`invalidate` through a short-lived connection to `redis_url` (for `chordal index`);
    False when no Redis answers there (workers clear the cache when they start)."""
    try:
        with redis.Redis.from_url(redis_url, socket_timeout=timeout_s,
                                  socket_connect_timeout=timeout_s) as r:
            invalidate(r, identity)
        return True
    except redis.RedisError:
        return False


def cache_stats(r: redis.Redis, identity: str) -> dict[str, int]:
    """The `hits` and `misses` counters of the backend `identity` names."""
    raw = r.hgetall(naming.get_cache_stats_key(backend_key(identity)))
    values = {k.decode() if isinstance(k, bytes) else k: int(v) for k, v in raw.items()}
    return {"hits": values.get("hits", 0), "misses": values.get("misses", 0)}


def with_get_cache(backend: SearchBackend, r: redis.Redis, bucket_s: int) -> SearchBackend:
    """`backend` behind the GET cache when `bucket_s` > 0 (else `backend` itself).

    Bumps the generation once, as a worker opens its backend: the store may have changed
    while no Redis was there to be told (`chordal index` with the embedded stack down).
    """
    if bucket_s <= 0:
        return backend
    cached = CachedSearch(backend, r, bucket_s)
    cached._invalidate_quietly()
    return cached


class CachedSearch:
    """A SearchBackend whose `best` answers come from Redis when a worker asked the same
    within the current bucket and no documents were added since."""

    def __init__(self, backend: SearchBackend, r: redis.Redis, bucket_s: int,
                 clock: Callable[[], float] = time.time):
        if bucket_s <= 0:
            raise ConfigError(f"CHORDAL_GET_CACHE_S={bucket_s}: the GET cache needs a "
                              "bucket of at least 1 s (0 turns the cache off)")
        identity = getattr(backend, "identity", None)
        if not identity:
            raise ConfigError(f"{type(backend).__name__} has no `identity`; the GET cache "
                              "cannot tell its entries from another store's")
        self.backend = backend
        self.identity: str = identity
        self.lag_days: int = backend.lag_days
        self.bucket_s = bucket_s
        self._r = r
        self._clock = clock
        self._key = backend_key(identity)

    def best(self, source: str, scope: DateRange | None = None) -> Match:
        try:
            generation = int(self._r.get(naming.get_cache_generation_key(self._key)) or 0)
            now = self._clock()
            bucket = int(now // self.bucket_s)
            key = naming.get_cache_key(self._key, generation, bucket,
                                       lookup_digest(source, scope, self.lag_days))
            raw = self._r.get(key)
            self._r.hincrby(naming.get_cache_stats_key(self._key),
                            "misses" if raw is None else "hits", 1)
        except redis.RedisError as exc:
            log.warning("GET cache unavailable, asking the search store: %s", exc)
            return self.backend.best(source, scope)
        if raw is not None:
            try:
                cached = Entry.model_validate_json(raw).answer(self.backend.documents)
            except ValueError:  # not written by this version: ignore
                cached = None
                log.warning("GET cache entry %s unreadable, asking the search store", key)
            if cached is not None:
                return cached
        found = self.backend.best(source, scope)
        ttl = max(1, math.ceil((bucket + 1) * self.bucket_s - now))
        try:
            self._r.set(key, Entry.of(found).model_dump_json(), ex=ttl)
        except redis.RedisError as exc:
            log.warning("GET cache unavailable, answer not cached: %s", exc)
        return found

    def add(self, docs: Iterable[Document]) -> int:
        """Add through the backend, then bump the generation (also when the backend failed
        midway: Elasticsearch may have written part of the documents)."""
        try:
            added = self.backend.add(docs)
        except BaseException:
            self._invalidate_quietly()
            raise
        try:
            invalidate(self._r, self.identity)
        except redis.RedisError as exc:
            raise StoreError(f"{added} documents were added, but the GET cache in Redis could "
                             f"not be cleared ({exc}); GETs may return older documents for up "
                             f"to {self.bucket_s} s") from exc
        return added

    def _invalidate_quietly(self) -> None:
        try:
            invalidate(self._r, self.identity)
        except redis.RedisError as exc:
            log.warning("GET cache not cleared after a failed add: %s", exc)

    def search(self, query: str, limit: int = 5, window: Window | None = None) -> list[Hit]:
        return self.backend.search(query, limit, window)

    def candidates(self, text: str, window: Window | None, limit: int) -> list[Document]:
        return self.backend.candidates(text, window, limit)

    def count(self) -> int:
        return self.backend.count()

    def documents(self, ids: list[str]) -> dict[str, Document]:
        return self.backend.documents(ids)

    def tables(self, doc_id: str) -> list[Table]:
        return self.backend.tables(doc_id)

    def stats(self) -> dict[str, int]:
        """Hits and misses of this backend's cache, across all workers."""
        return cache_stats(self._r, self.identity)

    def close(self) -> None:
        self.backend.close()

"""The shared GET cache on a real Redis (started once for these tests) in front of real
SQLite stores. A cached answer is recognizable when the store behind it has changed
without the cache being told."""

from __future__ import annotations

from datetime import date

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from shared import naming
from shared.search import TITLE_MATCH, Document, SqliteSearch
from shared.search.cache import (CachedSearch, backend_key, cache_stats, clear_get_cache,
                                 with_get_cache)

from ...conftest import free_port

BUCKET_S = 1800
Q3 = (date(2023, 7, 1), date(2023, 9, 30))
OLD = Document(id="n1", title="Notice", content="Old wording.", date="2023-09-01")
NEW = Document(id="n2", title="Notice", content="New wording.", date="2023-09-20")
"""A later notice of the same title: the store chooses it over OLD once it holds it, so
an answer naming OLD after it was added came from the cache (which holds documents by
id: a document replaced under its id is read as it is now)."""


def first(match):
    """The document a cached or uncached `best` chose, or None."""
    return match.found[0].document if match.found else None


def pair(match):
    return (first(match), match.found[0].confidence) if match.found else None


class Clock:
    """A settable clock, so a test can step into the next bucket."""

    def __init__(self, now: float = 1_000 * BUCKET_S + 5):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add([OLD])
    yield backend
    backend.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cached(store, r, clock):
    return CachedSearch(store, r, BUCKET_S, clock=clock)


def test_a_repeated_get_is_answered_from_the_cache_and_counted_as_a_hit(cached, store):
    assert pair(cached.best("Notice")) == (OLD, TITLE_MATCH)
    store.add([NEW])  # behind the cache's back: only a cached answer can still be old
    assert pair(cached.best("Notice")) == (OLD, TITLE_MATCH)
    assert cached.stats() == {"hits": 1, "misses": 1}


def test_a_cached_answer_is_the_same_document_and_confidence_the_store_gives(cached, store):
    once, again = cached.best("Notice", Q3), cached.best("Notice", Q3)
    assert once == again == store.best("Notice", Q3)
    assert first(again).model_dump() == OLD.model_dump()
    assert [c.verdict for c in again.candidates] == ["chosen"]


def test_adding_documents_through_the_cache_makes_the_next_get_see_them(cached):
    cached.best("Notice")
    cached.add([NEW])
    assert first(cached.best("Notice")).content == "New wording."


def test_nothing_found_is_cached_too_until_documents_are_added(cached, store):
    assert first(cached.best("Tesla Q3 2023 Financial Report")) is None
    store.add([Document(title="Tesla Q3 2023 Financial Report", content="91.7%")])
    assert first(cached.best("Tesla Q3 2023 Financial Report")) is None
    cached.add([])
    assert first(cached.best("Tesla Q3 2023 Financial Report")).content == "91.7%"


def test_entries_expire_with_their_bucket(cached, store, clock, r):
    cached.best("Notice")
    keys = r.keys(f"{naming.KEY_PREFIX}:get-cache:*:*:1000:*")
    assert len(keys) == 1 and 0 < r.ttl(keys[0]) <= BUCKET_S - 5
    store.add([NEW])
    clock.now += BUCKET_S  # the next bucket: a fresh lookup
    assert first(cached.best("Notice")).content == "New wording."


def test_the_date_range_and_the_source_are_part_of_the_key(cached, store):
    cached.best("Notice", Q3)
    store.add([NEW])
    assert first(cached.best("Notice")).content == "New wording."
    assert first(cached.best("  Notice ", Q3)).content == "Old wording."  # whitespace ignored


def test_two_stores_never_share_entries(tmp_path, r, cached):
    other = SqliteSearch(tmp_path / "other.db")
    other.add([NEW])
    try:
        assert first(cached.best("Notice")).content == "Old wording."
        assert first(CachedSearch(other, r, BUCKET_S).best("Notice")).content == "New wording."
    finally:
        other.close()


def test_every_worker_sees_what_another_cached_and_one_add_clears_it_for_all(store, r):
    a, b = CachedSearch(store, r, BUCKET_S), CachedSearch(store, r, BUCKET_S)
    a.best("Notice")
    store.add([NEW])
    assert first(b.best("Notice")).content == "Old wording."
    assert cache_stats(r, store.identity) == {"hits": 1, "misses": 1}
    a.add([])
    assert first(b.best("Notice")).content == "New wording."


def test_when_redis_is_unreachable_gets_are_answered_by_the_store(store):
    down = redis.Redis(port=free_port(), socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0))
    assert pair(CachedSearch(store, down, BUCKET_S).best("Notice")) == (OLD, TITLE_MATCH)


def test_clearing_from_the_cli_bumps_the_generation_or_says_it_could_not(store, r, redis_server):
    key = naming.get_cache_generation_key(backend_key(store.identity))
    assert clear_get_cache(redis_server.url, store.identity)
    assert int(r.get(key)) == 1
    assert not clear_get_cache(f"redis://127.0.0.1:{free_port()}/0", store.identity, 0.2)


def test_a_worker_opening_its_backend_clears_what_was_cached_before(store, r):
    CachedSearch(store, r, BUCKET_S).best("Notice")
    store.add([NEW])  # e.g. `chordal index` while no Redis was running
    assert first(with_get_cache(store, r, BUCKET_S).best("Notice")).content == "New wording."


def test_a_zero_bucket_turns_the_cache_off(store, r):
    assert with_get_cache(store, r, 0) is store


def test_a_cached_get_of_a_long_filing_holds_it_by_id_not_its_text(cached, store, r):
    filing = Document(id="f1", title="Acme 2023 Form 10-K", date="2024-02-20",
                      content="\f".join(f"Page {n}. Revenue grew in every segment. " * 400
                                        for n in range(1, 101)))  # 1.6 million characters
    cached.add([filing])
    assert first(cached.best("Acme 2023 Form 10-K")) == filing
    (key,) = r.keys(f"{naming.KEY_PREFIX}:get-cache:*:*:1000:*")
    assert r.strlen(key) < 4_000
    assert first(cached.best("Acme 2023 Form 10-K")) == filing  # a hit reads it from the store
    assert cached.stats() == {"hits": 1, "misses": 1}

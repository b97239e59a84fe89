"""Fixtures for the search tests: a client of the session's bare Redis (for the GET
cache), empty at the start of each test, and the Elasticsearch URL when one is configured."""

from __future__ import annotations

import pytest
import redis

from shared.config import Settings
from shared.stack.redis_server import EmbeddedRedis

NO_ES = "CHORDAL_ES_URL not set: no Elasticsearch server on this machine"
"""Why the Elasticsearch variants are skipped (shown by `pytest -ra`)."""


@pytest.fixture
def r(redis_server: EmbeddedRedis) -> redis.Redis:
    """A client of the session's Redis (emptied before each test by `clean_redis`)."""
    client = redis.Redis.from_url(redis_server.url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def es_url() -> str:
    """CHORDAL_ES_URL, or the test is skipped saying why."""
    url = Settings().es_url
    if not url:
        pytest.skip(NO_ES)
    return url

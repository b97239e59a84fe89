"""Fixtures for the LLM client tests: the replay server (the `fake_llm` fixture of
tests/integration/conftest.py, one process per session), client settings pointing at
it; the concurrency limit uses the session's bare Redis (`redis_server`), which `r`
gives without a stream choice stored for the replay endpoint."""

from __future__ import annotations

import pytest
import redis

from shared.config import Settings
from shared.llm.client import LLMClient

from ...integration.conftest import FakeLLM, fake_llm  # noqa: F401 - the fixture, reused


@pytest.fixture
def llm_settings(fake_llm: FakeLLM) -> Settings:
    """Settings for a client of `fake_llm`: 3 retries, 2 s timeout."""
    return Settings(llm_base_url=f"{fake_llm.base_url}/v1", llm_model="replay",
                    llm_max_retries=3, llm_timeout_s=2.0)


@pytest.fixture
def r(redis_server, llm_settings) -> redis.Redis:
    """The session's Redis, without a stream choice stored for the replay endpoint."""
    client = redis.Redis.from_url(redis_server.url)
    key = LLMClient(llm_settings).stream_choice.key
    client.delete(key)
    yield client
    client.delete(key)


def in_flight(limit) -> int:
    """How many slots of a `ConcurrencyLimit` are held now (leases not yet run out, by the
    Redis server's clock)."""
    seconds, micros = limit.client.time()
    return int(limit.client.zcount(limit.key, f"({seconds + micros / 1e6}", "+inf"))

"""Fixtures: a real Redis and real Celery worker processes, started once per session,
and `redis_server`, a bare Redis (no workers) for tests of what is stored in it.

The stack runs under a temporary CHORDAL_HOME with its own Redis port, so tests never
touch a developer's `.chordal`. Every process is started and stopped by its PID.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from shared.broker import make_celery
from shared.config import Settings
from shared.models import Plan, Query, RunRecord
from shared.search import open_backend
from shared.search.corpus import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.redis_server import EmbeddedRedis
from shared.store import RunStore
from producers.submit import submit

DATA = Path(__file__).resolve().parent.parent / "shared" / "data"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pipeline:
    """A running stack plus the calls a test needs: ask, submit, run the CLI."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
        self.app = make_celery(settings)

    def submit(self, question: str, plan: dict | Plan | None = None, **kw) -> Query:
        if isinstance(plan, dict):
            plan = Plan.model_validate(plan)
        query = Query(question=question, plan=plan, **kw)
        assert submit(query, self.store, self.app)
        return query

    def ask(self, question: str, plan: dict | Plan | None = None, timeout: float = 30) -> RunRecord:
        query = self.submit(question, plan)
        record = self.store.wait(query.id, timeout)
        assert record.status in ("done", "failed"), f"query stuck in {record.status}"
        return record

    def env(self) -> dict:
        return {**os.environ, "CHORDAL_HOME": str(self.settings.home),
                "CHORDAL_REDIS_URL": self.settings.effective_redis_url}

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "producers", *args], env=self.env(),
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def settings(tmp_path_factory) -> Settings:
    home = tmp_path_factory.mktemp("chordal-home")
    return Settings(home=home, redis_port=free_port(), redis_url=None,
                    search_db=home / "search.db")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> EmbeddedRedis:
    """A Redis with no worker attached, started once per session and stopped by its PID;
    tests that need it empty flush it first."""
    with EmbeddedRedis(tmp_path_factory.mktemp("bare-redis"), free_port()) as server:
        yield server


@pytest.fixture
def bare_store(redis_server) -> RunStore:
    """A run store on the bare Redis (no workers: nothing sweeps or answers behind it)."""
    return RunStore.from_url(redis_server.url, ttl_s=3600)


@pytest.fixture(scope="session")
def pipeline(settings) -> Pipeline:
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    with Stack(settings) as stack:
        p = Pipeline(settings.model_copy(update={"redis_url": stack.redis_url}))
        p.stack = stack
        yield p

"""`chordal index FILE [--backend sqlite|elasticsearch]` as a user runs it: a real
subprocess, a real SQLite store, and a real Redis holding the shared GET cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from shared.search import SqliteSearch
from shared.search.cache import CachedSearch
from shared.stack.redis_server import EmbeddedRedis

from ..conftest import free_port

pytestmark = pytest.mark.integration  # each test runs the CLI or a Redis of its own

ROOT = Path(__file__).resolve().parents[2]
DOCS = [{"id": "tsla-q3", "title": "Tesla Q3 2023 Financial Report", "date": "2023-09-30",
         "content": "Battery yield rate of 91.7%."},
        {"title": "Weekly Bulletin", "content": "Trains replace the night ferries."}]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    with EmbeddedRedis(tmp_path_factory.mktemp("index-redis"), free_port()) as server:
        yield server


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def chordal(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    clean.update(PYTHONPATH=str(ROOT), CHORDAL_HOME=str(tmp_path / "home"), **env)
    return subprocess.run([sys.executable, "-m", "producers", *args], cwd=tmp_path, env=clean,
                          capture_output=True, text=True, timeout=60)


def test_without_an_elasticsearch_url_documents_go_to_the_sqlite_store(tmp_path, corpus,
                                                                       redis_server):
    result = chordal(tmp_path, "index", str(corpus), CHORDAL_REDIS_URL=redis_server.url)
    assert result.returncode == 0, result.stderr
    assert "indexed 2 documents" in result.stdout and "into sqlite (2 in the store)" in result.stdout
    assert ("periods: 0 given, 1 read from titles, 1 none (these count by publication date); "
            "1 with neither period nor date (e.g. 'Weekly Bulletin')") in result.stdout
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        assert store.best("Weekly Bulletin").found


def test_indexing_clears_the_shared_get_cache_so_workers_see_the_new_documents(
        tmp_path, corpus, redis_server):
    r = redis.Redis.from_url(redis_server.url)
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        worker_view = CachedSearch(store, r, 1800)
        assert worker_view.best("Tesla Q3 2023 Financial Report").found == []  # cached
        result = chordal(tmp_path, "index", str(corpus), "--backend", "sqlite",
                         CHORDAL_REDIS_URL=redis_server.url)
        assert result.returncode == 0, result.stderr
        assert worker_view.best("Tesla Q3 2023 Financial Report").found[0].document.id == "tsla-q3"
    r.close()


def test_the_elasticsearch_backend_without_a_url_is_refused_naming_the_variable(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus), "--backend", "elasticsearch")
    assert result.returncode == 2
    assert "CHORDAL_ES_URL" in result.stderr
    assert not (tmp_path / "home" / "search.db").exists()


def test_an_unknown_backend_is_refused_listing_the_ones_there_are(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus), "--backend", "solr")
    assert result.returncode == 2
    assert "sqlite, elasticsearch" in result.stderr


def test_an_elasticsearch_that_is_down_fails_the_command_saying_it_cannot_connect(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus),
                     CHORDAL_ES_URL=f"http://127.0.0.1:{free_port()}", CHORDAL_GET_CACHE_S="0")
    assert result.returncode == 1
    assert "cannot connect" in result.stderr and "CHORDAL_ES_URL" in result.stderr


@pytest.mark.parametrize("line, says", [
    ('{"title": ' + "[" * 100_000 + "]" * 100_000 + ', "content": "c"}',
     "docs.jsonl line 1: nested too deeply"),
    (json.dumps({"title": "Report \ud800", "content": "c"}),
     "docs.jsonl line 1: field 'title': holds a lone surrogate"),
], ids=["100k-deep", "surrogate"])
def test_a_line_python_reads_but_no_store_can_keep_exits_2_naming_it(tmp_path, line, says):
    path = tmp_path / "docs.jsonl"
    path.write_text(line + "\n")
    result = chordal(tmp_path, "index", str(path))
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr
    assert "'record'" not in result.stderr


def test_an_empty_file_indexes_nothing_and_exits_2_as_enqueue_does(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text("\n  \n")
    result = chordal(tmp_path, "index", str(path))
    assert result.returncode == 2, result.stdout
    assert "no documents in the file" in result.stderr
    assert not (tmp_path / "home" / "search.db").exists()

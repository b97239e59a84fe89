"""Fixtures for the ReAct tests: a real SQLite search store with the bundled corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

import shared
from shared.ingest import load_jsonl
from shared.search import SqliteSearch

DATA = Path(shared.__file__).parent / "data"


@pytest.fixture
def corpus(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    yield backend
    backend.close()

"""Fixtures for the tool tests: StepResults built by hand (`ok`, `failed`) and a real
SQLite search store holding the bundled corpus (`corpus`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import shared
from shared.models import Evidence, StepResult
from shared.ingest import load_jsonl
from shared.search import SqliteSearch

DATA = Path(shared.__file__).parent / "data"


@pytest.fixture
def ok():
    """`ok("A", "91.7", document=…)`: the ok result of step A, action_id `q:A`."""

    def make(step_id: str, value, document: Evidence | None = None,
             documents: list[Evidence] | None = None, operation: str = "EXTRACT") -> StepResult:
        return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                          status="ok", value=value, confidence="pattern", document=document,
                          documents=documents or [])

    return make


@pytest.fixture
def failed():
    """`failed("B", "NOT_FOUND")`: the error result of step B."""

    def make(step_id: str, code: str = "NOT_FOUND", message: str = "no document matches",
             operation: str = "GET") -> StepResult:
        return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                          status="error", error_code=code, error_message=message)

    return make


@pytest.fixture
def corpus(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    yield backend
    backend.close()

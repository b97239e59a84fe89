"""The task boundary: an unexpected error fails the query once, with its reason; a
Redis outage and the errors Celery retries pass through to be ridden out or retried.
Importing the workers' app builds no Settings and imports no task module."""

from __future__ import annotations

import subprocess
import sys

import pytest
import redis

from shared.errors import StoreError
from workers import boundary


class Store:
    def __init__(self):
        self.failed: list[tuple[str, str]] = []

    def fail(self, query_id: str, reason: str) -> None:
        self.failed.append((query_id, reason))


class Task:
    autoretry_for = (StoreError,)


@pytest.fixture
def store(monkeypatch):
    store = Store()
    monkeypatch.setattr(boundary, "run_store", lambda: store)
    return store


def test_an_unexpected_error_fails_the_query_naming_what_broke(store):
    with boundary.ends_query(object(), "q1", "finalizer failed"):
        raise KeyError("answer")
    assert store.failed == [("q1", "finalizer failed: KeyError: 'answer'")]


@pytest.mark.parametrize("error", [redis.ConnectionError("down"), StoreError("no plan yet")],
                         ids=["redis-down", "retried"])
def test_a_redis_outage_or_a_retried_error_passes_through_and_fails_nothing(store, error):
    with pytest.raises(type(error)):
        with boundary.ends_query(Task(), "q1", "ReAct iteration 2 crashed"):
            raise error
    assert store.failed == []


@pytest.mark.integration  # a fresh interpreter
def test_importing_the_app_builds_no_settings_and_imports_no_task_module():
    code = ("import sys, workers.app as a; "
            "assert a.settings.cache_info().currsize == 0; "
            "assert not [m for m in a.TASK_MODULES if m in sys.modules]")
    subprocess.run([sys.executable, "-c", code], check=True)

"""Fixtures for the fault tests: each test starts its own small stack (own CHORDAL_HOME,
own Redis port) whose workers import fault_tools.py, so it may kill workers or Redis.

`faulty_stack(roles=..., documents=[...], **settings)` (documents added to the corpus) returns a started `Pipeline` (tests/conftest.py)
with `.stack` (the Stack: `.workers`, `.redis`) and `.worker_env`; every stack is
stopped, by its PIDs, when the test ends. `fake_llm` is a replay server of the test's
own (tests/integration/conftest.py's FakeLLM), stopped by its PID when the test ends.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import pytest

from shared import naming
from shared.config import Settings
from shared.models import TERMINAL, RunRecord
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.workers import WorkerProcess
from shared.stores.runs import RunStore

from ..conftest import DATA, Pipeline, free_port
from ..integration.conftest import FakeLLM

HERE = Path(__file__).resolve().parent
TESLA = "Tesla Q3 2023 Financial Report"


def plan(source: str = TESLA) -> dict:
    """GET the report (the source may carry a fault_tools prefix), extract the yield."""
    return {"domain": "finance", "steps": [
        {"id": "E1", "operation": "GET", "source": source, "temporal_scope": "2023-Q3",
         "output_var": "$R"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R",
         "pattern": r"battery yield rate of (\d+\.\d+)%", "output_var": "$Y",
         "fallback": "unknown"}],
        "answer": "Battery yield was {{ Y }}%."}


def unacked_step_tasks(store: RunStore) -> dict[str, dict]:
    """Delivery tag -> the StepTask (as JSON data) of every step message a worker holds
    unacknowledged (kombu's Redis transport parks them in the `unacked` hash until acked
    or restored)."""
    held = {}
    for tag, raw in store.r.hgetall("unacked").items():
        message, _exchange, routing_key = json.loads(raw)
        if routing_key != "execute":
            continue
        body = message["body"]
        if message["properties"].get("body_encoding") == "base64":
            body = base64.b64decode(body)
        held[tag] = json.loads(body)[0][0]
    return held


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def kill_worker(p: Pipeline, role: str) -> WorkerProcess:
    """SIGKILL the stack's live `role` worker, by its PID; return it."""
    old = next(w for w in p.stack.workers if w.role == role and w.alive)
    old.kill()
    assert not old.alive
    return old


def start_worker(p: Pipeline, role: str, timeout: float = 30) -> WorkerProcess:
    """Start one more `role` worker (stopped with the stack, by its PID), once ready; it
    logs in as the stack's workers do."""
    fresh = WorkerProcess(role, p.stack.worker_settings, env=p.worker_env)
    p.stack.workers.append(fresh)
    fresh.start()
    fresh.wait_ready(timeout=timeout)
    return fresh


def wait_all(store: RunStore, ids: list[str], timeout: float) -> dict[str, RunRecord]:
    """Every query's record once all are terminal (or when `timeout` passes)."""
    deadline = time.monotonic() + timeout
    records = {}
    for qid in ids:
        records[qid] = store.wait(qid, max(0.1, deadline - time.monotonic()))
    return records


def assert_one_outcome(store: RunStore, records: dict[str, RunRecord]) -> None:
    """Each query is terminal with exactly one outcome: an answer and one finalizer run
    when done, a reason and no answer when failed; waiters were told exactly once."""
    for qid, record in records.items():
        assert record.status in TERMINAL, (qid, record.status)
        assert store.r.hget(naming.run_key(qid), "terminal") == record.status
        if record.status == "done":
            assert record.answer is not None and record.error is None
            assert record.finalizer_runs == 1, (qid, record.finalizer_runs)
        else:
            assert record.answer is None and record.error, qid
        assert store.r.zscore(naming.deadlines_key(), qid) is None


@pytest.fixture
def fake_llm(tmp_path):
    server = FakeLLM(tmp_path / "fake-llm").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def faulty_stack(tmp_path):
    stacks: list[Stack] = []
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}

    def start(roles=("planner", "executor", "finalizer"), documents=(), **overrides) -> Pipeline:
        home = tmp_path / f"home{len(stacks)}"
        home.mkdir()
        settings = Settings(**{"home": home, "redis_port": free_port(), "redis_url": None,
                               "search_db": home / "search.db",
                               "tool_modules": ["fault_tools"], **overrides})
        backend = open_backend(settings)
        backend.add(load_jsonl(DATA / "corpus.jsonl") + list(documents))
        backend.close()
        stack = Stack(settings, roles=roles, env=env)
        stack.__enter__()
        stacks.append(stack)
        p = Pipeline(settings.model_copy(update={"redis_url": stack.redis_url}))
        p.stack, p.worker_env = stack, env
        return p

    yield start
    for stack in reversed(stacks):
        stack.__exit__(None, None, None)

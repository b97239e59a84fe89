"""The test-host cluster (cluster.py) as a fixture: `hosts(executors=2, **settings)`
builds Redis on host `redis`, the planner and finalizer on host `control`, one executor
per host `exec1` … `execN`, and a host `producer` for the CLI; every test that uses it
is `integration` and `hosts`, and skips, saying why, where namespaces cannot be made.

Executors load tests/faults/fault_tools.py, so a GET source `[slow S] title` holds its
task S seconds. Everything is stopped by PID and every namespace removed when the test
ends, failed or not.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shared import naming
from shared.config import Settings
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.workers import WorkerProcess

from ..conftest import DATA, Pipeline, free_port
from .cluster import Cluster, Host, HostRedis, probe

FAULT_TOOLS = Path(__file__).resolve().parent.parent / "faults"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/hosts/" in str(item.fspath):
            item.add_marker(pytest.mark.hosts)
            item.add_marker(pytest.mark.integration)


@dataclass
class Hosts:
    cluster: Cluster
    redis: HostRedis
    settings: Settings
    pipeline: Pipeline
    env: dict
    workers: dict[str, list[WorkerProcess]] = field(default_factory=dict)

    def host(self, name: str) -> Host:
        return next(h for h in self.cluster.hosts if h.name == name)

    def start_worker(self, host: str, role: str, **settings) -> WorkerProcess:
        """One `role` worker inside `host`, ready (it answered a ping through Redis)."""
        home = self.cluster.home / host
        worker = WorkerProcess(role, self.settings.model_copy(update={"home": home, **settings}),
                               env=self.env)
        self.host(host).start(worker)
        worker.wait_ready(60, broker=self.settings.effective_redis_url)
        self.workers.setdefault(host, []).append(worker)
        return worker

    def cli(self, host: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """`chordal ARGS` run on `host` (its output captured; it ends by itself)."""
        env = {**os.environ, **self.env, "CHORDAL_HOME": str(self.cluster.home / host),
               "CHORDAL_REDIS_URL": self.settings.effective_redis_url,
               "CHORDAL_SEARCH_DB": str(self.settings.search_db)}
        return subprocess.run(self.host(host).wrap([sys.executable, "-m", "producers", *args]),
                              env=env, capture_output=True, text=True, timeout=timeout)

    def left_over(self) -> tuple[int, int]:
        """Messages still taken and unacknowledged (kombu's `unacked`), and held-task
        records (shared/broker/recovery.py): both 0 once everything was answered."""
        r = self.pipeline.store.r
        return r.hlen("unacked"), r.hlen(naming.held_messages_key())


@pytest.fixture
def hosts(tmp_path):
    why = probe()
    if why:
        pytest.skip(why)
    cluster = Cluster(tmp_path / "cluster")
    try:
        def build(executors: int = 2, **overrides) -> Hosts:
            redis_host = cluster.add_host("redis")
            for name in ("control", *(f"exec{i}" for i in range(1, executors + 1)), "producer"):
                cluster.add_host(name)
            password = secrets.token_hex(12)
            server = HostRedis(redis_host, free_port(), cluster.home / "redis", password=password)
            server.start_on_host()
            search_db = cluster.home / "search.db"
            settings = Settings(**{"home": cluster.home / "root", "redis_url": server.url,
                                   "search_db": search_db, "tool_modules": ["fault_tools"],
                                   "worker_dead_after_s": 5, **overrides})
            backend = open_backend(settings)
            backend.add(load_jsonl(DATA / "corpus.jsonl"))
            backend.close()
            env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(FAULT_TOOLS),
                                                               os.environ.get("PYTHONPATH")]))}
            h = Hosts(cluster, server, settings, Pipeline(settings), env)
            h.start_worker("control", "planner")
            h.start_worker("control", "finalizer")
            for i in range(1, executors + 1):
                h.start_worker(f"exec{i}", "executor", executor_concurrency=4)
            return h
        yield build
    finally:
        cluster.close()


def wait_for(predicate, timeout: float, what: str, interval: float = 0.1) -> float:
    """Seconds until `predicate()` held; AssertionError naming `what` after `timeout`."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, f"timed out waiting for {what}"
        time.sleep(interval)
    return time.monotonic() - started

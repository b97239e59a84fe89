"""Fixtures: a real Redis and real Celery worker processes, started once per session,
and `redis_server`, a bare Redis (no workers) for tests of what is stored in it.

The stack runs under a temporary CHORDAL_HOME with its own Redis port, so tests never
touch a developer's `.chordal`. Every process is started and stopped by its PID.

Clean state: a test that uses the bare Redis finds it empty (FLUSHALL before it runs);
a test that uses a worker stack (`pipeline`, `llm_pipeline`) finds it idle (no task
waiting in or taken from a queue) and uses ids no other test uses. The stack's Redis is
never flushed: the workers' queue bindings, presence and heartbeats live in it.

Markers: a test that uses a fixture of `PROCESS_FIXTURES` (directly or through another
fixture), and every `faults` test, is marked `integration` here; one that starts a
process itself carries the marker on the test or its module. A test without it that starts a process fails, naming the
command, so `pytest -m "not integration"` starts none (the bounded child of
shared/isolation.py excepted: rendering a template and checking a pattern run in it).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from shared import naming
from shared.broker.app import make_celery
from shared.config import Settings
from shared.journey.placement import Placement
from shared.models import Plan, Query, RunRecord
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.redis_server import EmbeddedRedis
from shared.stores.runs import RunStore
from producers.submit import submit

DATA = Path(__file__).resolve().parent.parent / "shared" / "data"
PROCESS_FIXTURES = frozenset({"redis_server", "pipeline", "llm_pipeline", "fake_llm", "api",
                              "faulty_stack", "local_llm"})
"""Fixtures that start Redis, workers, the replay LLM server, the local model server or
the API server."""
ISOLATED_CHILD = "from shared.isolation import serve"
"""In the command of the bounded child (a template's render, a pattern's compile), the
one process unit tests may start."""
STACK_QUEUES = (naming.QUEUE_PLAN, naming.QUEUE_EXECUTE, naming.QUEUE_FINALIZE,
                naming.QUEUE_REACT)
UNACKED = "unacked"
"""kombu's Redis transport: the hash of messages taken and not yet acknowledged."""
IDLE_TIMEOUT_S = 120.0
"""How long a stack test waits for the work of the tests before it to end."""


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("faults") \
                or PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


_running: list[pytest.Item | None] = [None]
"""The test being set up, run or torn down (its session fixtures included)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    _running[0] = item
    try:
        yield
    finally:
        _running[0] = None


def pytest_configure(config) -> None:
    start = subprocess.Popen._execute_child

    def guarded(self, args, *rest, **kw):
        item = _running[0]
        argv = [args] if isinstance(args, (str, bytes)) else list(args)
        if item is not None and not item.get_closest_marker("integration") \
                and not any(ISOLATED_CHILD in str(a) for a in argv):
            pytest.fail(f"{item.nodeid} starts a process ({' '.join(map(str, argv))[:200]}) "
                        "but is not marked integration", pytrace=False)
        return start(self, args, *rest, **kw)

    subprocess.Popen._execute_child = guarded


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graph_steps(query_id: str, plan: Plan) -> list:
    """The dispatch graph of a whole plan, as PlanDispatch.close adds it to an empty one."""
    return Placement(query_id, {}).place_plan(plan)[1]


def peak_mb(pid: int) -> float:
    """The peak resident memory (VmHWM) of process `pid`, in MB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def processes_using(home: Path) -> list[int]:
    """PIDs whose command line or environment names `home` (read from /proc): what a
    command run with CHORDAL_HOME=home left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            blob = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if str(home).encode() in blob:
            found.append(int(entry.name))
    return found


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
    `clean_redis` empties it before every test that uses it."""
    with EmbeddedRedis(tmp_path_factory.mktemp("bare-redis"), free_port()) as server:
        yield server


@pytest.fixture(autouse=True)
def clean_redis(request) -> None:
    """The bare Redis, emptied before each test that uses it; a stack test waits until
    its stack is idle: nothing in the plan, execute, finalize or react queue, no task
    taken and unacknowledged, no batch with plan messages in its lane (so no earlier test's
    work is still running)."""
    if "redis_server" in request.fixturenames:
        server = request.getfixturevalue("redis_server")
        with redis.Redis.from_url(server.url) as r:
            r.flushall()
    for name in ("pipeline", "llm_pipeline"):
        if name in request.fixturenames:
            wait_idle(request.getfixturevalue(name).store.r)


def wait_idle(r: redis.Redis, timeout: float = IDLE_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with r.pipeline() as p:
            for q in STACK_QUEUES:
                p.llen(q)
            p.zcard(naming.plan_lanes_key())
            p.hlen(UNACKED)
            *waiting, laned, held = p.execute()
        if not any(waiting) and not laned and not held:
            return
        assert time.monotonic() < deadline, (
            f"the stack is still busy with earlier tests' work after {timeout:g}s: "
            f"{dict(zip(STACK_QUEUES, waiting))} waiting, {laned} batches in plan lanes, "
            f"{held} taken")
        time.sleep(0.1)


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

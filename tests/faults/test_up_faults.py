"""`chordal up` rides out Redis going away: the embedded Redis SIGKILLed mid-batch is
started again on its AOF, an external Redis that restarts is waited for, and every query
is answered once. `chordal up` runs as a real subprocess, stopped by its PID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared import naming
from shared.models import TERMINAL
from shared.stores.runs import RunStore
from shared.stack.embedded import redis_answers
from shared.stack.process import ChildProcess
from shared.stack.redis_server import EmbeddedRedis

from ..conftest import DATA, free_port, processes_using
from .conftest import assert_one_outcome, wait_all, wait_for

pytestmark = pytest.mark.faults
QUESTIONS = [q.strip() for q in (DATA / "questions.txt").read_text().splitlines() if q.strip()]


class Up:
    """`chordal up` in `home`, its output in a file, stopped with SIGINT by its PID."""

    def __init__(self, home: Path, **env: str):
        self.home = home
        self.env = {**os.environ, "CHORDAL_HOME": str(home), **env}
        if "CHORDAL_REDIS_URL" not in env:
            self.env.pop("CHORDAL_REDIS_URL", None)
        self.cli("index", str(DATA / "corpus.jsonl"))
        self.log_path = home / "up.log"
        self.process = ChildProcess([sys.executable, "-m", "producers", "up"], self.log_path,
                                    what="chordal up", env=self.env, stop_signal=signal.SIGINT,
                                    stop_timeout=60.0).start()

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "producers", *args], env=self.env,
                              capture_output=True, text=True, timeout=120, check=True)

    def wait_up(self) -> None:
        self.process.wait_until(lambda: "chordal stack up" in self.logs(), 90,
                                "say 'chordal stack up'", AssertionError, interval=0.2)

    def logs(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        self.process.stop()


@pytest.fixture
def up(tmp_path):
    started: list[Up] = []

    def start(**env: str) -> Up:
        u = Up(tmp_path / f"home{len(started)}", **env)
        started.append(u)
        u.wait_up()
        return u

    yield start
    for u in started:
        u.stop()


def enqueue(u: Up, url: str, n: int, deadline: float = 120) -> list[str]:
    lines = [json.dumps({"id": f"q{i}", "question": QUESTIONS[i % len(QUESTIONS)],
                         "deadline": deadline}) for i in range(n)]
    batch = u.home / "batch.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    subprocess.run([sys.executable, "-m", "producers", "enqueue", str(batch)],
                   env={**u.env, "CHORDAL_REDIS_URL": url}, check=True, capture_output=True)
    return [f"q{i}" for i in range(n)]


def terminal(store: RunStore, ids: list[str]) -> int:
    return sum(store.r.hget(naming.run_key(q), "status") in TERMINAL for q in ids)


def test_the_embedded_redis_killed_mid_batch_is_restarted_and_the_batch_answered(up):
    port = free_port()
    u = up(CHORDAL_REDIS_PORT=str(port))
    url = f"redis://127.0.0.1:{port}/0"
    store = RunStore.from_url(url, 3600)
    ids = enqueue(u, url, 300, deadline=40)
    time.sleep(1.5)  # appendfsync everysec: what was enqueued is on disk
    wait_for(lambda: terminal(store, ids) >= 50, 60, "a sixth of the batch to finish")
    os.kill(int((u.home / "redis" / "redis.pid").read_text()), signal.SIGKILL)
    time.sleep(0.2)
    wait_for(lambda: redis_answers(url), 30, "chordal up to start Redis again")
    records = wait_all(store, ids, 90)
    assert_one_outcome(store, records)  # terminal once; one finalizer run per answer
    assert {q: r.status for q, r in records.items()} == {q: "done" for q in ids}, {
        q: r.error for q, r in records.items() if r.status != "done"}
    assert u.process.alive, u.logs()
    assert "the embedded Redis exited (code -9); started again on its AOF" in u.logs()
    assert "Traceback" not in u.logs()


def test_an_external_redis_that_restarts_is_waited_for_and_the_stack_carries_on(up, tmp_path):
    with EmbeddedRedis(tmp_path / "external", free_port()) as redis_server:
        u = up(CHORDAL_REDIS_URL=redis_server.url)
        store = RunStore.from_url(redis_server.url, 3600)
        before = enqueue(u, redis_server.url, 20)
        assert all(r.status == "done" for r in wait_all(store, before, 60).values())
        redis_server.stop()
        wait_for(lambda: "Redis does not answer" in u.logs(), 30, "the outage to be logged")
        redis_server.start()
        wait_for(lambda: "Redis answers again after" in u.logs(), 30, "the recovery to be logged")
        assert u.process.alive, u.logs()
        after = [q.replace("q", "r") for q in before]
        lines = [json.dumps({"id": q, "question": QUESTIONS[0]}) for q in after]
        (u.home / "after.jsonl").write_text("\n".join(lines) + "\n")
        subprocess.run([sys.executable, "-m", "producers", "enqueue", str(u.home / "after.jsonl")],
                       env={**u.env}, check=True, capture_output=True)
        records = wait_all(store, after, 60)
        assert_one_outcome(store, records)
        assert all(r.status == "done" for r in records.values())
        assert "Traceback" not in u.logs()


def test_sigterm_stops_the_stack_and_its_children_and_says_so(up):
    # what systemd, docker stop and kill send: the same clean stop as Ctrl-C, said as it
    u = up()
    children = processes_using(u.home)
    assert len(children) >= 2  # Redis and the workers
    code = u.process.stop(sig=signal.SIGTERM)
    assert code == 128 + signal.SIGTERM  # a stop by signal, as the shell reports it
    assert "chordal stack stopped" in u.logs()
    assert processes_using(u.home) == []

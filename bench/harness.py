"""The bench's processes: one embedded Redis for the whole run, a replay LLM server,
and per-phase worker sets (restarted when a phase needs other settings), all started
and stopped by PID.

Consumes a base `Settings`; produces `Phase` objects with `submit`, `wait_all` and a
`noop` round trip on the same broker.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import urllib.request
from pathlib import Path

from shared.broker.app import make_celery
from shared.config import Settings
from shared.models import TERMINAL, Plan, Query, RunRecord
from shared.stack.process import ChildProcess, answers_http
from shared.stack.workers import WorkerProcess
from shared.stores.runs import RunStore
from producers.submit import submit

from bench import noop
from bench.tools import NOOP_TASK

ROOT = Path(__file__).resolve().parent.parent


class ReplayLLM:
    """`chordal fake-llm` as a child process; `load(entries)` replaces its script."""

    def __init__(self, home: Path, port: int, latency: float):
        self.home, self.port, self.latency = home, port, latency
        self.base_url = f"http://127.0.0.1:{port}"
        self.process = ChildProcess(
            [sys.executable, "-m", "producers", "fake-llm", "--script",
             str(home / "script.jsonl"), "--port", str(port), "--latency", str(latency)],
            home / "fake-llm.log", what="fake-llm")

    def start(self) -> ReplayLLM:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "script.jsonl").write_text("")
        self.process.start_and_wait(lambda: answers_http(self.base_url + "/v1/models"), 20.0)
        return self

    def _request(self, method: str, path: str, body: bytes | None = None):
        req = urllib.request.Request(self.base_url + path, data=body, method=method)
        with urllib.request.urlopen(req, timeout=10) as response:
            return json.loads(response.read())

    def load(self, entries: list[dict]) -> None:
        self._request("PUT", "/_script", "\n".join(json.dumps(e) for e in entries).encode())

    def stop(self) -> None:
        self.process.stop()


class Sender:
    """Submit queries to the workers on `settings`' Redis and wait for their records."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
        self.app = make_celery(settings)

    def submit(self, question: str, plan: dict | None = None, mode: str = "rewoo") -> Query:
        query = Query(question=question, plan=Plan.model_validate(plan) if plan else None,
                      mode=mode, deadline_s=600)
        submit(query, self.store, self.app)
        return query

    def wait(self, query: Query, timeout: float = 300) -> RunRecord:
        record = self.store.wait(query.id, timeout)
        if record is None or record.status not in TERMINAL:
            raise RuntimeError(f"query {query.id} stuck in "
                               f"{record.status if record else 'nowhere'}")
        return record

    def ask(self, question: str, plan: dict | None = None, mode: str = "rewoo") -> RunRecord:
        return self.wait(self.submit(question, plan, mode))


def standalone_settings(home: Path) -> Settings:
    """Settings of a figure run on its own (`python -m bench.NAME`): a fresh home at
    `home`, the embedded Redis on a free port, no GET cache, no LLM."""
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return Settings(_env_file=None, home=home, redis_port=port, redis_url=None,
                    get_cache_s=0, llm_base_url=None, llm_model=None)


def bench_env(get_latency_s: float) -> dict[str, str]:
    """What a bench worker needs: the bench's tools, their GET latency, this checkout."""
    return {"CHORDAL_TOOL_MODULES": "bench.tools",
            "CHORDAL_BENCH_GET_LATENCY_S": str(get_latency_s),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")]))}


class Phase(Sender):
    """Planner, executor, finalizer and react workers with one phase's settings."""

    def __init__(self, settings: Settings, get_latency_s: float = 0.0,
                 executor_threads: int | None = None):
        super().__init__(settings)
        env = bench_env(get_latency_s)
        self.workers = [WorkerProcess(role, settings, env=env,
                                      concurrency=executor_threads if role == "executor"
                                      else None)
                        for role in ("planner", "executor", "finalizer", "react")]

    def __enter__(self) -> Phase:
        try:
            for w in self.workers:
                w.start()
            for w in self.workers:
                w.wait_ready(60)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        for w in reversed(self.workers):
            w.stop(30)

    def _send_noop(self, reply_key: str, i: int) -> None:
        self.app.send_task(NOOP_TASK, args=(reply_key, i), queue="execute",
                           ignore_result=True)

    def noop_round_trip(self) -> float:
        """Seconds from send to reply of one no-op task on Chordal's executor (its
        transport and held-message records: what any Chordal task pays at least)."""
        return noop.round_trip(self._send_noop, self.store.r)

    def noop_rate(self, n: int) -> float:
        """No-op tasks per second on Chordal's executor, `n` sent at once."""
        return noop.rate(self._send_noop, self.store.r, n)

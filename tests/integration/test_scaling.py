"""Scaling out: every task goes to its role's queue and every worker consumes only its
role's queue, so planners, executors, finalizers and react workers scale on their own;
`chordal worker` runs executors on the pool asked for (gevent too) or says why not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from shared import naming
from shared.broker.app import celery_config
from shared.config import Settings
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.process import ChildProcess
from shared.stack.workers import control_app, settings_env, worker_argv

from ..conftest import DATA, Pipeline, free_port

pytestmark = pytest.mark.integration
PLAN = json.loads((DATA / "plans" / "tesla_yield.json").read_text())
ROLE_OF_QUEUE = {q: role for role, qs in naming.ROLE_QUEUES.items() if role != "all" for q in qs}


class CliWorker:
    """`chordal worker ARGS` as a child process, found and stopped by its PID."""

    def __init__(self, settings: Settings, *args: str):
        env = {**os.environ}
        for key, value in settings_env(settings).items():
            env.pop(key, None) if value is None else env.__setitem__(key, value)
        self.process = ChildProcess(
            [sys.executable, "-m", "producers", "worker", *args],
            settings.home / f"cli-worker-{time.time_ns()}.log", what="chordal worker",
            env=env, stop_timeout=30.0).start()

    def node_name(self, app, timeout: float = 30.0) -> str:
        """The worker's node name (`ROLE-PID@host`) once it answers a ping."""
        found: list[str] = []

        def answered() -> bool:
            found.extend(name for reply in app.control.ping(timeout=0.5) or [] for name in reply
                         if f"-{self.process.pid}@" in name)
            return bool(found)

        self.process.wait_until(answered, timeout, "answer a ping", AssertionError, interval=0)
        return found[0]

    def stop(self) -> None:
        self.process.stop()


def test_every_task_is_routed_to_a_queue_that_only_its_role_consumes():
    routes = celery_config(Settings(redis_url="redis://127.0.0.1:1/0"))["task_routes"]
    expected = {naming.TASK_PLAN: "planner", naming.TASK_FINALIZE: "finalizer",
                naming.TASK_REACT: "react",
                **{name: "executor" for name in naming.STEP_TASKS.values()}}
    assert {name: ROLE_OF_QUEUE[route["queue"]] for name, route in routes.items()} == expected


def test_every_worker_command_consumes_only_its_roles_queues_and_sends_events_as_configured():
    for role, role_queues in naming.ROLE_QUEUES.items():
        argv = worker_argv(role, f"{role}-1@host", "threads", 4)
        assert argv[argv.index("-Q") + 1].split(",") == list(role_queues)
        assert "-E" not in argv  # it would send events whatever CHORDAL_WORKER_EVENTS says
    on = celery_config(Settings(redis_url="redis://127.0.0.1:1/0"))
    off = celery_config(Settings(redis_url="redis://127.0.0.1:1/0", worker_events=False))
    assert on["worker_send_task_events"] and on["task_send_sent_event"]  # Flower sees tasks
    assert not off["worker_send_task_events"] and not off["task_send_sent_event"]


def test_each_worker_of_the_stack_consumes_exactly_its_roles_queue(pipeline):
    app = control_app(pipeline.settings.effective_redis_url)
    try:
        workers = {w.name: w.role for w in pipeline.stack.workers}
        replies = app.control.inspect(destination=list(workers), timeout=2).active_queues()
    finally:
        app.close()
    assert {name: sorted(q["name"] for q in qs) for name, qs in replies.items()} == \
        {name: sorted(naming.ROLE_QUEUES[role]) for name, role in workers.items()}


def test_two_gevent_executors_run_every_step_while_one_planner_and_finalizer_keep_up(
        tmp_path_factory):
    home = tmp_path_factory.mktemp("gevent-home")
    settings = Settings(home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db")
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    with Stack(settings, roles=("planner", "finalizer")) as stack:
        settings = settings.model_copy(update={"redis_url": stack.redis_url})
        pipeline = Pipeline(settings)
        executors = [CliWorker(settings, "--role", "executor", "--pool", "gevent", "-c", "50")
                     for _ in range(2)]
        try:
            names = [e.node_name(pipeline.app) for e in executors]
            queries = [pipeline.submit("battery yield", PLAN) for _ in range(10)]
            records = [pipeline.store.wait(q.id, 60) for q in queries]
            assert [r.status for r in records] == ["done"] * 10
            assert all("91.7" in r.answer.text for r in records)
            stats = pipeline.app.control.inspect(destination=names, timeout=2).stats()
        finally:
            for e in executors:
                e.stop()
    assert {stats[n]["pool"]["implementation"] for n in names} == \
        {"celery.concurrency.gevent:TaskPool"}
    assert sum(sum(stats[n].get("total", {}).values()) for n in names) == 10 * len(PLAN["steps"])


def run_cli(*args: str, python_prelude: str = "pass") -> subprocess.CompletedProcess:
    code = (f"import sys; {python_prelude}; sys.argv = ['chordal', *{list(args)!r}]; "
            "from producers.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)


def test_worker_on_gevent_without_gevent_installed_says_how_to_install_it():
    # `sys.modules[name] = None` is how Python marks a module as not importable.
    result = run_cli("worker", "--role", "executor", "--pool", "gevent",
                     python_prelude="sys.modules['gevent'] = None")
    assert result.returncode == 2
    assert "pip install 'chordal[gevent]'" in result.stderr
    assert "--pool threads" in result.stderr


def test_worker_with_an_unknown_pool_lists_the_pools_it_supports():
    result = run_cli("worker", "--role", "executor", "--pool", "eventlet")
    assert result.returncode == 2
    assert "threads, gevent, prefork, solo" in result.stderr

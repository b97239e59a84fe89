"""`chordal flower` against the test stack: a query's tasks are found through Flower's
REST API by action_id and by query id, each ran on its own role's worker, and the API
refuses requests without the credentials.

Flower runs as a real subprocess (started and stopped by its PID) on the `pipeline`
stack's Redis. It learns about tasks from the workers' events, so each test waits until
Flower has heard every worker before it submits anything.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from shared import naming
from shared.stack.process import ChildProcess, answers_http

from ..conftest import DATA, free_port

pytestmark = pytest.mark.integration
AUTH = "ops:s3cret-flower"
PLAN = json.loads((DATA / "plans" / "tesla_yield.json").read_text())


def eventually(probe, timeout: float = 30.0, interval: float = 0.2):
    """The first truthy value of `probe()`; AssertionError with the last one after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            assert value, f"not true within {timeout:g}s: last value {value!r}"
            return value
        time.sleep(interval)


class Flower:
    """A `chordal flower` child process; `start()`, `get()`, `tasks()`, `stop()`."""

    def __init__(self, env: dict, log_path: Path):
        self.env = {**env, "CHORDAL_FLOWER_AUTH": AUTH}
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.process = ChildProcess(
            [sys.executable, "-m", "producers", "flower", "--port", str(self.port)],
            log_path, what="chordal flower", env=self.env)

    def start(self, timeout: float = 30.0) -> Flower:
        self.process.start_and_wait(lambda: answers_http(self.base_url + "/healthcheck"),
                                    timeout, interval=0.2)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (SIGKILL after `timeout`) by PID."""
        self.process.stop(timeout)

    def get(self, path: str, auth: str | None = AUTH) -> tuple[int, str]:
        """(status, body); a connection that fails is status 0."""
        headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()} \
            if auth else {}
        try:
            with urllib.request.urlopen(urllib.request.Request(self.base_url + path,
                                                               headers=headers), timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return 0, ""

    def tasks(self, search: str) -> dict[str, dict]:
        """Flower's `/api/tasks?search=...`: task id -> task (name, args, state, worker…)."""
        status, body = self.get("/api/tasks?search=" + urllib.parse.quote(search))
        assert status == 200, f"/api/tasks answered {status}: {body}"
        return json.loads(body)

    def workers_heard(self, names: list[str]) -> bool:
        """True once Flower's event stream has shown every worker in `names` online."""
        status, body = self.get("/api/workers?status=1")
        return status == 200 and all(json.loads(body).get(n) for n in names)


@pytest.fixture(scope="module")
def flower(pipeline, tmp_path_factory) -> Flower:
    server = Flower(pipeline.env(), tmp_path_factory.mktemp("flower") / "flower.log").start()
    try:
        # Workers send a heartbeat event every 2 s: once Flower has heard each one, its
        # event capture runs and sees every task sent from now on.
        eventually(lambda: server.workers_heard([w.name for w in pipeline.stack.workers]))
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def answered(pipeline, flower):
    record = pipeline.ask("What was Tesla's battery yield rate in Q3 2023?", PLAN)
    assert record.status == "done", record
    return record


def test_each_step_is_found_in_flower_by_its_action_id(flower, answered):
    assert [s.action_id for s in answered.steps] == [f"{answered.query_id}:E{i}" for i in (1, 2, 3)]
    for step in answered.steps:
        found = eventually(lambda: {tid: t for tid, t in flower.tasks(step.action_id).items()
                                    if t["state"] == "SUCCESS"})
        # "Q:E1" is also a prefix of "Q:E10": the quoted phrase is the exact search.
        exact = flower.tasks(f"args:\"'action_id': '{step.action_id}'\"")
        assert list(exact) == list(found), (step.action_id, found, exact)
        (task,) = exact.values()
        assert task["name"] == naming.STEP_TASKS[step.operation]
        assert task["args"].startswith(f"({{'action_id': '{step.action_id}'")
        assert f"'action_id': '{step.action_id}'" in task["result"]
        assert task["worker"].startswith("executor-")


def test_a_query_id_finds_its_plan_steps_and_finalizer_each_on_its_roles_worker(flower, answered):
    expected = {naming.TASK_PLAN: "planner-", naming.TASK_GET: "executor-",
                naming.TASK_EXTRACT: "executor-", naming.TASK_COMPUTE: "executor-",
                naming.TASK_FINALIZE: "finalizer-"}

    def all_succeeded():
        found = flower.tasks(answered.query_id)
        done = len(found) == len(expected) and all(t["state"] == "SUCCESS" for t in found.values())
        return found if done else None

    tasks = eventually(all_succeeded)
    assert {t["name"]: t["worker"].split("-")[0] + "-" for t in tasks.values()} == expected


def test_flower_api_answers_401_without_credentials_or_with_wrong_ones(flower):
    assert flower.get("/api/tasks", auth=None)[0] == 401
    assert flower.get("/api/tasks", auth="ops:wrong")[0] == 401
    assert flower.get("/api/workers", auth=None)[0] == 401
    assert flower.get("/api/tasks?limit=1")[0] == 200


def test_prometheus_metrics_label_tasks_by_name_never_by_action_id(flower, answered):
    status, metrics = flower.get("/metrics", auth=None)
    assert status == 200
    succeeded = re.findall(r'flower_events_total\{task="([^"]*)",type="task-succeeded"', metrics)
    assert naming.TASK_GET in succeeded and naming.TASK_FINALIZE in succeeded
    assert 'flower_task_runtime_seconds_bucket{le="60.0",task="chordal.get"' in metrics
    assert answered.query_id not in metrics  # one series per task name, not per step


def test_a_message_a_worker_refused_shows_in_flower_as_rejected_under_a_bounded_name(
        flower, pipeline):
    sent = {"forged-step": naming.TASK_EXTRACT, "forged-unknown": "x" * 300}
    for task_id, name in sent.items():  # a step sent to `plan`, and a name nobody registers
        pipeline.app.send_task(name, args=({"query_id": "q-flower"},), queue=naming.QUEUE_PLAN,
                               task_id=task_id, ignore_result=True)

    def rejected() -> dict[str, str] | None:
        seen = {}
        for task_id in sent:
            status, body = flower.get(f"/api/task/info/{task_id}")
            if status == 200 and json.loads(body).get("state") == "REJECTED":
                seen[task_id] = json.loads(body)["name"]
        return seen if len(seen) == len(sent) else None

    assert eventually(rejected) == {"forged-step": naming.TASK_EXTRACT,
                                    "forged-unknown": "(unknown)"}
    _, metrics = flower.get("/metrics", auth=None)
    assert "x" * 300 not in metrics


def test_flower_refuses_to_start_without_credentials(pipeline):
    env = {k: v for k, v in pipeline.env().items() if k != "CHORDAL_FLOWER_AUTH"}
    result = subprocess.run([sys.executable, "-m", "producers", "flower", "--port",
                             str(free_port())], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "CHORDAL_FLOWER_AUTH is not set" in result.stderr

"""Worker processes: real `celery worker` children on a real embedded Redis."""

from __future__ import annotations

import time

import pytest
from celery import Celery

from shared.errors import ConfigError, StackError
from shared.stack.redis_server import EmbeddedRedis
from shared.stack.workers import WorkerProcess, ping_workers

from .conftest import pid_exists

pytestmark = pytest.mark.integration


@pytest.fixture
def redis_server(settings, no_leftovers):
    with EmbeddedRedis(settings.home, settings.redis_port) as server:
        no_leftovers.append(server.pid)
        yield server


@pytest.fixture
def client_app(settings):
    url = settings.effective_redis_url
    app = Celery("probe-client", broker=url, backend=url, set_as_current=False)
    yield app
    app.close()


@pytest.fixture
def worker(settings, redis_server, probe_app, no_leftovers):
    process = WorkerProcess("executor", settings, env=probe_app, app="probe_app:app")
    process.start()
    no_leftovers.append(process.pid)
    yield process
    process.stop(timeout=10)


def test_a_worker_sees_the_settings_of_the_process_that_started_it(worker, settings, client_app):
    worker.wait_ready(timeout=30)
    result = client_app.send_task("probe.settings", queue="execute")
    assert result.get(timeout=15) == {
        "home": str(settings.home.resolve()),
        "redis_url": settings.effective_redis_url,
        "executor_concurrency": 3,
    }


def test_a_warm_stop_lets_the_running_task_finish(worker, client_app):
    worker.wait_ready(timeout=30)
    result = client_app.send_task("probe.sleep", args=[2], queue="execute")
    deadline = time.monotonic() + 15
    while "probe.sleep" not in worker.log_path.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)  # the worker logs "Task probe.sleep[...] received"
    assert "probe.sleep" in worker.log_path.read_text(), worker.log_tail()
    worker.stop(timeout=20)
    assert not pid_exists(worker.pid)
    assert result.get(timeout=5) == "slept"


def test_a_killed_worker_no_longer_answers_and_says_so_when_waited_for(worker, settings):
    worker.wait_ready(timeout=30)
    worker.kill()
    assert not worker.alive and not pid_exists(worker.pid)
    assert ping_workers(settings.effective_redis_url, [worker.name]) == set()
    with pytest.raises(StackError, match="exited with code"):
        worker.wait_ready(timeout=1)


def test_a_worker_whose_app_cannot_be_imported_fails_readiness_with_its_log(
    settings, redis_server, no_leftovers
):
    process = WorkerProcess("planner", settings, app="no_such_module:app")
    process.start()
    no_leftovers.append(process.pid)
    with pytest.raises(StackError, match="planner worker exited") as caught:
        process.wait_ready(timeout=30)
    assert "no_such_module" in str(caught.value)


def test_default_concurrency_follows_the_role(settings):
    assert WorkerProcess("executor", settings).concurrency == 3
    assert WorkerProcess("planner", settings).concurrency == 2
    assert WorkerProcess("finalizer", settings, concurrency=5).concurrency == 5


def test_an_unknown_role_is_a_config_error_listing_the_roles(settings):
    with pytest.raises(ConfigError, match="executor"):
        WorkerProcess("cook", settings)

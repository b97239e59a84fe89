"""Fixtures for the stack tests: free ports, a throwaway Celery app, settings per test.

The throwaway app (`probe_app`) stands in for `workers.app` so these tests exercise
process management only: it builds `Settings` from the environment like a real worker
and has two tasks, one reporting those settings and one that sleeps.
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest

from shared.config import Settings

from ...integration.conftest import fake_llm  # noqa: F401 - the replay server's tests

PROBE_APP = '''
import time
from celery import Celery
from shared.config import Settings

settings = Settings()
app = Celery("probe", broker=settings.effective_redis_url, backend=settings.effective_redis_url)
app.conf.update(accept_content=["json"], task_serializer="json", result_serializer="json")


@app.task(name="probe.settings")
def report_settings():
    return {"home": str(settings.home), "redis_url": settings.effective_redis_url,
            "executor_concurrency": settings.executor_concurrency}


@app.task(name="probe.sleep")
def sleep(seconds):
    time.sleep(seconds)
    return "slept"
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: existence check only
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", redis_port=free_port(), redis_url=None,
                    executor_concurrency=3)


@pytest.fixture
def probe_app(tmp_path: Path) -> dict[str, str]:
    """Write `probe_app.py`; return the `env` that lets a worker import it."""
    code_dir = tmp_path / "code"
    code_dir.mkdir()
    (code_dir / "probe_app.py").write_text(PROBE_APP)
    return {"PYTHONPATH": str(code_dir)}


@pytest.fixture
def no_leftovers():
    """Collects PIDs a test started; fails the test if any is alive at the end."""
    pids: list[int] = []
    yield pids
    alive = [pid for pid in pids if pid_exists(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"processes left running: {alive}"

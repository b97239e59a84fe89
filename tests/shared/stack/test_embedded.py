"""The one-machine stack: Redis plus one worker per role, and nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from shared.errors import StackError, StoreError
from shared.stack.embedded import Stack, is_stack_running

from .conftest import free_port, pid_exists

pytestmark = pytest.mark.integration


def test_a_running_stack_is_seen_as_running_and_leaves_no_process_after_exit(
    settings, probe_app, no_leftovers
):
    with Stack(settings, app="probe_app:app", env=probe_app) as stack:
        no_leftovers.extend([stack.redis.pid, *(w.pid for w in stack.workers)])
        assert [w.role for w in stack.workers] == ["planner", "executor", "finalizer", "react"]
    assert not any(pid_exists(pid) for pid in no_leftovers)


def test_workers_are_seen_by_their_heartbeats_and_gone_as_soon_as_they_stop(
    settings, redis_server, no_leftovers
):
    """Chordal's own workers on a Redis that outlives them: counted by heartbeat (no
    control broadcast), and a worker that stops cleanly leaves the count at once, not
    `worker_dead_after_s` later."""
    settings = settings.model_copy(update={"redis_url": redis_server.url,
                                           "worker_dead_after_s": 60.0})
    assert not is_stack_running(settings)
    with Stack(settings) as stack:
        no_leftovers.extend(w.pid for w in stack.workers)
        assert is_stack_running(settings)
    assert redis_server.client().ping()
    assert not is_stack_running(settings)


def test_a_stack_without_an_executor_is_not_seen_as_running(settings, no_leftovers):
    stack = Stack(settings, roles=("planner", "finalizer"))
    with stack:
        no_leftovers.extend([stack.redis.pid, *(w.pid for w in stack.workers)])
        assert not is_stack_running(settings)


def test_an_unreachable_redis_url_is_named_in_the_error(settings):
    url = f"redis://127.0.0.1:{free_port()}/0"
    with pytest.raises(StoreError, match=url):
        Stack(settings.model_copy(update={"redis_url": url})).start()


def test_a_worker_that_cannot_start_stops_the_stack_and_shows_its_log(settings, no_leftovers):
    stack = Stack(settings, roles=("all",), app="no_such_module:app")
    with pytest.raises(StackError, match="no_such_module"):
        with stack:
            pass
    no_leftovers.extend([stack.redis.pid, stack.workers[0].pid])
    assert not pid_exists(stack.redis.pid)


SCRIPT = """
    import json, sys, time
    from pathlib import Path
    from shared.config import Settings
    from shared.stack.embedded import Stack

    settings = Settings(home=Path(sys.argv[1]), redis_port=int(sys.argv[2]), redis_url=None)
    with Stack(settings, roles=("all",), app="probe_app:app") as stack:
        pids = [stack.redis.pid, *(w.pid for w in stack.workers)]
        Path(sys.argv[3]).write_text(json.dumps(pids))
        time.sleep(60)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_the_owning_process_stops_redis_and_every_worker(
    tmp_path, probe_app, no_leftovers, signum
):
    pid_file = tmp_path / "pids.json"
    owner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path / "home"),
         str(free_port()), str(pid_file)],
        env={**os.environ, **probe_app}, stderr=subprocess.PIPE, text=True,
    )
    no_leftovers.append(owner.pid)
    deadline = time.monotonic() + 60
    while not pid_file.exists() and owner.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), owner.stderr.read() if owner.poll() is not None else "not ready"
    children = json.loads(pid_file.read_text())
    no_leftovers.extend(children)
    owner.send_signal(signum)
    owner.wait(60)
    owner.stderr.close()
    assert owner.returncode != 0
    assert [pid for pid in children if pid_exists(pid)] == []

"""A worker's background services (workers/services/): the periodic loop they share,
and, against the session's real stack, a worker counted in the workers set while it
runs and gone from it once stopped."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from shared import naming
from shared.stack.workers import WorkerProcess
from workers.services.loop import Loop


def test_a_failing_call_is_logged_and_the_loop_goes_on(caplog):
    calls, again = [], threading.Event()

    def tick() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("redis hiccup")
        again.set()

    loop = Loop("test-loop", tick, 0.01)
    with caplog.at_level(logging.ERROR, logger="chordal.workers"):
        loop.start()
        try:
            assert again.wait(10), "the loop ended with its first failure"
        finally:
            loop.stop()
    assert [r.getMessage() for r in caplog.records] == ["test-loop failed"]
    assert "redis hiccup" in caplog.text


def test_no_call_runs_once_stop_returned_and_a_stopped_loop_stays_stopped():
    calls, running = [], threading.Event()

    def tick() -> None:
        calls.append(1)
        running.set()

    loop = Loop("test-loop", tick, 0.001)
    loop.start()
    assert running.wait(10)
    loop.stop()
    made = len(calls)
    loop.start()  # started again: it stays stopped
    time.sleep(0.05)  # fifty of its intervals
    assert len(calls) == made


def test_a_loop_that_waits_first_makes_no_call_before_its_interval():
    calls = []
    loop = Loop("test-loop", lambda: calls.append(1), 3600, wait_first=True)
    loop.start()
    loop.stop()
    assert calls == []


@pytest.mark.integration
def test_a_worker_is_in_the_workers_set_as_it_answers_and_leaves_it_at_a_warm_stop(pipeline):
    worker = WorkerProcess("executor", pipeline.stack.worker_settings)

    def members() -> list[str]:
        return [m for m in pipeline.store.r.zrange(naming.workers_key(), 0, -1)
                if m.split("|")[0] == worker.name]

    worker.start()
    try:
        worker.wait_ready()
        assert len(members()) == 1  # beaten before the first ping was answered
    finally:
        assert worker.stop() == 0
    assert members() == []
    assert "Traceback" not in worker.log_tail(200)

"""The periodic loop every background service of a worker runs on, and the bootsteps
that run one.

`Loop` calls one function every `interval_s` seconds on a daemon thread until stopped.
A call that raises is logged and the loop goes on: a Redis hiccup must not end a
heartbeat. `stop` wakes the thread at once and joins it. `LoopStep` is a worker
bootstep whose service is a loop; `LifelongStep` a consumer bootstep whose loop lasts
as long as the worker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from celery import bootsteps

from workers.app import log, settings

JOIN_S = 15.0
"""How long `stop` waits for a call in progress: longer than the run store's socket
timeout, so a call stuck on an unreachable Redis ends first."""


class Loop:
    """`tick` every `interval_s` seconds on a daemon thread named `name`, from `start`
    until `stop`; with `wait_first`, the first call comes one interval after `start`."""

    def __init__(self, name: str, tick: Callable[[], object], interval_s: float,
                 wait_first: bool = False):
        self.name, self.tick, self.interval_s = name, tick, interval_s
        self.wait_first = wait_first
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread; once (a loop started again goes on as it was)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """No call after this one returns, unless a call in progress outlasts `JOIN_S`."""
        self.stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(JOIN_S)
            if self._thread.is_alive():
                log.warning("%s did not stop within %.0f s", self.name, JOIN_S)

    def _run(self) -> None:
        if self.wait_first and self.stopping.wait(self.interval_s):
            return
        while not self.stopping.is_set():
            try:
                self.tick()
            except Exception:  # logged; the next call may well succeed
                log.exception("%s failed", self.name)
            if self.stopping.wait(self.interval_s):
                return


class LoopStep(bootsteps.StartStopStep):
    """A bootstep whose service (its `obj`) is a `Loop` calling `tick`, by default as
    often as the heartbeat beats (`CHORDAL_WORKER_DEAD_AFTER_S / 5`); as a worker step,
    started and stopped with the worker."""

    thread = "chordal-service"
    """The loop's thread name."""
    wait_first = False

    def interval_s(self) -> float:
        return settings().worker_dead_after_s / 5

    def tick(self) -> None:
        raise NotImplementedError

    def create(self, parent) -> Loop:
        return Loop(self.thread, self.tick, self.interval_s(), self.wait_first)


class LifelongStep(LoopStep):
    """A consumer bootstep whose `obj` (a `Loop`) lives as long as the worker. Celery
    stops and starts the consumer's steps at every broker reconnection; this loop goes
    on through them and stops at the consumer's shutdown, which comes after the pool
    finished its tasks."""

    def stop(self, c) -> None:
        """A reconnection: the loop goes on."""

    def shutdown(self, c) -> None:
        if self.obj is not None:
            self.obj.stop()

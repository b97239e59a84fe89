"""Work on user input in child processes bounded in time and memory: consumes jobs (a
kind, a time budget and JSON fields), produces each job's reply, or `ChildFailed` saying
how its process failed.

Nothing inside one process can stop every loop or every allocation of user input (a
plan's answer template, a regular expression the `regex` module expands as it compiles
it), and a thread cannot be stopped. So the work runs in a child process:

- a fresh interpreter (`serve`: safe from a worker with threads, nothing of the
  worker's state inherited) that handles one kind of job, its handler module imported
  before the child says it is ready (`HANDLERS`), so a job's budget is the job's own;
- under an address-space limit (`memory_mb` beyond what it uses at rest): an allocation
  past it is a `MemoryError` the child reports, and it then exits, so the next job gets
  a fresh one;
- a child that has not answered `GRACE_S` after the budget is killed (SIGKILL, by its
  PID) and reaped; the caller is free at once and the next job starts another;
- should the parent die mid-job, the child ends itself (SIGALRM) shortly after the
  budget, and at its next read once the socket is closed.

Children are kept between jobs in a `Pool` (one per job at a time, or at most
`max_children`, the other callers waiting for one) and stopped by their PIDs when the
parent exits. Jobs and replies cross as JSON over a socket pair (never pickle: the child
runs user input). A handler is `handle(job: dict) -> (ok, value)`; it reports the
user's own errors (a template that divides by zero, a pattern that does not parse) as
`(False, message)` and the child stays; anything else it raises ends the child.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from multiprocessing.connection import Connection
from typing import Protocol

ROOT = Path(__file__).resolve().parent.parent
"""The folder holding the `shared` package: a child imports it from there."""
HANDLERS = {"render": "shared.render.isolated", "pattern": "shared.tools.pattern_vetting"}
"""Kind of job -> the module whose `handle` a child of that kind runs."""
GRACE_S = 0.5
"""Seconds past the budget a child may take to report its handler's own budget error
before it is killed."""
STARTUP_S = 60.0
"""Seconds a new child may take to start (a loaded machine is slow to import)."""


class Job(Protocol):
    kind: str
    budget_s: float

    def wire(self) -> bytes:
        """The job as JSON: `kind`, `budget_s` and the handler's own fields."""


class ChildFailed(Exception):
    """Raised when a child gave no reply: `overran` (killed at the budget),
    `no_start` (not ready within STARTUP_S) or `ended` (it died; `exit_code`)."""

    def __init__(self, how: str, exit_code: int | None = None):
        super().__init__(how, exit_code)
        self.how, self.exit_code = how, exit_code


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _limit_memory(megabytes: int) -> None:
    try:
        import resource
        wanted = _vm_bytes() + megabytes * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        # the hard limit stays: one set for the parent (ulimit -v, a container) is a ceiling
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    except (ImportError, OSError, ValueError):  # no /proc or no RLIMIT_AS: time limit only
        pass


def _serve(conn: Connection, memory_mb: int, kind: str) -> None:
    """The child's loop: one job in, `{ok, value, reusable}` out, until the parent closes
    the socket or a MemoryError leaves this process unfit for another job."""
    _limit_memory(memory_mb)
    handler = importlib.import_module(HANDLERS[kind])  # before "ready": the budget is the job's
    conn.send_bytes(b"ready")
    while True:
        try:
            job = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        # a backstop should the parent die mid-job: SIGALRM's default action ends us
        signal.setitimer(signal.ITIMER_REAL, job["budget_s"] + 2 * GRACE_S)
        try:
            ok, value = handler.handle(job)
            reply = {"ok": ok, "value": value, "reusable": True}
        except MemoryError:
            reply = {"ok": False, "value": None, "reusable": False, "memory": True}
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            conn.send_bytes(json.dumps(reply).encode())
        except (OSError, MemoryError):
            return
        if not reply["reusable"]:
            return


class Child:
    """One child process (`serve` in a fresh interpreter), talking JSON over a socket
    pair (multiprocessing's Connection framing, bytes only), started and stopped by its
    PID."""

    def __init__(self, kind: str, memory_mb: int):
        ours, theirs = socket.socketpair()
        # plain blocking descriptors: gevent's sockets are non-blocking underneath, and
        # the flag belongs to the socket the child shares (its first read would fail)
        mine = os.dup(ours.fileno())
        ours.close()
        for fd in (mine, theirs.fileno()):
            os.set_blocking(fd, True)
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "import sys; from shared.isolation import serve; "
                 "serve(*sys.argv[1:])", str(theirs.fileno()), str(memory_mb), kind],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": path})
        except BaseException:
            os.close(mine)
            raise
        finally:
            theirs.close()
        self.conn = Connection(mine)
        self.ready = False

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, job: Job) -> dict | None:
        """The child's reply, or None when it did not answer in time or died."""
        try:
            if not self.ready:  # starting takes its own time, not the job's
                self.ready = self.conn.poll(STARTUP_S) and self.conn.recv_bytes() == b"ready"
                if not self.ready:
                    return None
            self.send(job)
            if self.conn.poll(job.budget_s + GRACE_S):
                return json.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            try:  # it died: let its exit code be read
                self.process.wait(1)
            except subprocess.TimeoutExpired:
                pass
        return None

    def send(self, job: Job) -> None:
        self.conn.send_bytes(job.wire())

    def stop(self) -> None:
        self.conn.close()
        if self.alive:
            self.process.kill()
        self.process.wait()


class Pool:
    """The children of one kind for one process: `ask` takes an idle one (or starts
    one, up to `max_children` at a time when given), and kills it when the job overruns."""

    def __init__(self, kind: str, memory_mb: int, max_children: int | None = None):
        self.kind, self.memory_mb = kind, memory_mb
        self.idle: list[Child] = []
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(max_children) if max_children else None
        atexit.register(self.close)

    def ask(self, job: Job) -> dict:
        """The reply `{ok, value, reusable[, memory]}` to `job`; ChildFailed when none came."""
        if self.slots is None:
            return self._ask(job)
        with self.slots:
            return self._ask(job)

    def _ask(self, job: Job) -> dict:
        with self.lock:
            child = self.idle.pop() if self.idle else None
        if child is None or not child.alive:
            child = Child(self.kind, self.memory_mb)
        reply = child.ask(job)
        if reply is None:
            code, started = child.process.returncode, child.ready
            child.stop()
            raise ChildFailed("overran" if started and code is None else
                              "no_start" if code is None else "ended", code)
        if reply["reusable"]:
            with self.lock:
                self.idle.append(child)
        else:
            child.stop()
        return reply

    def close(self) -> None:
        with self.lock:
            children, self.idle = self.idle, []
        for child in children:
            child.stop()


def serve(fd: str, memory_mb: str, kind: str) -> None:
    """A child's entry point: serve the socket `fd` under `memory_mb`, running `kind` jobs."""
    _serve(Connection(int(fd)), int(memory_mb), kind)

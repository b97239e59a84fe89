"""One child process, started with its output in a log file and stopped by its PID.

Consumes an argv, an environment and a log path; produces a running child whose stdout
and stderr are appended to the log, in a session of its own (Ctrl-C in the terminal
reaches the parent, which then stops the child in order), waited for until it is ready,
and stopped in steps: an optional polite one (Redis SHUTDOWN, SIGINT), the stop signal,
then SIGKILL, always by its PID and always reaped. A normal exit of the parent never
leaves it behind (atexit). The embedded Redis, the Celery workers and every server or
command the tests and the bench run in the background are one of these.
"""

from __future__ import annotations

import atexit
import math
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

#: How long a SIGKILLed child may take to be reaped.
KILL_WAIT_S = 5.0


def log_tail(path: Path, lines: int = 20) -> str:
    """The last `lines` lines of a log file, or a note that there is none."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def answers_http(url: str, timeout: float = 2.0) -> bool:
    """Whether a GET of `url` gets a successful HTTP answer: a server child is ready."""
    try:
        urllib.request.urlopen(url, timeout=timeout).close()
    except OSError:  # refused, reset, timed out, or an HTTP error status
        return False
    return True


def port_taken(port: int, host: str = "127.0.0.1", timeout: float = 0.3) -> bool:
    """Whether something accepts connections on `host:port`: a server child must not
    start there (it would fail to bind while the other answers its readiness probe)."""
    with socket.socket() as probe:
        probe.settimeout(timeout)
        return probe.connect_ex((host, port)) == 0


CGROUP = Path("/sys/fs/cgroup")


def usable_cores(cgroup: Path = CGROUP) -> int:
    """The cores this process may use: those it may run on (its CPU affinity: a cpuset,
    `taskset`), at most its container's CPU quota rounded up (`docker run --cpus`: the
    cgroup v2 `cpu.max`, or v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us`, as a
    container sees its own cgroup at `cgroup`); at least 1. `os.cpu_count()` is the
    host's count in both cases."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform (macOS)
        cores = os.cpu_count() or 1
    for quota_file, period_file in (("cpu.max", None),
                                    ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            fields = (cgroup / quota_file).read_text().split()
            if period_file:
                fields.append((cgroup / period_file).read_text().strip())
            quota, period = fields[0], int(fields[1])
            if quota not in ("max", "-1") and period > 0:
                cores = min(cores, math.ceil(int(quota) / period))
        except (OSError, ValueError, IndexError):
            continue
        break
    return max(1, cores)


class ChildProcess:
    """A child process owned by this one: start() and wait_until() (or start_and_wait()),
    stop() or kill(); as a context manager, started on entry and stopped on exit.
    EmbeddedRedis and WorkerProcess are ones; anything else may hold one.

    `polite` is the first step of `stop()`: a signal to send, or a callable that asks the
    child to stop and returns whether it could ask; either is then given `timeout` to
    work. `kill_group` SIGKILLs what is left of the child's session once it has ended
    (a prefork pool's children). `start()` after the child has ended starts it again.
    """

    def __init__(
        self,
        argv: Sequence[str],
        log_path: Path,
        *,
        what: str = "child process",
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        polite: int | Callable[[], bool] | None = None,
        stop_signal: int = signal.SIGTERM,
        stop_timeout: float = 10.0,
        kill_group: bool = False,
    ):
        self.argv = list(argv)
        self.log_path = Path(log_path)
        self.what = what
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.polite = polite
        self.stop_signal = stop_signal
        self.stop_timeout = stop_timeout
        self.kill_group = kill_group
        self._proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    def log_tail(self, lines: int = 30) -> str:
        return log_tail(self.log_path, lines)

    def __enter__(self) -> ChildProcess:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> ChildProcess:
        """Start the child unless it is running; its output is appended to the log."""
        if self.alive:
            return self
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:  # errors before the child's own logging starts
            self._proc = subprocess.Popen(
                self.argv, env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True,
            )
        atexit.unregister(self.stop)  # once, however often it was started
        atexit.register(self.stop)
        return self

    def wait_until(
        self,
        ready: Callable[[], bool],
        timeout: float,
        awaited: str = "answer",
        error: type[Exception] = RuntimeError,
        interval: float = 0.1,
    ) -> None:
        """Return once `ready()` is true; `error`, with the log tail, if the child exits
        first or `timeout` passes (the child is left running then)."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive:
                raise error(
                    f"{self.what} exited with code {self.returncode} before it was ready; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            if ready():
                return
            if time.monotonic() > deadline:
                raise error(
                    f"{self.what} did not {awaited} within {timeout:g} s; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(interval)

    def start_and_wait(self, ready: Callable[[], bool], timeout: float, awaited: str = "answer",
                       error: type[Exception] = RuntimeError,
                       interval: float = 0.1) -> ChildProcess:
        """start(), then wait_until(); a child that fails it is stopped before the error."""
        self.start()
        try:
            self.wait_until(ready, timeout, awaited, error, interval)
        except error:
            self.stop()
            raise
        return self

    def stop(self, timeout: float | None = None, sig: int | None = None) -> int | None:
        """The polite step, then `sig` (default the stop signal), then SIGKILL, each
        given `timeout` (default `stop_timeout`) to end the child; its exit code."""
        timeout = self.stop_timeout if timeout is None else timeout
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None and self.polite is not None and self._ask_politely():
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        return self._end([(sig or self.stop_signal, timeout), (signal.SIGKILL, KILL_WAIT_S)])

    def kill(self) -> int | None:
        """SIGKILL, as a crashed machine would; its exit code."""
        return self._end([(signal.SIGKILL, KILL_WAIT_S)])

    def _ask_politely(self) -> bool:
        if callable(self.polite):
            return self.polite()
        try:
            os.kill(self._proc.pid, self.polite)
        except ProcessLookupError:
            return False
        return True

    def _end(self, steps: list[tuple[int, float]]) -> int | None:
        proc = self._proc
        if proc is None:
            return None
        for sig, wait in steps:
            if proc.poll() is not None:
                break
            try:
                os.kill(proc.pid, sig)  # our own child, by its PID
                proc.wait(wait)
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        if self.kill_group:
            try:  # what is left in the session we created for the child
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if proc.poll() is not None:
            atexit.unregister(self.stop)
        return proc.returncode

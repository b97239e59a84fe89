"""Celery worker processes for one machine: one child process per worker role.

Consumes a role (a key of `ROLE_QUEUES`) and the `Settings`; produces a running
`celery worker` subprocess that consumes the role's queues, sends task events, logs to
`home/logs/<role>-<token>.log` and answers control pings under its node `name`. The
child gets the settings as `CHORDAL_*` variables, so it builds the same `Settings`.

Control pings go through a bare Celery app on the broker URL, so this module never
imports `workers/` (the import direction is `workers -> shared`).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from shared.config import Settings
from shared.errors import ConfigError, StackError
from shared.queues import ROLE_QUEUES
from shared.stack.redis_server import log_tail

if TYPE_CHECKING:
    from celery import Celery

DEFAULT_APP = "workers.app:app"
#: Pools whose children are separate processes that must be reaped with the parent.
PROCESS_POOLS = ("prefork", "processes")
#: Pools a Chordal worker runs on: threads (the default; steps are I/O bound), gevent
#: (thousands of waiting steps per process; the optional `chordal[gevent]` extra),
#: prefork (one process per task; the only pool besides gevent that enforces
#: `task_time_limit`), solo (one task at a time, for debugging).
POOLS = ("threads", "gevent", "prefork", "solo")


def default_concurrency(role: str, settings: Settings) -> int:
    """Threads per worker: executors are I/O bound; planner and finalizer need few."""
    if role in ("planner", "finalizer"):
        return 2
    return 4 if role == "react" else settings.executor_concurrency


def check_pool(pool: str) -> None:
    """ConfigError unless `pool` is one of POOLS and its package is installed."""
    if pool not in POOLS:
        raise ConfigError(f"--pool {pool!r} is not one of {', '.join(POOLS)}")
    if pool == "gevent" and importlib.util.find_spec("gevent") is None:
        raise ConfigError(
            "--pool gevent needs the gevent package, which is not installed: "
            "`pip install 'chordal[gevent]'`, or use --pool threads (nothing to install)")


def worker_argv(role: str, name: str, pool: str, concurrency: int,
                app: str = DEFAULT_APP) -> list[str]:
    """The `celery worker` command of one role: only the role's queues (so roles scale
    on their own), task events on (Flower), no gossip or mingle (with many workers each
    would hear every other's events)."""
    return [
        sys.executable, "-m", "celery", "-A", app, "worker",
        "-Q", ",".join(ROLE_QUEUES[role]), "-n", name, "-P", pool, "-c", str(concurrency),
        "-E", "--without-gossip", "--without-mingle", "-l", "INFO",
    ]


def settings_env(settings: Settings) -> dict[str, str | None]:
    """The variables that rebuild `settings` in a child; None means "unset it"."""
    env: dict[str, str | None] = {}
    for name, field in type(settings).model_fields.items():
        alias = field.validation_alias
        key = alias if isinstance(alias, str) else f"CHORDAL_{name.upper()}"
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        elif isinstance(value, Path):
            value = str(value.resolve())
        elif isinstance(value, (list, tuple, dict)):
            value = json.dumps(value)
        env[key] = None if value is None else str(value)
    env["CHORDAL_REDIS_URL"] = settings.effective_redis_url
    return env


def control_app(broker_url: str) -> Celery:
    """A task-less Celery app that can only ping and inspect workers on `broker_url`."""
    from celery import Celery

    return Celery("chordal-control", broker=broker_url, set_as_current=False)


def ping_workers(broker: str | Celery, names: list[str], timeout: float = 0.5) -> set[str]:
    """The node names among `names` that answer a control ping within `timeout`."""
    app = control_app(broker) if isinstance(broker, str) else broker
    try:
        replies = app.control.ping(destination=list(names), timeout=timeout)
    except Exception:  # noqa: BLE001 - a broker that is down means "nobody answered"
        return set()
    finally:
        if isinstance(broker, str):
            app.close()
    return {node for reply in replies or [] for node in reply}


class WorkerProcess:
    """One `celery worker` child process; start(), wait_ready(), stop() or kill()."""

    def __init__(
        self,
        role: str,
        settings: Settings,
        concurrency: int | None = None,
        pool: str = "threads",
        env: dict[str, str] | None = None,
        app: str = DEFAULT_APP,
    ):
        if role not in ROLE_QUEUES:
            raise ConfigError(f"unknown worker role {role!r}; choose one of {sorted(ROLE_QUEUES)}")
        check_pool(pool)
        self.role = role
        self.settings = settings
        self.concurrency = concurrency or default_concurrency(role, settings)
        self.pool = pool
        self.app = app
        self.extra_env = dict(env or {})
        token = uuid.uuid4().hex[:8]
        self.name = f"{role}-{token}@{socket.gethostname()}"
        self.log_path = Path(settings.home).resolve() / "logs" / f"{role}-{token}.log"
        self._proc: subprocess.Popen | None = None

    def argv(self) -> list[str]:
        return [*worker_argv(self.role, self.name, self.pool, self.concurrency, self.app),
                "--logfile", str(self.log_path)]

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        for key, value in settings_env(self.settings).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        env["PYTHONUNBUFFERED"] = "1"
        env.update(self.extra_env)
        return env

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

    def start(self) -> None:
        if self.alive:
            return
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:  # import errors reach stderr before logging starts
            self._proc = subprocess.Popen(
                self.argv(), env=self.environ(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,  # Ctrl-C in the terminal reaches us; we stop it warmly
            )
        atexit.register(self.stop)

    def wait_ready(self, timeout: float = 30.0, broker: str | Celery | None = None) -> None:
        """Return once the worker answers a ping; StackError if it dies or stays silent."""
        broker = broker or self.settings.effective_redis_url
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive:
                raise StackError(
                    f"{self.role} worker exited with code {self.returncode} before it was ready; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            if self.name in ping_workers(broker, [self.name], timeout=0.5):
                return
            if time.monotonic() > deadline:
                raise StackError(
                    f"{self.role} worker {self.name} did not answer a ping within {timeout:.0f} s; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def stop(self, timeout: float = 30.0) -> None:
        """Warm shutdown (SIGTERM: running tasks finish), then SIGKILL after `timeout`."""
        self._signal_and_wait(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """SIGKILL, as a crashed machine would: unacknowledged tasks get redelivered."""
        self._signal_and_wait(signal.SIGKILL, 5.0)

    def _signal_and_wait(self, sig: signal.Signals, timeout: float) -> None:
        proc = self._proc
        if proc is None:
            return
        for current, wait in ((sig, timeout), (signal.SIGKILL, 5.0)):
            if proc.poll() is not None:
                break
            try:
                os.kill(proc.pid, current)
                proc.wait(wait)
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        if self.pool in PROCESS_POOLS:
            try:  # pool children left in the session we created for this worker
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if proc.poll() is not None:
            atexit.unregister(self.stop)

"""Celery worker processes for one machine: one child process per worker role.

Consumes a role (a key of `ROLE_QUEUES`) and the `Settings`; produces a running
`celery worker` subprocess that consumes the role's queues, logs to
`home/logs/<role>-<token>.log` and answers control pings under its node `name`. The
child gets the settings as `CHORDAL_*` variables, so it builds the same `Settings`.

Control pings go through a bare Celery app on the broker URL, so this module never
imports `workers/` (the import direction is `workers -> shared`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from shared.config import Settings
from shared.errors import ConfigError, StackError
from shared.naming import ROLE_QUEUES
from shared.stack.process import ChildProcess

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
    on their own), no gossip or mingle (with many workers each would hear every other's
    events). Whether it sends task events is the configuration's (`CHORDAL_WORKER_EVENTS`,
    shared/broker/app.py): `-E` would turn them on whatever it says."""
    return [
        sys.executable, "-m", "celery", "-A", app, "worker",
        "-Q", ",".join(ROLE_QUEUES[role]), "-n", name, "-P", pool, "-c", str(concurrency),
        "--without-gossip", "--without-mingle", "-l", "INFO",
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
    """A task-less Celery app that can only ping and inspect workers on `broker_url`,
    on Chordal's Redis transport (shared/broker/transport.py: a control client restores no
    tasks, which the `producers` and `monitoring` ACL users may not touch), and with a
    `rediss://` URL's TLS settings (shared/broker/app.py)."""
    from celery import Celery

    from shared.broker.app import tls_options
    from shared.broker.transport import install

    install()
    app = Celery("chordal-control", broker=broker_url, set_as_current=False)
    app.conf.broker_use_ssl = tls_options(broker_url)
    return app


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


class WorkerProcess(ChildProcess):
    """One `celery worker` child process; start(), wait_ready(), stop() (warm: SIGTERM lets
    running tasks finish, SIGKILL after the timeout) or kill(). A process pool's children
    go with it."""

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
        log_path = Path(settings.home).resolve() / "logs" / f"{role}-{token}.log"
        argv = worker_argv(role, self.name, pool, self.concurrency, app)
        super().__init__(
            [*argv, "--logfile", str(log_path)], log_path, what=f"{role} worker",
            stop_timeout=30.0, kill_group=pool in PROCESS_POOLS,
        )

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

    def start(self) -> WorkerProcess:
        if not self.alive:  # the environment as it is now
            self.env = self.environ()
        return super().start()

    def wait_ready(self, timeout: float = 30.0, broker: str | Celery | None = None) -> None:
        """Return once the worker answers a ping; StackError if it dies or stays silent."""
        broker = broker or self.settings.effective_redis_url
        self.wait_until(lambda: self.name in ping_workers(broker, [self.name], timeout=0.5),
                        timeout, awaited=f"answer a ping as {self.name}", error=StackError,
                        interval=0.2)

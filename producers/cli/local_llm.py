"""`chordal local-llm`: the local model server (shared/stack/local_llm.py) on its own, in
the foreground until Ctrl-C or SIGTERM.

Consumes the `Settings` (`CHORDAL_LOCAL_LLM_*`), `--model` and `--port` over them;
produces a running server and, on stdout, the CHORDAL_LLM_BASE_URL and CHORDAL_LLM_MODEL
that point Chordal at it. The server is stopped by its PID when this command ends; a
server that exits by itself ends the command with code 1 and the end of its log.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from shared.config import Settings
from shared.errors import StackError
from shared.stack.local_llm import LocalLLM

POLL_S = 0.5
out = Console(soft_wrap=True, highlight=False)


def local_llm(model: Optional[Path] = typer.Option(
                  None, "--model", help="A GGUF file to serve (default CHORDAL_LOCAL_LLM_GGUF, "
                  "else the bundled SmolLM2-135M-Instruct)."),
              port: Optional[int] = typer.Option(
                  None, "--port", min=1, max=65535,
                  help="TCP port on 127.0.0.1 (default CHORDAL_LOCAL_LLM_PORT, 8766).")):
    """Serve a GGUF model over the OpenAI API (llama-cpp-python) until Ctrl-C."""
    given = {"local_llm_gguf": model, "local_llm_port": port}
    settings = Settings(**{name: value for name, value in given.items() if value is not None})
    server = LocalLLM(settings)
    # SIGTERM ends this command like Ctrl-C does, so the server is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.monotonic()
    with server:
        say(f"{server.describe()}; ready in {time.monotonic() - started:.1f} s")
        say("point Chordal at it:\n  export CHORDAL_LLM_BASE_URL="
            f"{server.base_url} CHORDAL_LLM_MODEL={shlex.quote(server.alias)}\nCtrl-C stops it.")
        with contextlib.suppress(KeyboardInterrupt):
            while server.alive:
                time.sleep(POLL_S)
        exited = not server.alive  # by itself: Ctrl-C leaves it running until the with ends
    if exited:
        raise StackError(f"the local model server exited with code {server.returncode}; log "
                         f"{server.log_path}:\n{server.log_tail()}")
    say("local model server stopped")


def say(text: str) -> None:
    out.print(text, markup=False)

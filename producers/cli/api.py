"""`chordal api`: serve the HTTP API (producers/api/app.py) with uvicorn until Ctrl-C.

Consumes `Settings` (CHORDAL_API_TOKEN, the run store's Redis, the request limits) and
the bind address; produces a running server, or one message and exit code 2 when it must
not start (no token, an empty or short one, --insecure on an address other than
loopback, a port in use). FastAPI and uvicorn are imported only by this command.
"""

from __future__ import annotations

import typer

from producers.cli.output import fail
from shared.config import Settings
from shared.errors import ConfigError


def api(host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
        port: int = typer.Option(8000, "--port", help="TCP port to listen on."),
        insecure: bool = typer.Option(False, "--insecure", help="Serve without "
                                      "CHORDAL_API_TOKEN (loopback addresses and "
                                      "Host headers only).")):
    """Serve the HTTP API: POST /queries, GET /queries/{id}, its /events, GET /health."""
    from producers.api.app import serve

    try:
        serve(Settings(), host=host, port=port, insecure=insecure)
    except ConfigError as exc:
        fail(str(exc))

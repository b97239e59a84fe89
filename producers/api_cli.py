"""`chordal api`: serve the HTTP API (producers/api.py) with uvicorn until Ctrl-C.

Consumes `Settings` (CHORDAL_API_TOKEN, the run store's Redis) and the bind address;
produces a running server. FastAPI and uvicorn are imported only by this command.
"""

from __future__ import annotations

import typer

from shared.config import Settings


def api(host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
        port: int = typer.Option(8000, "--port", help="TCP port to listen on."),
        insecure: bool = typer.Option(False, "--insecure", help="Serve without "
                                      "CHORDAL_API_TOKEN (loopback addresses only).")):
    """Serve the HTTP API: POST /queries, GET /queries/{id}, its /events, GET /health."""
    from producers.api import serve

    serve(Settings(), host=host, port=port, insecure=insecure)

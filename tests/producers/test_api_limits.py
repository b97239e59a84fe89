"""The HTTP API against a hostile client, through a real `chordal api` process over the
`pipeline` stack: the token it starts with, the Host header when it serves without a
token, and redirects."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys

import pytest

from producers.api import create_app
from shared.config import Settings
from shared.errors import ConfigError

from .conftest import TOKEN, ApiServer
from ..conftest import free_port


def connect(server: ApiServer, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30,
                                    source_address=(source, 0))


def head(path: str, headers: dict[str, str], method: str = "POST",
         host: str = "127.0.0.1") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}",
             *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(sock: socket.socket) -> tuple[int, dict, str]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    headers = {k.lower(): v for k, v in response.getheaders()}
    return response.status, headers, response.read().decode()


def call(server: ApiServer, method: str, path: str, *, source: str, body: bytes = b"",
         headers: dict | None = None) -> tuple[int, dict, str]:
    """One request from `source` (an address on 127.0.0.0/8)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        response = conn.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read().decode())
    finally:
        conn.close()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


# -- the token -----------------------------------------------------------------------

def run_api(pipeline, token: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in pipeline.env().items() if k != "CHORDAL_API_TOKEN"}
    if token is not None:
        env["CHORDAL_API_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "producers", "api", "--port",
                           str(free_port()), *args], env=env, capture_output=True,
                          text=True, timeout=60)


SHORT = "s3cret-but-only-31-characters.."


@pytest.mark.integration  # starts `chordal api`
@pytest.mark.parametrize("token, args, says", [
    ("", (), "CHORDAL_API_TOKEN is empty"),
    ("", ("--insecure",), "CHORDAL_API_TOKEN is empty"),
    ("x", (), "CHORDAL_API_TOKEN is 1 character long"),
    (SHORT, (), "CHORDAL_API_TOKEN is 31 characters long"),
], ids=["empty", "empty-insecure", "one-character", "31-characters"])
def test_an_empty_or_short_token_stops_the_api_at_start_saying_how_to_make_one(
        pipeline, token, args, says):
    result = run_api(pipeline, token, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert says in result.stderr and "at least 32 characters" in result.stderr
    assert "secrets.token_urlsafe(32)" in result.stderr
    assert "Traceback" not in result.stderr and SHORT not in result.stdout + result.stderr


@pytest.mark.parametrize("token", ["", "x", SHORT])
def test_the_app_is_not_built_with_an_empty_or_short_token(token):
    settings = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", api_token=token)
    with pytest.raises(ConfigError, match="CHORDAL_API_TOKEN is .* at least 32 characters"):
        create_app(settings, sweep_s=None)
    with pytest.raises(ConfigError, match="CHORDAL_API_TOKEN is "):
        create_app(settings, insecure=True, sweep_s=None)


@pytest.mark.integration  # starts `chordal ask`
def test_commands_other_than_the_api_run_with_a_short_api_token(pipeline):
    result = subprocess.run([sys.executable, "-m", "producers", "ask", "How much revenue did "
                             "Northwind Motors report for Q3 2023?", "--json"],
                            env={**pipeline.env(), "CHORDAL_API_TOKEN": "x"},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "done"


# -- the Host header and redirects -----------------------------------------------------

@pytest.mark.integration  # starts `chordal api --insecure`
def test_served_without_a_token_the_api_answers_only_loopback_host_headers(pipeline, tmp_path):
    server = ApiServer(pipeline.env(), tmp_path / "api.log", token=None,
                       args=("--insecure",)).start()
    try:
        body = json.dumps({"id": "limits-rebound", "question": "q"}).encode()
        for path, method in (("/queries", "POST"), ("/health", "GET"), ("/ui/batches", "GET")):
            with connect(server, "127.0.0.1") as sock:
                sock.sendall(head(path, {"Content-Type": "application/json",
                                         "Content-Length": str(len(body))}, method,
                                  host="rebound.example:80") + body)
                status, _, text = read_response(sock)
            assert (status, text) == (400, "Invalid host header"), path
        assert server.request("GET", "/queries/limits-rebound")[0] == 404
        for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost"):
            status, _, _ = call(server, "GET", "/health", source="127.0.0.1",
                                headers={"Host": host})
            assert status == 200, host
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("path", ["/health/", "/queries/x/", "/ui/batches/"])
def test_a_trailing_slash_is_a_404_that_sends_the_host_header_nowhere(api, path):
    status, headers, _ = call(api, "GET", path, source="127.0.0.1",
                              headers={"Host": "elsewhere.example", **bearer(TOKEN)})
    assert status == 404
    assert "location" not in headers and "elsewhere" not in json.dumps(headers)

"""The HTTP API against a hostile client, through a real `chordal api` process over the
`pipeline` stack: the token it starts with, request bodies (read only after
authentication, bounded in size and time), wrong tokens per client (429), the Host
header when it serves without a token, and redirects.

Clients here speak HTTP over their own sockets, so that a test sees when the server
answers while the client is still sending, and sends from an address of its own on
127.0.0.0/8, so that its wrong tokens are counted apart from other tests' (the counts
live in the stack's Redis, shared by every API server of the session)."""

from __future__ import annotations

import http.client
import json
import re
import select
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from producers.api.app import create_app
from shared.config import Settings
from shared.errors import ConfigError

from .conftest import TOKEN, ApiServer
from ..conftest import free_port

LIMITS = {"CHORDAL_API_MAX_BODY_BYTES": "100000", "CHORDAL_API_BODY_TIMEOUT_S": "2",
          "CHORDAL_API_AUTH_FAILURES": "3", "CHORDAL_API_AUTH_WINDOW_S": "300"}
"""The `limited` server's settings: small, so that the tests send little and wait little."""
HUGE = 200_000_000
"""Bytes of the body a client starts to send and would go on sending."""
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def limited(pipeline, tmp_path_factory) -> ApiServer:
    server = ApiServer({**pipeline.env(), **LIMITS},
                       tmp_path_factory.mktemp("api-limited") / "api.log").start()
    try:
        yield server
    finally:
        server.stop()


def connect(server: ApiServer, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30,
                                    source_address=(source, 0))


def head(path: str, headers: dict[str, str], method: str = "POST",
         host: str = "127.0.0.1") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}",
             *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def question_body(size: int, query_id: str) -> Iterator[bytes]:
    """A JSON query whose question makes it `size` bytes, in chunks."""
    start, end = f'{{"id": "{query_id}", "question": "'.encode(), b'"}'
    left = size - len(start) - len(end)
    yield start
    while left > 0:
        yield b"x" * min(CHUNK, left)
        left -= CHUNK
    yield end


def chunked(parts: Iterator[bytes]) -> Iterator[bytes]:
    """`parts` in HTTP/1.1 chunked transfer coding."""
    for part in parts:
        yield b"%x\r\n%s\r\n" % (len(part), part)
    yield b"0\r\n\r\n"


def answered(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def read_response(sock: socket.socket) -> tuple[int, dict, str]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    headers = {k.lower(): v for k, v in response.getheaders()}
    return response.status, headers, response.read().decode()


def send_while_unanswered(sock: socket.socket, request_head: bytes,
                          body: Iterator[bytes]) -> tuple[int, dict, str, int]:
    """Send the head, then the body until the server answers; (status, headers, text,
    body bytes sent before the answer was seen)."""
    sock.sendall(request_head)
    sent = 0
    for part in body:
        if answered(sock):
            break
        sock.sendall(part)
        sent += len(part)
    return (*read_response(sock), sent)


def trickle(sock: socket.socket, request_head: bytes, every_s: float = 0.5,
            most: int = 40) -> tuple[int, dict, str, bytes]:
    """Send the head, then one byte of the body every `every_s` until the server answers
    (at most `most` bytes); (status, headers, text, what the connection gives after)."""
    sock.sendall(request_head)
    for _ in range(most):
        if select.select([sock], [], [], every_s)[0]:
            break
        sock.sendall(b"a")
    status, headers, text = read_response(sock)
    try:
        after = sock.recv(100)
    except (ConnectionResetError, socket.timeout) as exc:
        after = repr(exc).encode()
    return status, headers, text, after


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


# -- request bodies --------------------------------------------------------------------

def post_huge(server: ApiServer, source: str, query_id: str, coding: str,
              headers: dict) -> tuple[int, str, int]:
    """POST /queries of a `HUGE`-byte query, its length in a Content-Length or `chunked`,
    sent until the server answers; (status, text, body bytes sent by then)."""
    body = question_body(HUGE, query_id)
    headers = {"Content-Type": "application/json", **headers}
    if coding == "chunked":
        body, headers["Transfer-Encoding"] = chunked(body), "chunked"
    else:
        headers["Content-Length"] = str(HUGE)
    with connect(server, source) as sock:
        status, _, reply, sent = send_while_unanswered(sock, head("/queries", headers), body)
    return status, reply, sent


@pytest.mark.parametrize("coding", ["content-length", "chunked"])
def test_an_unauthenticated_200_mb_post_gets_401_before_the_client_has_sent_it(api, coding):
    query_id = f"limits-unread-{coding}"
    status, reply, sent = post_huge(api, "127.0.0.1", query_id, coding, {})
    assert status == 401 and "missing bearer token" in json.loads(reply)["detail"]
    assert sent < HUGE // 4, f"the 401 came after {sent:,} of {HUGE:,} bytes"
    assert api.request("GET", f"/queries/{query_id}")[0] == 404


@pytest.mark.parametrize("coding", ["content-length", "chunked"])
def test_an_authenticated_body_over_the_limit_gets_413_naming_the_setting(limited, coding):
    query_id = f"limits-too-large-{coding}"
    status, reply, sent = post_huge(limited, "127.0.0.2", query_id, coding, bearer(TOKEN))
    assert status == 413, reply
    detail = json.loads(reply)["detail"]
    assert "CHORDAL_API_MAX_BODY_BYTES" in detail and "100,000 bytes" in detail
    assert sent < HUGE // 4, f"the 413 came after {sent:,} of {HUGE:,} bytes"
    assert call(limited, "GET", f"/queries/{query_id}", source="127.0.0.2",
                headers=bearer(TOKEN))[0] == 404


def test_a_body_within_the_limit_is_read_as_before(limited):
    status, _, reply = call(limited, "POST", "/queries", source="127.0.0.2",
                            body=b"".join(question_body(90_000, "limits-fits")),
                            headers={"Content-Type": "application/json", **bearer(TOKEN)})
    assert status == 422 and "field 'question'" in json.loads(reply)["message"]


@pytest.mark.parametrize("path, headers", [
    ("/queries", {"Content-Type": "application/json", **bearer(TOKEN)}),
    ("/ui/login", {"Content-Type": "application/x-www-form-urlencoded"}),
], ids=["queries", "login-form"])
def test_a_body_that_trickles_gets_408_and_its_connection_is_closed(limited, path, headers):
    with connect(limited, "127.0.0.3") as sock:
        status, _, reply, after = trickle(sock, head(path, {**headers, "Content-Length": "1000"}))
    assert status == 408, reply
    assert "CHORDAL_API_BODY_TIMEOUT_S" in json.loads(reply)["detail"]
    assert after in (b"", b"ConnectionResetError(104, 'Connection reset by peer')")


def test_a_full_batch_of_1000_queries_fits_the_default_body_limit(api):
    plan = {"steps": [{"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial "
                       "Report", "output_var": "$R"}], "answer": "{{ R }} " + "y" * 3900}
    batch = [{"question": "q" * 4000, "plan": plan} for _ in range(999)] + [{"plan": plan}]
    raw = json.dumps(batch).encode()
    assert 8_000_000 < len(raw) <= Settings().api_max_body_bytes
    status, _, reply = api.request("POST", "/queries", raw=raw, timeout=120)
    assert status == 422, reply  # read and checked whole: only the last query is wrong
    assert reply["message"] == "field '[999].question' is missing"


def test_the_openapi_schema_documents_the_body_its_limits_and_the_429(api):
    _, _, schema = api.request("GET", "/openapi.json", auth=False)
    post = schema["paths"]["/queries"]["post"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert "QueryIn" in json.dumps(body)
    assert {"202", "401", "408", "413", "422", "429"} <= set(post["responses"])
    assert "CHORDAL_API_MAX_BODY_BYTES" in post["responses"]["413"]["description"]


# -- wrong tokens ----------------------------------------------------------------------

def test_after_3_wrong_bearer_tokens_a_client_gets_429_even_with_the_right_one(limited):
    guesser, other = "127.0.0.4", "127.0.0.5"
    for _ in range(3):
        status, headers, _ = call(limited, "GET", "/queries/none", source=guesser,
                                  headers=bearer("w" * 43))
        assert status == 401 and "retry-after" not in headers
    for token in ("w" * 43, TOKEN):
        status, headers, reply = call(limited, "GET", "/queries/none", source=guesser,
                                      headers=bearer(token))
        assert status == 429, reply
        assert 1 <= int(headers["retry-after"]) <= 300
        assert "CHORDAL_API_AUTH_FAILURES" in json.loads(reply)["detail"]
        assert TOKEN not in reply
    # another client is not held back, and its right token frees nobody
    assert call(limited, "GET", "/queries/none", source=other, headers=bearer(TOKEN))[0] == 404
    assert call(limited, "GET", "/queries/none", source=guesser,
                headers=bearer(TOKEN))[0] == 429
    # a client without a token is told it needs one, as before
    assert call(limited, "GET", "/queries/none", source=guesser)[0] == 401


def test_after_3_wrong_logins_the_login_form_gets_429_with_retry_after(limited):
    source = "127.0.0.6"
    _, headers, form = call(limited, "GET", "/ui/login", source=source)
    cookie = headers["set-cookie"].split(";")[0]
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)

    def log_in(token: str) -> tuple[int, dict, str]:
        return call(limited, "POST", "/ui/login", source=source,
                    body=f"csrf={csrf}&token={token}&next=/ui/batches".encode(),
                    headers={"Cookie": cookie,
                             "Content-Type": "application/x-www-form-urlencoded"})

    for _ in range(3):
        status, _, page = log_in("w" * 43)
        assert status == 401 and "Wrong token" in page
    for token in ("w" * 43, TOKEN):
        status, headers, page = log_in(token)
        assert status == 429 and "Too many wrong tokens" in page
        assert 1 <= int(headers["retry-after"]) <= 300
        assert "chordal_session" not in headers.get("set-cookie", "")
    # the bearer token from that address is held back too: one count per client
    assert call(limited, "GET", "/queries/none", source=source,
                headers=bearer(TOKEN))[0] == 429


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

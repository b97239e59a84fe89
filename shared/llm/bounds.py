"""How long and how large one model reply may be: consumes a call's `Budget` (when it
must end, and why then) and `max_tokens`, and the HTTP requests and responses of
openai-python's httpx client (its transport, `BoundedTransport`, and a response hook);
produces requests whose timeouts end with the budget, response bodies that stop with
`OutOfBounds` past either bound, and `x-should-retry: false` on a failure whose retry
would start too late.

- Time. A call ends at the first of its caller's deadline (a query's) and
  CHORDAL_LLM_REPLY_S after it began. httpx's timeouts are per operation (connect, each
  read, each write), never total, and openai-python retries a timed-out request with
  the same ones: so `BoundedTransport` clips every request's timeouts to the time left,
  sends none once none is left, turns a timeout past the budget into OutOfBounds
  (which openai-python does not retry), and a watchdog shuts the connection's socket
  when the time runs out while the body is read (a server that sends a token every few
  seconds never trips a read timeout). A Retry-After longer than the time left is not
  waited for (`no_retry_after`); openai-python's backoff after a failed attempt (at
  most 8 s) is the one wait that can pass the end.
- Size. A body may have `max_body_bytes(max_tokens, request)` bytes, counted as they
  arrive; the read stops at the first chunk past them, so a server that ignores
  `max_tokens` costs one bound's worth of memory, not its whole reply. Requests ask
  for `Accept-Encoding: identity` (`HEADERS`); a body compressed anyway is refused: its
  size is unknown until it is inflated.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httpx2

BYTES_PER_TOKEN = 1024
"""Body bytes one token of a reply may cost. A streamed token is one SSE event of
about 200-300 bytes (`data: {"id":…,"object":"chat.completion.chunk","created":…,
"model":…,"choices":[{"index":0,"delta":{"content":"…"},"finish_reason":null}]}`:
235 on average from llama-cpp-python, at most 247; OpenAI adds a system fingerprint
and an obfuscation pad) around the token's own text, a few bytes and at most a few
dozen once JSON-escaped (`\\u4e2d` is six bytes); a whole reply costs a few bytes a
token (llama-cpp-python: 548 bytes for 64). 1 KiB leaves room for servers that send
more per event (logprobs are not asked for) and is 1 MiB at the default 1,024 tokens."""
ALLOWANCE = 64 * 1024
"""Body bytes a reply may have besides its tokens: the envelope, the usage event, an
error's text (which may also quote the request: its size is added too)."""
HEADERS = {"Accept-Encoding": "identity"}
"""What every request asks for: an uncompressed body, whose size is its length."""


def max_body_bytes(max_tokens: int, request_bytes: int = 0) -> int:
    """The most bytes a reply of at most `max_tokens` tokens to a request of
    `request_bytes` bytes is read to."""
    return ALLOWANCE + request_bytes + max_tokens * BYTES_PER_TOKEN


class OutOfBounds(Exception):
    """Raised while a request is sent or its body read, when the call's time is up
    (`kind` "time") or the body is larger than its bound (`kind` "size"); `why` says
    which bound and the setting behind it."""

    def __init__(self, kind: Literal["time", "size"], why: str):
        super().__init__(kind, why)
        self.kind = kind
        self.why = why


QUERY_DEADLINE = ("the query's deadline (CHORDAL_QUERY_TIMEOUT_S, or `chordal ask --timeout`, "
                  "where the query was asked: a slow model needs a longer one)")
"""What ends a call at its query's deadline, and the setting that gives the time."""


@dataclass(frozen=True)
class Budget:
    """When one call must end: `ends_at` (time.monotonic()) and what sets it."""

    ends_at: float
    reason: str
    """`QUERY_DEADLINE` or `its 120s limit (CHORDAL_LLM_REPLY_S)`."""

    @classmethod
    def of(cls, reply_s: float, deadline: float | None) -> Budget:
        """The budget of a call starting now: `reply_s` seconds, or until `deadline` (a
        Unix time) when that comes first."""
        now = time.monotonic()
        budget = cls(now + reply_s, f"its {reply_s:g}s limit (CHORDAL_LLM_REPLY_S)")
        if deadline is not None and deadline - time.time() < reply_s:
            budget = cls(now + deadline - time.time(), QUERY_DEADLINE)
        return budget

    def left(self) -> float:
        return self.ends_at - time.monotonic()

    def spent(self) -> OutOfBounds:
        return OutOfBounds("time", f"the reply ran past {self.reason}")


class BoundedTransport(httpx2.BaseTransport):
    """An HTTP transport (`inner`) whose every request is held to the bounds `current()`
    gives for the calling thread's call (none: unbounded): its timeouts clipped to the
    time left, no request once none is left, a timeout past the budget as OutOfBounds
    (openai-python retries its own timeouts, not exceptions it does not know), and its
    response body bounded (`BoundedBody`)."""

    def __init__(self, inner: httpx2.BaseTransport,
                 current: Callable[[], tuple[Budget, int] | None]):
        self.inner = inner
        self.current = current

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        bounds = self.current()
        if bounds is None:
            return self.inner.handle_request(request)
        budget, max_tokens = bounds
        left = budget.left()
        if left <= 0:
            raise budget.spent()
        timeouts = request.extensions.get("timeout") or {}
        request.extensions["timeout"] = {name: left if value is None else min(value, left)
                                         for name, value in timeouts.items()}
        try:
            response = self.inner.handle_request(request)
        except httpx2.TimeoutException:
            if budget.left() <= 0:
                raise budget.spent() from None
            raise
        bound_body(response, max_body_bytes(max_tokens, len(request.content)), budget,
                   f"{max_tokens} tokens")
        return response

    def close(self) -> None:
        self.inner.close()


def bound_body(response: httpx2.Response, max_bytes: int, budget: Budget,
               what: str) -> None:
    """Make `response`'s body stop with OutOfBounds past `max_bytes` or `budget`
    (`what`: the reply's size as messages name it, `1024 tokens`)."""
    encoding = response.headers.get("content-encoding", "identity").lower()
    if encoding != "identity":
        response.close()
        raise OutOfBounds("size", f"the server compressed its reply ({encoding}) although "
                          "the request asked for none (Accept-Encoding: identity), so its "
                          "size cannot be bounded; serve it uncompressed")
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    response.stream = BoundedBody(response.stream, max_bytes, budget, what, sock)


def no_retry_after(response: httpx2.Response, budget: Budget) -> None:
    """Mark a failed `response` not to be retried when the wait it asks for
    (`Retry-After`, `retry-after-ms`) is longer than the time `budget` has left."""
    if response.status_code < 400:
        return
    headers = response.headers
    try:
        wait = (float(headers["retry-after-ms"]) / 1000 if "retry-after-ms" in headers
                else float(headers.get("retry-after", 0)))
    except ValueError:  # an HTTP date: openai-python's own parse decides
        return
    if wait >= budget.left():
        response.headers["x-should-retry"] = "false"


class BoundedBody(httpx2.SyncByteStream):
    """A response body read to at most `max_bytes` bytes and until `budget` runs out;
    with the connection's `sock`, a watchdog shuts it when the budget runs out while a
    read waits."""

    def __init__(self, inner: httpx2.SyncByteStream, max_bytes: int, budget: Budget,
                 what: str, sock: socket.socket | None):
        self.inner, self.max_bytes, self.budget, self.what = inner, max_bytes, budget, what
        self.read = 0
        self.expired = threading.Event()
        self.watchdog = None
        if sock is not None:
            self.watchdog = threading.Timer(max(0.0, budget.left()), self._expire, (sock,))
            self.watchdog.daemon = True
            self.watchdog.start()

    def __iter__(self):
        try:
            for chunk in self.inner:
                self.read += len(chunk)
                if self.read > self.max_bytes:
                    raise OutOfBounds("size", (
                        f"the server sent more than {self.max_bytes:,} bytes for a reply of "
                        f"at most {self.what}: it ignores max_tokens"))
                if self.expired.is_set() or self.budget.left() <= 0:
                    raise self.budget.spent()
                yield chunk
        except httpx2.TransportError:
            # the watchdog shut the socket under the read, or a clipped timeout ran out
            if self.expired.is_set() or self.budget.left() <= 0:
                raise self.budget.spent() from None
            raise
        finally:
            self._disarm()

    def close(self) -> None:
        self._disarm()
        self.inner.close()

    def _disarm(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()

    def _expire(self, sock: socket.socket) -> None:
        self.expired.set()
        try:  # the plain socket's shutdown: an SSL socket's would drop its TLS state
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # wakes a blocked recv
        except OSError:
            pass  # already closed: nothing waits on it

"""Request bodies of the HTTP API: read only after authentication, bounded in size and
in time, then read strictly as JSON.

Consumes each request's body as the server receives it and the Settings
(CHORDAL_API_MAX_BODY_BYTES, CHORDAL_API_BODY_TIMEOUT_S); produces:

- `StrictJsonRoute` (every route of the app): runs the route's `BeforeBody`
  dependencies (authentication) before the body is read, since FastAPI reads and
  parses a body before it runs any dependency; a request refused there (401, 429) is
  answered without one byte of its body read, and uvicorn drops the rest as it arrives.
- `BodyLimits` (middleware): while the app reads a body, one larger than the limit (by
  its Content-Length, else as it arrives) is 413 and one that has not arrived within
  the time limit of its first read is 408, its connection closed. It reads nothing
  itself, so a body nobody reads costs nothing.
- `read_json`: the decoded JSON value, or a `json.JSONDecodeError` saying what is
  wrong, which FastAPI turns into the documented 422 (`json_invalid`) instead of 400
  `There was an error parsing the body`: a body that is not UTF-8, holds an integer too
  long for Python to read, or nests deeper than `MAX_DEPTH` (deep enough to make
  Python's parser or the validators run out of stack). Non-finite numbers (`NaN`,
  `Infinity`, `1e400`) and lone surrogates (`"\\ud800"`) are read here and refused by
  the models, which name the field.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import anyio
from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_DEPTH = 32
"""Levels of arrays and objects a body may nest; a list of queries with plans needs 6."""


def read_json(body: bytes) -> Any:
    """The JSON value of `body`; JSONDecodeError when it is not UTF-8 JSON of at most
    `MAX_DEPTH` levels."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise json.JSONDecodeError(f"not UTF-8: byte 0x{body[e.start]:02x} at offset "
                                   f"{e.start}; send the body encoded as UTF-8", "", 0) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python reads integers of at most 4300 digits
        raise json.JSONDecodeError("a number has more than 4300 digits; write it shorter, "
                                   "or as a string", "", 0) from None
    except RecursionError:
        raise _too_deep() from None
    if isinstance(value, (dict, list)) and _deeper_than(value, MAX_DEPTH):
        raise _too_deep()
    return value


def _too_deep() -> json.JSONDecodeError:
    return json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep; a query is an "
                                "object of fields, a list of queries one level more", "", 0)


def _deeper_than(value: dict | list, limit: int) -> bool:
    """True when arrays and objects in `value` nest more than `limit` levels (no recursion:
    the value may be as deep as Python's parser allows)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


class StrictJsonRequest(Request):
    """A request whose `json()` is `read_json` of its body."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = read_json(await self.body())
        return self._json


class BeforeBody:
    """A route dependency that `StrictJsonRoute` runs before the body is read (`admit`
    raises to refuse the request), as well as FastAPI after it."""

    async def admit(self, request: Request) -> None:
        raise NotImplementedError


class StrictJsonRoute(APIRoute):
    """A route whose body is read by `read_json` (set as the app router's route_class),
    once its `BeforeBody` dependencies let the request in."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()
        gates = [d.dependency for d in self.dependencies
                 if isinstance(d.dependency, BeforeBody)] if self.body_field else []

        async def strict(request: Request) -> Response:
            for gate in gates:
                await gate.admit(request)
            return await handler(StrictJsonRequest(request.scope, request.receive))
        return strict


class BodyLimits:
    """ASGI middleware: a request body is at most `max_bytes` and arrives within
    `timeout_s` of its first read, else the read raises 413 or 408 (HTTPException)."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float):
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body = _Body(self, scope, receive)
        await self.app(scope, body.receive, body.send(send))


class _Body:
    """One request's body as the app reads it, counted and timed."""

    def __init__(self, limits: BodyLimits, scope: Scope, receive: Receive):
        self.limits = limits
        self._receive = receive
        declared = Headers(scope=scope).get("content-length", "")
        self.declared = int(declared) if declared.isdigit() else None
        self.read = 0
        self.deadline: float | None = None
        # The whole body was read, or a response started (a streamed one waits on
        # `receive` for the client to go away): reads pass through unbounded.
        self.done = False

    def send(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.done = True
            await send(message)
        return sending

    async def receive(self) -> Message:
        if self.done:
            return await self._receive()
        max_bytes = self.limits.max_bytes
        if self.declared is not None and self.declared > max_bytes:
            raise _too_large(f"is {self.declared:,} bytes (its Content-Length), more than",
                             max_bytes)
        if self.deadline is None:
            self.deadline = anyio.current_time() + self.limits.timeout_s
        with anyio.move_on_after(self.deadline - anyio.current_time()):
            message = await self._receive()
            self.read += len(message.get("body", b""))
            if self.read > max_bytes:
                raise _too_large("grew past", max_bytes)
            self.done = not message.get("more_body", False)
            return message
        raise HTTPException(408, f"the request body did not arrive within "
                                 f"{self.limits.timeout_s:g} s of its first read "
                                 "(CHORDAL_API_BODY_TIMEOUT_S): send it at once, or raise "
                                 "the setting for a slow link",
                            headers={"Connection": "close"})


def _too_large(what: str, max_bytes: int) -> HTTPException:
    return HTTPException(413, f"the request body {what} the {max_bytes:,} bytes allowed "
                              "(CHORDAL_API_MAX_BODY_BYTES): send fewer queries per request "
                              "(`chordal enqueue` takes any number), or raise the setting")

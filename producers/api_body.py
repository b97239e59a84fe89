"""Request bodies read strictly as JSON, for every route of the HTTP API.

Consumes the raw bytes of a request; produces the decoded JSON value, or a
`json.JSONDecodeError` saying what is wrong, which FastAPI turns into the documented 422
(`json_invalid`) instead of 400 `There was an error parsing the body`: a body that is
not UTF-8, holds an integer too long for Python to read, or nests deeper than
`MAX_DEPTH` (deep enough to make Python's parser or the validators run out of stack).
Non-finite numbers (`NaN`, `Infinity`, `1e400`) and lone surrogates (`"\\ud800"`) are
read here and refused by the models, which name the field.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from fastapi import Request, Response
from fastapi.routing import APIRoute

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


class StrictJsonRoute(APIRoute):
    """A route whose body is read by `read_json` (set as the app router's route_class)."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))
        return strict

"""How many wrong tokens one client may send to the HTTP API: a wrong bearer token (the
JSON routes and the pages) or a wrong token in the login form.

Consumes the run store's Redis, the Settings (CHORDAL_API_AUTH_FAILURES,
CHORDAL_API_AUTH_WINDOW_S) and each request's client address; produces `AuthFailures`:
`add` counts a wrong token, `check` raises `TooManyFailures` (answered 429 with
Retry-After) for a client that sent `limit` wrong tokens in its window, before its next
token is even compared. The window starts at the client's first wrong token and the
count ends with it. A right token resets nothing, for no client: it cannot tell an
attacker's guesses from a user's typos.

Counts live in Redis (`naming.auth_failures_key`, expiring with their window), so the
API processes in front of one run store share them. A client is the address of the
request as the ASGI scope gives it: the address its connection comes from, or, from a
proxy uvicorn trusts (FORWARDED_ALLOW_IPS, by default only 127.0.0.1 and ::1: a TLS
proxy on the same host), the address that proxy appends to X-Forwarded-For.
"""

from __future__ import annotations

import math

import redis
from fastapi import HTTPException, Request

from shared import naming

ADD_LUA = """
local n = redis.call('INCRBY', KEYS[1], 1)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""
"""Counts one wrong token; the first of a window starts it (atomic: no count without
its expiry, whichever API process counts)."""


class TooManyFailures(HTTPException):
    """Raised for a client that sent too many wrong tokens: 429, Retry-After in seconds."""

    def __init__(self, retry_after_s: int, limit: int, window_s: int):
        super().__init__(429, f"{limit} wrong tokens from this address within {window_s} s "
                              f"(CHORDAL_API_AUTH_FAILURES, CHORDAL_API_AUTH_WINDOW_S): "
                              f"try again in {retry_after_s} s",
                         headers={"Retry-After": str(retry_after_s)})
        self.retry_after_s = retry_after_s


def client_of(request: Request) -> str:
    """The request's client address (`unknown` when the server gives none)."""
    return request.client.host if request.client else "unknown"


class AuthFailures:
    """Wrong tokens per client address in Redis: at most `limit` per `window_s`."""

    def __init__(self, client: redis.Redis, limit: int, window_s: int):
        self.r = client
        self.limit = limit
        self.window_s = window_s
        self._add = client.register_script(ADD_LUA)

    def check(self, client: str) -> None:
        """TooManyFailures when `client` may not try a token now."""
        with self.r.pipeline(transaction=False) as p:
            p.get(naming.auth_failures_key(client))
            p.pttl(naming.auth_failures_key(client))
            count, pttl = p.execute()
        if int(count or 0) >= self.limit:
            wait_s = math.ceil(pttl / 1000) if pttl > 0 else self.window_s
            raise TooManyFailures(max(wait_s, 1), self.limit, self.window_s)

    def add(self, client: str) -> None:
        """Count one wrong token from `client`."""
        self._add(keys=[naming.auth_failures_key(client)], args=[self.window_s])

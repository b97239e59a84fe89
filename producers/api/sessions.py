"""Browser sessions of the pages: a login with the API token becomes a session cookie.

Consumes the run store's Redis and the API token; produces sessions, each a random
cookie value (`SESSION_COOKIE`) whose SHA-256 names a Redis hash (`naming.session_key`):

    csrf    the session's CSRF token: every POST of the pages carries it in a form field,
            and a request authenticated by the cookie that changes something carries it
            in the `X-CSRF-Token` header
    token   a fingerprint of the API token the session logged in with: a session lives
            only while the API runs with that token (rotating it logs every browser out)

A session lives `SESSION_TTL_S` from its login (not renewed); logout deletes it. The
cookie itself is HttpOnly, SameSite=Strict, Path=/, and Secure unless the page was asked
for over plain http on a loopback address (`cookie_attributes`): browsers keep Secure
cookies over http://localhost and 127.0.0.1 in Chromium and Firefox only, and cookies are
not kept apart by port, so Secure adds nothing on one machine; anywhere else the login
is refused over plain http (producers/api/pages/login.py).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

import redis

from shared import naming

SESSION_COOKIE = "chordal_session"
LOGIN_COOKIE = "chordal_login"
"""The login form's own CSRF token (double submit), set when the form is shown."""
SESSION_TTL_S = 12 * 3600
LOGIN_TTL_S = 600


@dataclass(frozen=True)
class Session:
    csrf: str


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def fingerprint(token: str) -> str:
    """What a session keeps of the API token: enough to tell it changed, not to use it."""
    return hmac.new(b"chordal-session", token.encode(), hashlib.sha256).hexdigest()


class SessionStore:
    """Sessions in Redis for one API token."""

    def __init__(self, client: redis.Redis, token: str, ttl_s: int = SESSION_TTL_S):
        self.r = client
        self.token = fingerprint(token)
        self.ttl_s = ttl_s

    def create(self) -> tuple[str, Session]:
        """A new session: the cookie value and the session it names."""
        cookie, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        key = naming.session_key(digest(cookie))
        with self.r.pipeline() as p:
            p.hset(key, mapping={"csrf": csrf, "token": self.token})
            p.expire(key, self.ttl_s)
            p.execute()
        return cookie, Session(csrf=csrf)

    def get(self, cookie: str | None) -> Session | None:
        """The session the cookie names; None when there is none, it expired, or it was
        made with another API token."""
        if not cookie or len(cookie) > 100:
            return None
        csrf, token = self.r.hmget(naming.session_key(digest(cookie)), ["csrf", "token"])
        if csrf is None or token is None or not hmac.compare_digest(token, self.token):
            return None
        return Session(csrf=csrf)

    def delete(self, cookie: str | None) -> None:
        if cookie and len(cookie) <= 100:
            self.r.delete(naming.session_key(digest(cookie)))


def same(given: str | None, expected: str) -> bool:
    """`given` equals `expected`, compared in constant time."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def cookie_attributes(secure: bool, max_age: int, path: str = "/") -> dict:
    """Keyword arguments of `Response.set_cookie` for a session or login cookie."""
    return {"max_age": max_age, "path": path, "secure": secure, "httponly": True,
            "samesite": "strict"}

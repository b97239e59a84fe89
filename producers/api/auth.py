"""Who may call the HTTP API and open its pages.

Consumes the `Settings` (CHORDAL_API_TOKEN), the run store's Redis (sessions,
producers/api/sessions.py; wrong tokens per client, producers/api/failures.py) and each
request; produces the token the API requires (`api_token`: a ConfigError for none, an
empty or a short one) and FastAPI dependencies:

- `Access.api()` for the JSON routes: `Authorization: Bearer <token>`, or the session
  cookie of a browser that logged in (so `EventSource` needs no token in its URL). A
  request that changes something (POST) on the cookie alone must carry the session's
  CSRF token in `X-CSRF-Token`. Otherwise 401 (403 for a missing CSRF token). It runs
  before a request's body is read (`BeforeBody`, producers/api/body.py).
- `Access.page()` for the pages: the same, but a browser without a session is sent to
  the login form (`LoginRequired`, answered with a redirect by producers/api/pages/site.py).

A client that sent too many wrong bearer tokens gets 429 before its token is compared.
Without a token (`--insecure`, allowed on loopback only, see `check_exposure`) everyone
may. Every token and CSRF comparison is constant-time (`hmac.compare_digest`).
"""

from __future__ import annotations

import ipaddress

import redis
from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from producers.api.body import BeforeBody
from producers.api.failures import AuthFailures, client_of
from producers.api.sessions import SESSION_COOKIE, Session, SessionStore, same
from shared.config import Settings
from shared.errors import ConfigError

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
LOOPBACK_NAMES = ("localhost",)
CSRF_HEADER = "X-CSRF-Token"
BEARER = HTTPBearer(auto_error=False, description="CHORDAL_API_TOKEN")
"""`Authorization: Bearer <token>` (the token stripped), or None without one."""
MIN_TOKEN_CHARS = 32
"""Characters the API token has at least. 32 random characters are at least 128 bits
even in hex (192 in the URL-safe alphabet of MAKE_TOKEN, which prints 43): beyond any
number of guesses. A length cannot tell a random token from a sentence: make it random."""
MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'
NO_TOKEN = (f"CHORDAL_API_TOKEN is not set: set it to a random string of at least "
            f"{MIN_TOKEN_CHARS} characters, made with `{MAKE_TOKEN}` (clients send "
            "`Authorization: Bearer <token>`), or pass --insecure to serve without "
            "authentication on a loopback address")


class LoginRequired(Exception):
    """Raised when a page is asked for without a session: the browser goes to the login
    form, which comes back to `next` (a path of this site)."""

    def __init__(self, next_path: str):
        super().__init__(next_path)
        self.next_path = next_path


def api_token(settings: Settings, insecure: bool) -> str | None:
    """The token the API requires, None to serve without one (`insecure` and no token
    set); ConfigError when none is set without `insecure`, or the one set (even with
    `insecure`) is empty or shorter than MIN_TOKEN_CHARS."""
    if settings.api_token is None:
        if insecure:
            return None
        raise ConfigError(NO_TOKEN)
    token = settings.api_token.get_secret_value()
    if len(token) >= MIN_TOKEN_CHARS:
        return token
    what = ("empty (a line `CHORDAL_API_TOKEN=` sets it so)" if not token
            else f"{len(token)} character{'s' if len(token) > 1 else ''} long")
    raise ConfigError(f"CHORDAL_API_TOKEN is {what}: the API needs a random token of at "
                      f"least {MIN_TOKEN_CHARS} characters; make one with `{MAKE_TOKEN}`"
                      + (" (--insecure serves without a token only when CHORDAL_API_TOKEN "
                         "is unset)" if insecure else ""))


def is_loopback(host: str | None) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (with or without brackets)."""
    if not host:
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Access:
    """The API token, the sessions made with it and the wrong ones counted per client;
    `open` when there is no token."""

    def __init__(self, token: str | None, client: redis.Redis, failures: AuthFailures):
        self.token = token
        self.sessions = SessionStore(client, token) if token else None
        self.failures = failures

    @property
    def open(self) -> bool:
        return self.token is None

    def session(self, request: Request) -> Session | None:
        """The session the request's cookie names, if any."""
        if self.sessions is None:
            return None
        return self.sessions.get(request.cookies.get(SESSION_COOKIE))

    def _bearer(self, request: Request,
                credentials: HTTPAuthorizationCredentials | None) -> bool:
        """True when the request needs no session: open access, or the right bearer
        token; False when it sent none. A wrong token is answered 401 and counted, a
        client past its wrong tokens 429 (api_failures.py)."""
        if self.token is None:
            return True
        if credentials is None:
            return False
        client = client_of(request)
        self.failures.check(client)
        if not same(credentials.credentials, self.token):
            self.failures.add(client)
            raise HTTPException(401, "wrong bearer token: send the value of "
                                     "CHORDAL_API_TOKEN that the API was started with",
                                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return True

    def check_api(self, request: Request,
                  credentials: HTTPAuthorizationCredentials | None) -> None:
        """Nothing when the request may use a JSON route; else HTTPException."""
        if self._bearer(request, credentials):
            return
        session = self.session(request)
        if session is None:
            raise HTTPException(401, "missing bearer token: send the header "
                                     "`Authorization: Bearer <CHORDAL_API_TOKEN>` (a "
                                     "browser: log in at /ui/login)",
                                headers={"WWW-Authenticate": "Bearer"})
        if request.method not in SAFE_METHODS and not same(
                request.headers.get(CSRF_HEADER), session.csrf):
            raise HTTPException(403, f"missing or wrong {CSRF_HEADER} header: a request "
                                     "that changes something on a session cookie must "
                                     "carry the session's CSRF token (or send the bearer "
                                     "token instead of the cookie)")

    def api(self) -> ApiGate:
        return ApiGate(self)

    def page(self):
        def check(request: Request, credentials: HTTPAuthorizationCredentials | None
                  = Depends(BEARER)) -> Session | None:
            """The session (None: open access, or a bearer token was sent)."""
            if self._bearer(request, credentials):
                return None
            session = self.session(request)
            if session is None:
                query = f"?{request.url.query}" if request.url.query else ""
                raise LoginRequired(request.url.path + query)
            return session
        return check


class ApiGate(BeforeBody):
    """`Access.check_api` as the JSON routes' dependency. A route with a body runs it
    before the body is read (`admit`); FastAPI's run of it afterwards finds the request
    admitted and checks nothing twice."""

    ADMITTED = "chordal.admitted"
    """Scope key set once the request passed."""

    def __init__(self, access: Access):
        self.access = access

    def __call__(self, request: Request,
                 credentials: HTTPAuthorizationCredentials | None = Depends(BEARER)) -> None:
        if request.scope.get(self.ADMITTED) is self:
            return
        self.access.check_api(request, credentials)
        request.scope[self.ADMITTED] = self

    async def admit(self, request: Request) -> None:
        await run_in_threadpool(self, request, await BEARER(request))

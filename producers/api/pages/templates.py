"""How the pages are written out: consumes a template name (producers/api/pages/html/*.html)
and its context; produces an `HTMLResponse`, and the headers every page gets.

The Jinja2 environment escapes everything (autoescape on for every template, no `|safe`
anywhere) and fails on an undefined name. Scripts and styles come from
producers/api/pages/static/ only: `SECURITY_HEADERS` carry a Content-Security-Policy without
`unsafe-inline`, so nothing a question, plan or document smuggles into a page can run,
even where escaping were missed. `PageHeaders` adds them to every response under `/ui`
and to `/`, streamed or not (a plain ASGI wrapper: Starlette's BaseHTTPMiddleware
would buffer the event streams).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined

HERE = Path(__file__).resolve().parent
TEMPLATES, STATIC = HERE / "html", HERE / "static"
PREFIX = "/ui"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


def _when(t: float | None) -> str:
    if not t:
        return "-"
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True,
                  undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
ENV.filters.update(when=_when, num=_num)


def render(name: str, status_code: int = 200, **context) -> HTMLResponse:
    """Template `name` with `context`, as a page that no cache keeps."""
    html = ENV.get_template(name).render(prefix=PREFIX, **context)
    return HTMLResponse(html, status_code=status_code,
                        headers={"Cache-Control": "no-store"})


class PageHeaders:
    """ASGI middleware: `SECURITY_HEADERS` on every response of the pages."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == "/" or path == PREFIX
                                           or path.startswith(PREFIX + "/")):
            return await self.app(scope, receive, send)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)
        await self.app(scope, receive, with_headers)

"""Logging in to the pages and out: consumes the login form (the API token) and the
session cookie; produces a session (producers/api/sessions.py) and its cookie, or its end.

    GET  /ui/login    the form; sets the login cookie, whose value the form carries too
    POST /ui/login    token + that value (double-submit CSRF) -> session cookie, 303 to
                      `next` (a path of this site, else the Batches page)
    POST /ui/logout   the session's CSRF token -> session deleted, cookie cleared

A wrong token gets the form again with 401, compared in constant time, and counts
against the client (producers/api/failures.py): past its wrong tokens, the form comes
back with 429 and Retry-After before the body is read. The form body is at most
`MAX_FORM_BYTES` (413), read within CHORDAL_API_BODY_TIMEOUT_S (408, api_body.py). Over
plain http on an address other than loopback the login is refused (400): the session
cookie is Secure there, and a browser would not send it back. With no API token
(`--insecure`) there is nothing to log in to: both lead to the Batches page.
"""

from __future__ import annotations

import secrets
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from producers.api.auth import Access, is_loopback
from producers.api.failures import TooManyFailures, client_of
from producers.api.sessions import (LOGIN_COOKIE, LOGIN_TTL_S, SESSION_COOKIE, SESSION_TTL_S,
                                    Session, cookie_attributes, same)
from producers.api.pages.templates import PREFIX, render

MAX_FORM_BYTES = 8192
HOME = f"{PREFIX}/batches"
PLAIN_HTTP = ("Log in over https: the session cookie is Secure here, so a browser sends it "
              "back over https only (put a TLS proxy in front of chordal api, or open the "
              "pages on a loopback address).")


class FormTooLarge(Exception):
    """Raised when a form body is over `MAX_FORM_BYTES`."""


async def read_form(request: Request) -> dict[str, str]:
    """An `application/x-www-form-urlencoded` body of at most `MAX_FORM_BYTES`."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormTooLarge(MAX_FORM_BYTES)
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def local_path(value: str | None) -> str:
    """`value` when it is a path of this site (`/ui/…`), else the Batches page: a login
    never sends the browser elsewhere."""
    if value and value.startswith(PREFIX + "/") and "\\" not in value \
            and not any(ord(c) < 32 for c in value):
        return value
    return HOME


def over_https_or_loopback(request: Request) -> bool:
    return request.url.scheme == "https" or is_loopback(request.url.hostname)


def secure_cookie(request: Request) -> bool:
    """Whether the session cookie is Secure: always but over plain http to loopback."""
    return request.url.scheme == "https" or not is_loopback(request.url.hostname)


def login_form(request: Request, message: str = "", status_code: int = 200,
               next_path: str = HOME) -> Response:
    value = secrets.token_urlsafe(24)
    page = render("login.html", status_code, message=message, csrf=value,
                  next_path=local_path(next_path), session=None, open_access=False)
    page.set_cookie(LOGIN_COOKIE, value, **cookie_attributes(
        secure_cookie(request), LOGIN_TTL_S, path=f"{PREFIX}/login"))
    return page


def auth_routes(access: Access) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    page = access.page()

    @router.get(f"{PREFIX}/login")
    def login_page(request: Request, next_path: str = Query(HOME, alias="next")) -> Response:
        if access.open or access.session(request) is not None:
            return RedirectResponse(local_path(next_path), 303)
        message = "" if over_https_or_loopback(request) else PLAIN_HTTP
        return login_form(request, message, next_path=next_path)

    @router.post(f"{PREFIX}/login")
    async def login(request: Request) -> Response:
        if access.open:
            return RedirectResponse(HOME, 303)
        client = client_of(request)
        try:
            await run_in_threadpool(access.failures.check, client)
        except TooManyFailures as exc:
            page = login_form(request, f"Too many wrong tokens from this address: try again "
                              f"in {exc.retry_after_s} s.", 429)
            page.headers.update(exc.headers)
            return page
        form = await read_form(request)
        next_path = local_path(form.get("next"))
        if not over_https_or_loopback(request):
            return login_form(request, PLAIN_HTTP, 400, next_path)
        expected = request.cookies.get(LOGIN_COOKIE)
        if not expected or not same(form.get("csrf"), expected):
            return login_form(request, "The login form expired, or this browser keeps no "
                              "cookies for this site: allow them and log in again.", 400,
                              next_path)
        if not same(form.get("token"), access.token):
            await run_in_threadpool(access.failures.add, client)
            return login_form(request, "Wrong token: paste the value of CHORDAL_API_TOKEN "
                              "that chordal api was started with.", 401, next_path)
        cookie, _ = access.sessions.create()
        response = RedirectResponse(next_path, 303)
        response.set_cookie(SESSION_COOKIE, cookie, **cookie_attributes(
            secure_cookie(request), SESSION_TTL_S))
        response.delete_cookie(LOGIN_COOKIE, path=f"{PREFIX}/login",
                               secure=secure_cookie(request), httponly=True, samesite="strict")
        return response

    @router.post(f"{PREFIX}/logout")
    async def logout(request: Request, session: Session | None = Depends(page)) -> Response:
        if session is None:
            return RedirectResponse(HOME, 303)
        form = await read_form(request)
        if not same(form.get("csrf"), session.csrf):
            return render("message.html", 403, title="Not logged out", session=session,
                          open_access=False, message="The form did not carry this session's "
                          "CSRF token: log out from a page of this site.")
        access.sessions.delete(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse(f"{PREFIX}/login", 303)
        response.delete_cookie(SESSION_COOKIE, path="/", secure=secure_cookie(request),
                               httponly=True, samesite="strict")
        return response

    return router

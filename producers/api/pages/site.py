"""The pages `chordal api` serves to a browser, next to the JSON routes, with their auth.

Consumes the run store, the batch store, the Settings (CHORDAL_FLOWER_URL,
CHORDAL_WORKER_DEAD_AFTER_S) and `Access` (producers/api/auth.py); produces HTML pages,
written by producers/api/pages/templates.py from producers/api/pages/html/ and
producers/api/pages/static/:

    GET /ui/batches                        every batch: progress, counts per state,
                                           answers/s (overall, last minute), p50/p95,
                                           failed queries grouped by reason and code
    GET /ui/batches/{name}                 one batch, the same
    GET /ui/batches/{name}/failed          the queries of one failure group (?reason=&code=)
    GET /ui/queries/{id}                   one query: answer and footnotes with their
                                           evidence, plan graph, timeline, LLM calls,
                                           ReAct iterations; live while it runs (SSE)
    GET /ui/queries/{id}/live              the part of that page that changes
    POST /ui/batches/{name}/cancel         cancel its unfinished queries (the page's button)
    POST /ui/queries/{id}/cancel           cancel the query, back to its page
    GET /ui/workers                        live workers per queue, tasks held, silent ones
    GET/POST /ui/login, POST /ui/logout    producers/api/pages/login.py

A page needs the bearer token or a session; a browser without one goes to the login form.
A cancel form carries the session's CSRF token (403 without it), as the log-out form does.
The numbers are those of `chordal status` (page_batches.py, page_workers.py).
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from producers.api.auth import Access, LoginRequired
from producers.api.sessions import Session, same
from producers.cancel import cancel_batch, cancel_queries
from producers.batch.follow import STATES
from producers.api.pages.batches import SHOWN_IDS, batch_view, failed_in_group
from producers.api.pages.query import query_view
from producers.api.pages.templates import PREFIX, STATIC, PageHeaders, render
from producers.api.pages.workers import workers_view
from producers.api.pages.login import HOME, FormTooLarge, auth_routes, read_form
from shared.stores.batches import BatchStore
from shared.config import Settings
from shared.stores.runs import RunStore


def install_pages(app: FastAPI, settings: Settings, store: RunStore, access: Access) -> None:
    """Add the pages, their static files, headers and auth routes to `app`."""
    app.add_middleware(PageHeaders)
    app.mount(f"{PREFIX}/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(LoginRequired, _to_login)
    app.add_exception_handler(FormTooLarge, _too_large)
    app.include_router(auth_routes(access))
    app.include_router(page_routes(settings, store, access))


async def _to_login(request: Request, exc: LoginRequired) -> Response:
    # A link followed from another site comes without the SameSite=Strict cookie: the
    # page reloads itself once (now same-site, so with the cookie) before asking to log in.
    if request.headers.get("sec-fetch-site") == "cross-site" and request.method == "GET":
        return render("reopen.html", path=exc.next_path)
    return RedirectResponse(f"{PREFIX}/login?next={quote(exc.next_path, safe='/')}", 303)


async def _too_large(request: Request, exc: FormTooLarge) -> Response:
    return render("message.html", 413, title="Form too large", session=None,
                  open_access=True, message=f"A form of these pages is under {exc} bytes.")


def page_routes(settings: Settings, store: RunStore, access: Access) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    batches = BatchStore(store.r, settings.run_ttl_s)
    page = access.page()

    def show(name: str, session: Session | None, status_code: int = 200, **context) -> Response:
        return render(name, status_code, session=session, open_access=access.open,
                      flower_url=settings.flower_url, **context)

    def missing(session: Session | None, what: str) -> Response:
        return show("message.html", session, 404, title="Not found", message=what)

    @router.get("/")
    @router.get(PREFIX)
    @router.get(f"{PREFIX}/")
    def home() -> Response:
        return RedirectResponse(HOME, 303)

    @router.get(f"{PREFIX}/batches")
    def all_batches(session: Session | None = Depends(page)) -> Response:
        views = [batch_view(batches, name) for name in reversed(batches.names())]
        return show("batches.html", session, views=views, one=False, states=STATES)

    @router.get(f"{PREFIX}/batches/{{name}}")
    def one_batch(name: str, session: Session | None = Depends(page)) -> Response:
        if not batches.exists(name):
            return missing(session, f"No batch {name!r} in the run store (or it expired).")
        return show("batches.html", session, views=[batch_view(batches, name)], one=True,
                    states=STATES)

    @router.get(f"{PREFIX}/batches/{{name}}/failed")
    def failed(name: str, reason: str = Query(..., max_length=200),
               code: str = Query(..., max_length=200),
               session: Session | None = Depends(page)) -> Response:
        if not batches.exists(name):
            return missing(session, f"No batch {name!r} in the run store (or it expired).")
        members, count = failed_in_group(batches, name, reason, code)
        return show("failed.html", session, batch=name, reason=reason, code=code,
                    members=members, count=count, shown=SHOWN_IDS)

    @router.get(f"{PREFIX}/queries")
    def find_query(query_id: str = Query("", alias="id", max_length=200),
                   session: Session | None = Depends(page)) -> Response:
        if not query_id.strip():
            return RedirectResponse(HOME, 303)
        return RedirectResponse(f"{PREFIX}/queries/{quote(query_id.strip(), safe='')}", 303)

    @router.get(f"{PREFIX}/queries/{{query_id}}")
    def one_query(query_id: str, session: Session | None = Depends(page)) -> Response:
        record = store.record(query_id)
        if record is None:
            return missing(session, f"No query {query_id!r} in the run store: check the id, "
                                    "or it expired after CHORDAL_RUN_TTL_S.")
        return show("query.html", session, view=query_view(record, settings.flower_url))

    @router.get(f"{PREFIX}/queries/{{query_id}}/live")
    def live_part(query_id: str, session: Session | None = Depends(page)) -> Response:
        record = store.record(query_id)
        if record is None:
            return missing(session, f"No query {query_id!r} in the run store.")
        return show("query_live.html", session, view=query_view(record, settings.flower_url))

    async def may_change(request: Request, session: Session | None) -> bool:
        """A form that changes something carries the session's CSRF token; without a
        session (a bearer token, or open access on loopback) it must come from a page of
        this site (a browser sends no bearer token a page did not set)."""
        form = await read_form(request)
        if session is not None:
            return same(form.get("csrf"), session.csrf)
        if request.headers.get("authorization"):
            return True
        return (request.headers.get("sec-fetch-site") == "same-origin"
                or request.headers.get("origin") == f"{request.url.scheme}://{request.url.netloc}")

    def refused(session: Session | None) -> Response:
        return show("message.html", session, 403, title="Nothing cancelled",
                    message="The form did not carry this session's CSRF token: cancel from "
                            "a page of this site (reload it first if you logged in again).")

    @router.post(f"{PREFIX}/batches/{{name}}/cancel")
    async def cancel_a_batch(name: str, request: Request,
                             session: Session | None = Depends(page)) -> Response:
        if not await may_change(request, session):
            return refused(session)
        if not await run_in_threadpool(batches.exists, name):
            return missing(session, f"No batch {name!r} in the run store (or it expired).")
        done = await run_in_threadpool(cancel_batch, batches, store, name,
                                       "cancelled from the batch page")
        return show("message.html", session, title=f"Batch {name}",
                    message=done.line(f"batch {name}"))

    @router.post(f"{PREFIX}/queries/{{query_id}}/cancel")
    async def cancel_a_query(query_id: str, request: Request,
                             session: Session | None = Depends(page)) -> Response:
        if not await may_change(request, session):
            return refused(session)
        done = await run_in_threadpool(cancel_queries, store, [query_id],
                                       "cancelled from the query page")
        if done.missing:
            return missing(session, f"No query {query_id!r} in the run store.")
        return RedirectResponse(f"{PREFIX}/queries/{quote(query_id, safe='')}", 303)

    @router.get(f"{PREFIX}/workers")
    def workers(session: Session | None = Depends(page)) -> Response:
        return show("workers.html", session,
                    view=workers_view(store, settings.worker_dead_after_s))

    return router

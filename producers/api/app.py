"""The HTTP API (`chordal api`): submit queries, read their records, stream their progress.

Consumes `Settings` (the run store's Redis, `CHORDAL_API_TOKEN`, the request limits)
and JSON requests; produces what `create_app` serves:

    POST /queries               one QueryIn or a list -> 202 {"queries": [{id, submitted}]}
    GET  /queries/{id}          the RunRecord, or 404
    GET  /queries/{id}/events   server-sent events until the query is terminal (api_events.py)
    GET  /queries/{id}/steps/{step}/text?item=&offset=&limit=
                                a page of the document text a step read (its record and
                                events hold references and quotes only), 404, or 410
    GET  /batches/{name}        the batch's status from its counters (BatchOut), or 404
    DELETE /queries/{id}, /batches/{name}   cancel what is unfinished (CancelReply), or 404
    GET  /health                Redis reachable, workers per queue (api_health.py); no auth
    GET  /openapi.json, /docs   the schema; no auth
    GET  /ui/…                  pages for a browser: batches, one query, workers (pages.py)

Bodies are in api_models.py; request checks and the 422 body in api_requests.py; a
request body is read only once the request is authenticated, at most
CHORDAL_API_MAX_BODY_BYTES (413) within CHORDAL_API_BODY_TIMEOUT_S (408), and strictly
as JSON (UTF-8, bounded depth; else 422), by api_body.py. When Redis does not answer, a
route answers 503 naming the (password-masked) URL.

Queries go in through `producers.submit.submit` (recorded `queued`, then `chordal.plan`
sent with `ignore_result`); nothing waits on a Celery result. A request's queries are all
checked (fields, plans) before any is enqueued: a 422 means nothing was submitted. Every
`/queries` and `/batches` route needs `Authorization: Bearer <CHORDAL_API_TOKEN>` or the session cookie
of a browser that logged in to the pages (api_auth.py), and a client that sent too many
wrong tokens gets 429 (api_failures.py). Without a token (of at least 32 characters) the
app is built only when asked to be insecure, `serve` allows that on loopback only, and
then the app answers only requests whose Host header names a loopback address or the
one served on (400 else), so no other site's page reaches it through a DNS name that
resolves to loopback. No route redirects (a trailing slash is a 404), so no response
carries the Host header back.
The app also fails queries past their deadline, once a second, as `chordal up` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading

import anyio.to_thread
import redis
import uvicorn
from fastapi import Body, Depends, FastAPI, HTTPException, Request, Response
from fastapi import Query as QueryParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from kombu.exceptions import OperationalError
from starlette.middleware.trustedhost import TrustedHostMiddleware

from producers.api import events as api_events
from producers.api.auth import LOOPBACK_NAMES, Access, api_token, is_loopback
from producers.api.body import BodyLimits, StrictJsonRoute
from producers.api.failures import AuthFailures
from producers.api.health import check_health
from producers.api.models import (BatchOut, CancelReply, Health, QueryBatch, Refusal,
                                  SubmitReply, Submitted, Unprocessable)
from producers.batch.follow import batch_status
from producers.cancel import cancel_batch, cancel_queries
from producers.api.requests import to_queries, unprocessable
from producers.api.pages.site import install_pages
from producers.submit import submit
from shared.stores.batches import BatchStore
from shared.broker.app import make_celery
from shared.config import Settings
from shared.errors import ConfigError, StoreError, ToolError
from shared.models import RunRecord, TextPage
from shared.search import open_backend
from shared.stores.runs import RunStore
from shared.stores.texts import MAX_PAGE_CHARS, PAGE_CHARS, text_page

log = logging.getLogger("chordal.api")
EVENTS = ("`event: status` {status, at} for every status entered; `event: step` a StepResult "
          "and `event: iteration` a ReactIteration as each is stored; last `event: end`, a "
          "StreamEnd {query_id, status, answer, error, problems}. Each `data:` is one JSON line.")
REFUSALS = {
    401: {"model": Refusal, "description": "No bearer token, or not CHORDAL_API_TOKEN"},
    422: {"model": Unprocessable, "description": "The request is invalid; nothing was done"},
    429: {"model": Refusal, "description": (
        "Too many wrong tokens from this address (CHORDAL_API_AUTH_FAILURES per "
        "CHORDAL_API_AUTH_WINDOW_S): try again after Retry-After seconds")},
    503: {"model": Refusal, "description": "The run store (Redis) does not answer"},
}
"""Responses every `/queries` route may give besides its own."""
NOT_FOUND = {404: {"model": Refusal, "description": "No such query in the run store"}}
TEXT_REFUSALS = {
    404: {"model": Refusal, "description": "No such query, step, or text of the step"},
    410: {"model": Refusal, "description": (
        "The document was re-indexed with other content and the version the step read "
        "is no longer cached (DOCUMENT_CHANGED)")},
}
BODY_REFUSALS = {
    400: {"model": Refusal, "description": (
        "The body could not be received (the connection broke off)")},
    408: {"model": Refusal, "description": (
        "The body did not arrive within CHORDAL_API_BODY_TIMEOUT_S; the connection closes")},
    413: {"model": Refusal, "description": (
        "The body is larger than CHORDAL_API_MAX_BODY_BYTES (by its Content-Length or as "
        "it arrived); nothing was submitted")},
}
"""Responses of a route with a body, read once the request is authenticated."""


def create_app(settings: Settings, *, insecure: bool = False, host: str = "127.0.0.1",
               poll_s: float = 0.25, sweep_s: float | None = 1.0) -> FastAPI:
    """The API over `settings`' run store; ConfigError without a token unless `insecure`,
    or with an empty or short one. Served open (`insecure`, no token), it answers only
    requests for a loopback name or `host`. `sweep_s=None` turns the deadline sweeper off."""
    token = api_token(settings, insecure)
    store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
    batches = BatchStore(store.r, settings.run_ttl_s)
    celery = make_celery(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        sweeper = asyncio.create_task(_sweep(store, sweep_s)) if sweep_s else None
        yield
        if sweeper:
            sweeper.cancel()

    app = FastAPI(title="Chordal", version="0.1.0", lifespan=lifespan, redirect_slashes=False,
                  description="Submit questions, read their run records, stream progress.")
    app.add_exception_handler(RequestValidationError, unprocessable)
    app.add_exception_handler(redis.RedisError, _unavailable(settings))
    app.add_exception_handler(OperationalError, _unavailable(settings))
    app.add_exception_handler(StoreError, _unavailable(settings))
    app.router.route_class = StrictJsonRoute
    app.add_middleware(BodyLimits, max_bytes=settings.api_max_body_bytes,
                       timeout_s=settings.api_body_timeout_s)
    app.state.stopping = threading.Event()  # set by `serve` on SIGTERM: streams end
    access = Access(token, store.r, AuthFailures(store.r, settings.api_auth_failures,
                                                 settings.api_auth_window_s))
    auth = [Depends(access.api())]

    @app.post("/queries", status_code=202, response_model=SubmitReply, dependencies=auth,
              responses={**REFUSALS, **BODY_REFUSALS,
                  422: {"model": Unprocessable, "description": (
                      "A field or plan is invalid, or the body is not UTF-8 JSON; nothing "
                      "was submitted")}})
    def post_queries(response: Response, body: QueryBatch = Body(...)) -> SubmitReply:
        """Submit one query or a list of them (all checked before any is enqueued)."""
        items = body if isinstance(body, list) else [body]
        queries = to_queries(items, settings, many=isinstance(body, list))
        reply = SubmitReply(queries=[Submitted(id=q.id, submitted=submit(q, store, celery))
                                     for q in queries])
        if not isinstance(body, list):
            response.headers["Location"] = f"/queries/{queries[0].id}"
        return reply

    @app.get("/queries/{query_id}", response_model=RunRecord, dependencies=auth,
             responses={**REFUSALS, **NOT_FOUND})
    def get_query(query_id: str) -> RunRecord:
        """The run record: status, plan, steps, ReAct iterations, answer, timings."""
        record = store.record(query_id)
        if record is None:
            raise _not_found(query_id)
        return record

    @app.get("/queries/{query_id}/steps/{step_id}/text", response_model=TextPage,
             dependencies=auth, responses={**REFUSALS, **TEXT_REFUSALS})
    def get_step_text(query_id: str, step_id: str, item: int = QueryParam(0, ge=0),
                      offset: int = QueryParam(0, ge=0),
                      limit: int = QueryParam(PAGE_CHARS, ge=1, le=MAX_PAGE_CHARS)) -> TextPage:
        """A page of the document text a step read (its record holds only a reference
        and a quote): characters `offset` to `offset + limit` of text `item`."""
        backend = open_backend(settings)
        try:
            return text_page(store, backend, query_id, step_id, item, offset, limit)
        except LookupError as exc:
            raise HTTPException(404, str(exc)) from None
        except ToolError as exc:
            raise HTTPException(410, exc.message) from None
        finally:
            backend.close()

    @app.get("/queries/{query_id}/events", dependencies=auth, response_class=StreamingResponse,
             responses={200: {"description": EVENTS,
                              "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                        **REFUSALS, **NOT_FOUND})
    def get_events(query_id: str) -> StreamingResponse:
        """Server-sent events: `status`, `step`, `iteration` as they land, then `end`."""
        if store.status(query_id) is None:
            raise _not_found(query_id)
        return StreamingResponse(api_events.stream(store, query_id, poll_s,
                                                   stopping=app.state.stopping),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.delete("/queries/{query_id}", response_model=CancelReply, dependencies=auth,
                responses={**REFUSALS, **NOT_FOUND})
    def delete_query(query_id: str) -> CancelReply:
        """Cancel the query unless it has finished (then nothing changes): `cancelled` 1
        or `finished` 1. Cancelling twice is a no-op."""
        done = cancel_queries(store, [query_id], f"cancelled over the API (DELETE /queries/{query_id})")
        if done.missing:
            raise _not_found(query_id)
        return CancelReply(cancelled=done.cancelled, finished=done.finished)

    @app.delete("/batches/{name}", response_model=CancelReply, dependencies=auth,
                responses={**REFUSALS, 404: {"model": Refusal, "description": "No such batch"}})
    def delete_batch(name: str) -> CancelReply:
        """Cancel every unfinished query of the batch; answered ones are untouched."""
        if not batches.exists(name):
            raise _no_batch(name)
        done = cancel_batch(batches, store, name, f"cancelled over the API (DELETE /batches/{name})")
        return CancelReply(cancelled=done.cancelled, finished=done.finished,
                           missing=done.missing)

    @app.get("/batches/{name}", response_model=BatchOut, dependencies=auth,
             responses={**REFUSALS, 404: {"model": Refusal, "description": "No such batch"}})
    def get_batch(name: str) -> BatchOut:
        """A batch's counts per state, answers/s, p50/p95 latency, oldest unfinished query
        (from its counters: the same cost for 100,000 queries as for 10)."""
        if not batches.exists(name):
            raise _no_batch(name)
        s = batch_status(batches, name)
        return BatchOut(**s.__dict__, unfinished=s.unfinished)

    @app.get("/health", response_model=Health, responses={503: {"model": Health}})
    def health(response: Response) -> Health:
        """Whether Redis answers (503 when not) and how many workers consume each queue."""
        result = check_health(settings.effective_redis_url, store.r,
                              settings.worker_dead_after_s)
        if result.status == "down":
            response.status_code = 503
        return result

    install_pages(app, settings, store, access)
    if access.open:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=_loopback_hosts(host),
                           www_redirect=False)
    return app


def _loopback_hosts(host: str) -> list[str]:
    """The Host header values an open API answers: names of loopback and the address it
    is served on (an IPv6 one in brackets, as a Host header writes it)."""
    served = f"[{host.strip('[]')}]" if ":" in host else host
    return list(dict.fromkeys([*LOOPBACK_NAMES, "127.0.0.1", "[::1]", served]))


def _unavailable(settings: Settings):
    url = settings.masked_redis_url

    async def handler(request: Request, exc: Exception) -> JSONResponse:
        log.warning("%s %s: Redis at %s: %s", request.method, request.url.path, url, exc)
        what = (f"{exc}" if isinstance(exc, StoreError) else
                f"the run store (Redis at {url}) does not answer ({type(exc).__name__})")
        return JSONResponse(status_code=503, content={"detail": (
            f"{what}; retry later, and check CHORDAL_REDIS_URL and that Redis is running")})
    return handler


def _not_found(query_id: str) -> HTTPException:
    return HTTPException(404, f"no query {query_id!r} in the run store: check the id (POST "
                              "/queries returns it), or it expired after CHORDAL_RUN_TTL_S")


def _no_batch(name: str) -> HTTPException:
    return HTTPException(404, f"no batch {name!r} in the run store: check the name "
                              "(`chordal status` lists them), or it expired after "
                              "CHORDAL_RUN_TTL_S")


async def _sweep(store: RunStore, every_s: float) -> None:
    while True:
        try:
            for qid in await anyio.to_thread.run_sync(store.sweep_expired):
                log.warning("query %s passed its deadline: marked failed", qid)
        except redis.RedisError as exc:
            log.warning("deadline sweep skipped: %s", exc)
        await asyncio.sleep(every_s)


def check_exposure(settings: Settings, host: str, insecure: bool) -> None:
    """ConfigError unless the API is authenticated with a good token or (with --insecure
    and no token) loopback only."""
    if api_token(settings, insecure) is not None:
        return
    if not is_loopback(host):
        raise ConfigError(f"--insecure serves without authentication, which is allowed on a "
                          f"loopback address only (127.0.0.1, ::1, localhost), not on --host "
                          f"{host!r}: set CHORDAL_API_TOKEN to serve on other addresses")


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000,
          insecure: bool = False) -> None:
    """Serve the API until SIGTERM or SIGINT; ConfigError when it must not start."""
    check_exposure(settings, host, insecure)
    app = create_app(settings, insecure=insecure, host=host)
    auth = ("bearer token" if settings.api_token else
            "NO authentication (--insecure; loopback Host headers only)")
    print(f"chordal api: http://{host}:{port} (pages at /ui, schema at /docs), run store "
          f"{settings.masked_redis_url}, {auth}", flush=True)
    # uvicorn handles SIGTERM/SIGINT (stops accepting, waits for open responses), then
    # re-raises the signal to the handlers it found: these make that a normal exit.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: None)
    server = _Server(uvicorn.Config(app, host=host, port=port, log_level="info",
                                    timeout_graceful_shutdown=5), app.state.stopping)
    try:
        server.run()
    except SystemExit:  # uvicorn exits when it cannot start (a port in use, …)
        server.started = False
    if not server.started:
        raise ConfigError(f"could not serve on {host}:{port} (the log above says why; for "
                          "a port in use, pick another with --port)")
    print("chordal api: stopped", flush=True)


class _Server(uvicorn.Server):
    """Tells the event streams to end the moment a stop signal arrives, so shutdown does
    not wait out the graceful timeout on open streams."""

    def __init__(self, config: uvicorn.Config, stopping: threading.Event):
        super().__init__(config)
        self.stopping = stopping

    def handle_exit(self, sig, frame) -> None:
        self.stopping.set()
        super().handle_exit(sig, frame)

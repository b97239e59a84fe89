"""A query's progress as server-sent events, read by polling the run store.

Consumes a `RunStore` and a query id; produces SSE frames (`event: NAME`, `data: JSON`):

    status      {"status", "at"}        every status the query entered (from its `t_<status>`
                                        timestamps, so none is missed between two polls)
                                        and every change back (auto mode: finalizing ->
                                        executing)
    step        StepResult              each step result, once, as it is stored
    iteration   ReactIteration          each ReAct iteration, once, as it is stored
    end         StreamEnd               last: the answer, or the error and plan problems

Why polling and not pub/sub: every writer (planner, executors, finalizer, react steps)
already writes the run store, and nothing there publishes; one poll is one
MULTI/EXEC (HMGET of the status fields, HKEYS of the steps and iterations) plus an
HMGET of what is new, so it costs the same whether ten or a thousand steps ran. A stream
opened late (or reopened) replays what has happened so far, then continues live.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import get_args

import anyio.to_thread
import redis

from producers.api_models import StreamEnd
from shared import queues
from shared.models import TERMINAL, Answer, PlanProblem, ReactIteration, Status, StepResult
from shared.store import RunStore, step_order

log = logging.getLogger("chordal.api")
STATUSES: tuple[str, ...] = get_args(Status)
HEAD = ["status", "terminal", *(f"t_{s}" for s in STATUSES)]


@dataclass
class Cursor:
    """What one stream has sent so far."""

    entered: set[str] = field(default_factory=set)
    status: str | None = None
    steps: set[str] = field(default_factory=set)
    iterations: set[str] = field(default_factory=set)


def frame(event: str, data: str) -> bytes:
    """One SSE frame; `data` is JSON on one line."""
    return f"event: {event}\ndata: {data}\n\n".encode()


def poll(store: RunStore, query_id: str, cursor: Cursor) -> tuple[list[bytes], bool]:
    """The frames for what happened since `cursor`, and whether the stream is over."""
    run, steps_key, its_key = (queues.run_key(query_id), queues.steps_key(query_id),
                               queues.iterations_key(query_id))
    with store.r.pipeline() as p:  # MULTI/EXEC: status, steps and iterations agree
        p.hmget(run, HEAD)
        p.hkeys(steps_key)
        p.hkeys(its_key)
        head, step_ids, iteration_ns = p.execute()
    status, terminal, times = head[0], head[1], dict(zip(STATUSES, head[2:]))
    if status is None:  # expired (or deleted) since the stream began
        end = StreamEnd(query_id=query_id, status=None,
                        error="the query is no longer in the run store (its record expired)")
        return [frame("end", end.model_dump_json())], True
    timed: list[tuple[float, int, bytes]] = []  # (time, rank, frame): sorted before sending
    for s in STATUSES:
        if times[s] is not None and s not in cursor.entered:
            cursor.entered.add(s)
            cursor.status = s
            rank = 2 if s in TERMINAL else 0
            timed.append((float(times[s]), rank, _status(s, times[s])))
    if status != cursor.status and status not in TERMINAL:
        cursor.status = status
        timed.append((float(times.get(status) or 0), 0, _status(status, times.get(status))))
    new_steps = sorted(set(step_ids) - cursor.steps, key=step_order)
    if new_steps:
        cursor.steps.update(new_steps)
        for raw in store.r.hmget(steps_key, new_steps):
            result = StepResult.model_validate_json(raw)
            timed.append((result.finished_at, 1, frame("step", raw)))
    new_its = sorted(set(iteration_ns) - cursor.iterations, key=int)
    if new_its:
        cursor.iterations.update(new_its)
        for raw in store.r.hmget(its_key, new_its):
            it = ReactIteration.model_validate_json(raw)
            timed.append((it.finished_at, 1, frame("iteration", raw)))
    frames = [f for _, _, f in sorted(timed, key=lambda t: (t[1] == 2, t[0], t[1]))]
    if terminal:
        frames.append(frame("end", _end(store, query_id, status).model_dump_json()))
    return frames, bool(terminal)


def _status(status: str, at: str | None) -> bytes:
    return frame("status", json.dumps({"status": status,
                                       "at": float(at) if at is not None else None}))


def _end(store: RunStore, query_id: str, status: str) -> StreamEnd:
    answer, error, problems = store.r.hmget(queues.run_key(query_id),
                                            ["answer", "error", "problems"])
    return StreamEnd(
        query_id=query_id, status=status, error=error,
        answer=Answer.model_validate_json(answer) if answer else None,
        problems=[PlanProblem.model_validate(p) for p in json.loads(problems or "[]")])


async def stream(store: RunStore, query_id: str, poll_s: float = 0.25,
                 keepalive_s: float = 15.0,
                 stopping: threading.Event | None = None) -> AsyncIterator[bytes]:
    """SSE frames until the query is terminal; a comment line every `keepalive_s` of
    silence keeps proxies from closing the connection. When `stopping` is set (the server
    is shutting down) the stream ends without `end`: a client that reopens it gets
    everything again."""
    cursor, quiet = Cursor(), 0.0
    while not (stopping and stopping.is_set()):
        try:
            frames, over = await anyio.to_thread.run_sync(poll, store, query_id, cursor)
        except redis.RedisError as exc:  # ends without `end`; reopening gets a 503 or it all
            log.warning("event stream of %s closed: Redis: %s", query_id, exc)
            return
        for f in frames:
            yield f
        if over:
            return
        quiet = 0.0 if frames else quiet + poll_s
        if quiet >= keepalive_s:
            quiet = 0.0
            yield b": keep-alive\n\n"
        await asyncio.sleep(poll_s)

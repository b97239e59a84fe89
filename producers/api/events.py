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
`RunStore.progress`: a MULTI/EXEC (HMGET of the status and end fields, HKEYS of the
steps and iterations) plus an HMGET of what is new, so it costs the same whether ten or a thousand steps ran. A stream
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

from producers.api.models import StreamEnd
from shared.models import TERMINAL, Answer, PlanProblem, ReactIteration, Status, StepResult
from shared.stores.runs import RunStore

log = logging.getLogger("chordal.api")
STATUSES: tuple[str, ...] = get_args(Status)
HEAD = ["status", "terminal", *(f"t_{s}" for s in STATUSES)]
END = ["answer", "error", "problems"]
"""Set once, with `terminal`: absent (and free to read) until then."""


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
    head, steps, iterations = store.progress(query_id, [*HEAD, *END], cursor.steps,
                                             cursor.iterations)
    status, terminal = head["status"], head["terminal"]
    times = {s: head[f"t_{s}"] for s in STATUSES}
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
    timed += _stored("step", steps, StepResult, cursor.steps)
    timed += _stored("iteration", iterations, ReactIteration, cursor.iterations)
    frames = [f for _, _, f in sorted(timed, key=lambda t: (t[1] == 2, t[0], t[1]))]
    if terminal:
        frames.append(frame("end", _end(query_id, status, head).model_dump_json()))
    return frames, bool(terminal)


def _status(status: str, at: str | None) -> bytes:
    return frame("status", json.dumps({"status": status,
                                       "at": float(at) if at is not None else None}))


def _stored(event: str, new: dict[str, str], model: type[StepResult] | type[ReactIteration],
            seen: set[str]) -> list[tuple[float, int, bytes]]:
    """(finished_at, 1, frame) for each newly stored step or iteration, now marked seen."""
    seen.update(new)
    read = [model.model_validate_json(raw) for raw in new.values()]
    # re-written whole: the run store leaves out fields at their defaults
    return [(m.finished_at, 1, frame(event, m.model_dump_json())) for m in read]


def _end(query_id: str, status: str, head: dict) -> StreamEnd:
    # Read with `terminal`: the run store sets the answer, error and problems with it.
    return StreamEnd(
        query_id=query_id, status=status, error=head["error"],
        answer=Answer.model_validate_json(head["answer"]) if head["answer"] else None,
        problems=[PlanProblem.model_validate(p) for p in json.loads(head["problems"] or "[]")])


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

"""A query's timeline: consumes a `RunRecord` (status times, LLM calls, dispatch times,
step results, ReAct iterations); produces rows of bars placed for an SVG
(producers/api/pages/html/query_live.html draws them).

Per step: its queue wait, from when its task was sent (`RunRecord.dispatch`,
`dispatched_at`) to when a worker started it (`StepResult.started_at`), and its run
time, to `finished_at`; a step sent and not finished runs to now. LLM calls run from
`started_at` for `latency_ms`, ReAct iterations for `duration_ms` up to `finished_at`.
Times come from the clocks of the machines that wrote them: a wait that comes out
negative (clocks apart) is drawn as none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from shared.models import TERMINAL, RunRecord

AXIS_W = 640
"""Pixels of the time axis."""
LABEL_W = 120
ROW_H = 22
TOP = 26


@dataclass
class Bar:
    kind: str
    """`wait`, `run`, `llm`, `react` (CSS classes)."""
    status: str
    x: float
    width: float
    title: str


@dataclass
class Row:
    label: str
    detail: str
    """Wait and run time, and the worker."""
    y: int
    bars: list[Bar] = field(default_factory=list)
    step_id: str | None = None


@dataclass
class Timeline:
    rows: list[Row]
    marks: list[tuple[str, float]]
    """(status, x) for every status the query entered."""
    ticks: list[tuple[str, float]]
    width: int
    height: int
    span_s: float
    label_w: int = LABEL_W
    top: int = TOP
    row_h: int = ROW_H
    detail_x: int = LABEL_W + AXIS_W + 8


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def timeline(record: RunRecord, now: float | None = None) -> Timeline:
    now = time.time() if now is None else now
    sent = {d.step_id: d.dispatched_at for d in record.dispatch if d.dispatched_at}
    times = [*record.timings.values(), *sent.values(),
             *(s.started_at for s in record.steps if s.started_at),
             *(s.finished_at for s in record.steps if s.finished_at),
             *(c.started_at for c in record.llm_calls if c.started_at),
             *(it.finished_at for it in record.iterations if it.finished_at)]
    start = min(times, default=now)
    running = record.status not in TERMINAL
    end = max([*times, now] if running else times or [start])
    span = max(end - start, 0.001)

    def x(t: float) -> float:
        return round(LABEL_W + (min(max(t, start), end) - start) / span * AXIS_W, 1)

    def bar(kind: str, status: str, t0: float, t1: float, title: str) -> Bar:
        return Bar(kind, status, x(t0), max(round(x(t1) - x(t0), 1), 1.0), title)

    rows: list[Row] = []

    def row(label: str, detail: str, bars: list[Bar], step_id: str | None = None) -> None:
        rows.append(Row(label, detail, TOP + len(rows) * ROW_H, bars, step_id))

    for c in record.llm_calls:
        if c.started_at:
            took = c.latency_ms / 1000
            row(f"LLM {c.purpose}", f"{ms(took)}, {c.prompt_tokens}+{c.completion_tokens} tokens",
                [bar("llm", c.status, c.started_at, c.started_at + took, f"{c.model}: {ms(took)}")])
    results = {s.step_id: s for s in record.steps}
    order = [s.id for s in record.plan.steps] if record.plan else []
    react = {f"R{it.n}" for it in record.iterations}  # drawn as iterations below
    order += [s for s in [*sent, *results] if s not in order and s not in react]
    for step_id in dict.fromkeys(order):
        r, at = results.get(step_id), sent.get(step_id)
        bars, detail = [], "waiting for its inputs" if running else "never ran"
        if r is not None and r.started_at:
            wait = max(r.started_at - at, 0.0) if at else None
            if wait:
                bars.append(bar("wait", "wait", at, r.started_at, f"queue wait {ms(wait)}"))
            bars.append(bar("run", r.status, r.started_at, r.finished_at or r.started_at,
                            f"run {ms(r.duration_ms / 1000)}"))
            detail = (f"wait {ms(wait)}, " if wait is not None else "") + \
                f"run {ms(r.duration_ms / 1000)}" + (f" on {r.worker}" if r.worker else "")
        elif r is not None:
            detail = f"{r.status} without running ({r.error_code})"
        elif at:
            bars.append(bar("wait", "sent", at, now if running else end, "sent, not finished"))
            detail = "sent, not finished"
        row(step_id, detail, bars, step_id)
    for it in record.iterations:
        took = it.duration_ms / 1000
        if it.finished_at:
            row(f"R{it.n} {it.tool or ''}".strip(), ms(took),
                [bar("react", "ok", it.finished_at - took, it.finished_at, f"iteration {it.n}")])
    marks = [(status, x(t)) for status, t in sorted(record.timings.items(), key=lambda kv: kv[1])]
    ticks = [(ms(span * i / 4), round(LABEL_W + AXIS_W * i / 4, 1)) for i in range(5)]
    return Timeline(rows, marks, ticks, LABEL_W + AXIS_W + 330, TOP + max(len(rows), 1) * ROW_H + 6,
                    span)

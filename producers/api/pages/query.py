"""The One-query page's data: consumes a `RunRecord` and the Flower address; produces a
`QueryView`: the answer cut into text and footnote markers, each footnote with its
document and the sentences its values were read from (the value marked), one row per
step (status, value, worker, wait and run time, Flower link), the plan graph
(page_graph.py) and the timeline (page_timeline.py).

Nothing here is markup: the template escapes every text. Links are only made of URLs
that start `http://` or `https://` (a document's url may be `javascript:…`). In domain
`medical` the texts taken from documents (values, quotes, titles) are masked as the
answer's are (shared/render/redact.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import quote, urlencode

from producers.api.pages.graph import Graph, plan_graph
from producers.api.pages.timeline import Timeline, timeline
from shared.models import TERMINAL, Evidence, RunRecord, StepResult
from shared.render import chain
from shared.render.cited import MARKER
from shared.render.redact import mask_identifiers

SAFE_URL = re.compile(r"^https?://[^\s\x00-\x1f\"'<>`]+$", re.I)
VALUE_CHARS = 160


def safe_href(url: str | None) -> str | None:
    """`url` when a link to it can only open a web page; else None (shown as text)."""
    return url if url and SAFE_URL.match(url) else None


@dataclass
class Piece:
    text: str
    note: int | None = None
    """A footnote marker's number; None for answer text."""


@dataclass
class Quote:
    step_id: str
    before: str
    value: str
    """The value as the sentence writes it (marked on the page); empty when not found."""
    after: str


@dataclass
class FootnoteView:
    number: int
    evidence: Evidence
    href: str | None
    variables: list[str]
    quotes: list[Quote] = field(default_factory=list)


@dataclass
class StepView:
    step_id: str
    action_id: str
    operation: str
    status: str
    """`waiting` (inputs not ready), `sent`, `ok`, `error`, `not run` (query ended),
    `dropped` (a rejected reply's step no plan kept, never sent)."""
    value: str = ""
    error: str = ""
    confidence: str = ""
    document: str = ""
    worker: str = ""
    attempt: int | None = None
    """Deliveries the step took (None until it reported)."""
    flower: str | None = None
    text: str | None = None
    """The API route of the document text the step read, when it read one (its value is
    the passage it starts with)."""


@dataclass
class QueryView:
    record: RunRecord
    terminal: bool
    pieces: list[Piece]
    footnotes: list[FootnoteView]
    steps: list[StepView]
    graph: Graph | None
    timeline: Timeline


def pieces(text: str) -> list[Piece]:
    """The answer text cut at its footnote markers (`91.7[1][2]%`)."""
    out, at = [], 0
    for m in MARKER.finditer(text):
        if m.start() > at:
            out.append(Piece(text[at:m.start()]))
        out += [Piece(f"[{n}]", int(n)) for n in re.findall(r"\d+", m.group())]
        at = m.end()
    if at < len(text):
        out.append(Piece(text[at:]))
    return out


def _quote(r: StepResult, mask: Callable[[str], str]) -> Quote:
    sentence, value = mask(r.quote or ""), mask(str(r.value or ""))
    at = sentence.find(value) if value else -1
    if at < 0:
        return Quote(r.step_id, sentence, "", "")
    return Quote(r.step_id, sentence[:at], value, sentence[at + len(value):])


def _quotes(record: RunRecord, results: dict[str, StepResult],
            producers: dict[str, str], doc_id: str, variables: list[str],
            mask: Callable[[str], str]) -> list[Quote]:
    """The sentences of document `doc_id` that the footnote's variables were read from;
    `results` by step id, `producers` the plan's (variable -> step id)."""
    if record.plan is not None:
        ids = [sid for v in variables if v in producers
               for sid in chain.upstream(record.plan, results, producers[v])]
    else:
        ids = list(results)
    found = [results[sid] for sid in dict.fromkeys(ids) if sid in results]
    return [_quote(r, mask) for r in found
            if r.quote and r.document is not None and r.document.doc_id == doc_id]


def flower_link(flower_url: str | None, r: StepResult | None, action_id: str) -> str | None:
    """The step's task in Flower: its page when the task id is known, else Flower's task
    search for the action_id (docs/monitoring.md)."""
    if not flower_url:
        return None
    if r is not None and r.task_id:
        return f"{flower_url}/task/{quote(r.task_id, safe='')}"
    return f"{flower_url}/api/tasks?" + urlencode({"search": f"args:\"'action_id': '{action_id}'\""})


def _short(value: object, mask: Callable[[str], str]) -> str:
    text = " ".join(mask("" if value is None else str(value)).split())
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 1] + "…"


def step_views(record: RunRecord, results: dict[str, StepResult], flower_url: str | None,
               mask: Callable[[str], str]) -> list[StepView]:
    """One row per step of the plan (and per other step sent or stored), in plan order;
    `results` by step id."""
    sent = {d.step_id for d in record.dispatch if d.dispatched_at}
    dropped = {d.step_id for d in record.dispatch if d.dropped}
    ops = {s.id: s.operation for s in record.plan.steps} if record.plan else {}
    ids = list(dict.fromkeys([*ops, *(d.step_id for d in record.dispatch), *results]))
    terminal = record.status in TERMINAL
    rows = []
    for sid in ids:
        r, action_id = results.get(sid), f"{record.query_id}:{sid}"
        status = (r.status if r is not None else "sent" if sid in sent
                  else "dropped" if sid in dropped else "not run" if terminal else "waiting")
        row = StepView(sid, action_id, r.operation if r else ops.get(sid, "?"), status,
                       flower=flower_link(flower_url, r, action_id))
        if r is not None:
            row.value = _short(r.value, mask) if r.status == "ok" else ""
            row.error = f"{r.error_code}: {r.error_message}" if r.status == "error" else ""
            row.confidence, row.worker, row.attempt = r.confidence or "", r.worker or "", r.attempt
            row.document = mask(r.document.title) if r.document else ""
            if r.texts and r.status == "ok":
                row.text = (f"/queries/{quote(record.query_id, safe='')}/steps/"
                            f"{quote(sid, safe='')}/text")
        rows.append(row)
    return rows


def query_view(record: RunRecord, flower_url: str | None = None) -> QueryView:
    mask = mask_identifiers if record.plan and record.plan.domain == "medical" else str
    results = {s.step_id: s for s in record.steps}
    producers = record.plan.producers() if record.plan is not None else {}
    steps = step_views(record, results, flower_url, mask)
    notes = []
    if record.answer is not None:
        for f in record.answer.footnotes:
            notes.append(FootnoteView(f.number, f.evidence, safe_href(f.evidence.url),
                                      f.variables, _quotes(record, results, producers,
                                                           f.evidence.doc_id, f.variables,
                                                           mask)))
    graph = None
    if record.plan is not None:
        graph = plan_graph(record.plan, {s.step_id: s.status for s in steps},
                           {s.step_id: s.action_id for s in steps})
    return QueryView(record, record.status in TERMINAL,
                     pieces(record.answer.text) if record.answer else [], notes, steps,
                     graph, timeline(record))

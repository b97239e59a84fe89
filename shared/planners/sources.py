"""The documents the heuristic planner answers from, as it ranks, fetches and cites
them: consumes a Document (and the search backend, to fetch it), produces its rank as a
source, the GET step that fetches exactly it, and the words an answer cites it with.
Used by the sentence path (heuristic.py) and the table path (table_plan.py) alike.
"""

from __future__ import annotations

from shared.errors import NoAnswer, ToolError
from shared.models import GetStep
from shared.search import Document, SearchBackend
from shared.search.matching import is_provisional
from shared.tools.get import run_get

NOTE = "(Heuristic answer: found by keyword search over the indexed documents, without an LLM.)"
PROVISIONAL_RANK = 3
SOURCE_RANK = {"official_report": 0, "press_release": 0, "regulation": 0, "filing": 0,
               "legal_notice": 0, "health_bulletin": 0, "product_doc": 0,
               "statistical_bulletin": 0, "news": 1, "summary": 2,
               "analyst_note": PROVISIONAL_RANK, "preview": PROVISIONAL_RANK,
               "draft": PROVISIONAL_RANK, "forecast": PROVISIONAL_RANK}
"""Which kinds of source answer first; an unknown kind ranks with news; provisional ones
(drafts, previews, analysts' notes, forecasts) never answer."""


def source_rank(doc: Document) -> int:
    if is_provisional(doc):
        return PROVISIONAL_RANK
    return SOURCE_RANK.get(doc.source_type or "", 1)


def get_step(doc: Document, backend: SearchBackend, step_id: str = "E1",
             var: str = "$DOC") -> tuple[GetStep, str]:
    """A GET step that fetches exactly `doc` (by title, then pinned to its period or
    publication date, then by URL), and the text it fetches."""
    attempts = [(doc.title, None), (doc.title, doc.period), (doc.title, doc.date)]
    attempts += [(doc.url, None)] if doc.url else []
    for source, scope in dict.fromkeys(attempts):
        step = GetStep(id=step_id, operation="GET", source=source, temporal_scope=scope,
                       output_var=var)
        try:
            output = run_get(step, backend)
        except ToolError:
            continue
        if output.document.doc_id == doc.id:
            return step, output.value
    raise NoAnswer(f"document {doc.title!r} answers the question but no GET fetches exactly "
                   "it (another document has the same title, period and URL)")


def period_and_date(doc: Document) -> str:
    period = f"period {doc.period}, " if doc.period else ""
    return period + (f"published {doc.date}" if doc.date else "publication date unknown")


def cited(title: str) -> str:
    """`title` quoted for an answer template (raw where it holds template marks)."""
    if any(mark in title for mark in ("{{", "{%", "{#")):
        title = f"{{% raw %}}{title}{{% endraw %}}"
    return f'"{title}"'

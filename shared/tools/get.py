"""The GET tool: consumes a GetStep and a search backend, produces a ToolOutput whose
value is the text of the document the step names (or raises ToolError).

With `top_k` above 1 the value is a list of texts, best first: the document `best`
finds, then up to top_k - 1 more from `search` under the same date filter, each of
which must hold at least half of the source's keywords (the share `best` asks of a
full-text hit). `documents` holds their evidence, `document` the first one's.

Error codes: `BAD_SCOPE` (temporal_scope unreadable), `NOT_FOUND` (no document fits),
`SEARCH_FAILED` (the search store cannot be read), `SEARCH_UNAVAILABLE` (the store is
down or slow right now: a TransientToolError, which the executor retries).
"""

from __future__ import annotations

from shared.errors import InputError, SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import GetStep
from shared.search import SearchBackend, format_scope, parse_scope, year_in
from shared.search.terms import keywords, stem, stems

from .base import ToolOutput


def run_get(step: GetStep, backend: SearchBackend) -> ToolOutput:
    """Fetch the document `step.source` names, within `step.temporal_scope` (or within
    the period the source itself names, e.g. "Q3 2023")."""
    explicit = step.temporal_scope is not None
    try:
        date_range = parse_scope(step.temporal_scope) if explicit else year_in(step.source)
    except InputError as e:
        raise ToolError("BAD_SCOPE", f"step {step.id}: temporal_scope: {e}") from None
    try:
        found = backend.best(step.source, date_range)
        if found is None and date_range is not None and not explicit:
            # A year in a title is a hint: an undated document of that title still counts.
            loose = backend.best(step.source)
            found = loose if loose is not None and loose[0].date is None else None
        empty = found is None and backend.count() == 0
        if found is None:
            raise ToolError("NOT_FOUND", _not_found(step, date_range, explicit, empty))
        doc, confidence = found
        if step.top_k == 1:
            return ToolOutput(value=doc.content, confidence=confidence, document=doc.evidence())
        docs = [doc] + _more(step, backend, date_range, doc.id)
    except SearchUnavailable as e:
        raise TransientToolError("SEARCH_UNAVAILABLE", f"step {step.id}: {e}") from None
    except StoreError as e:
        raise ToolError("SEARCH_FAILED", f"step {step.id}: {e}") from None
    evidence = [d.evidence() for d in docs]
    return ToolOutput(value=[d.content for d in docs], confidence=confidence,
                      document=evidence[0], documents=evidence)


def _more(step: GetStep, backend: SearchBackend, date_range, first_id: str) -> list:
    """Up to top_k - 1 further documents, best first, that hold half the source's words."""
    wanted = {stem(w) for w in keywords(step.source)}
    more = []
    for hit in backend.search(step.source, step.top_k + 1, date_range):
        found = wanted & stems(f"{hit.document.title} {hit.document.content}")
        if hit.document.id != first_id and 2 * len(found) >= len(wanted):
            more.append(hit.document)
    return more[: step.top_k - 1]


def _not_found(step: GetStep, date_range, explicit: bool, empty: bool) -> str:
    message = f"step {step.id}: no document matches source {step.source!r}"
    if empty:
        return message + "; the search index is empty: index documents with `chordal index FILE.jsonl`"
    if date_range is None:
        return message + "; check the title's spelling or index the document with `chordal index FILE.jsonl`"
    scope = format_scope(date_range)
    if explicit:
        return message + f" dated within {scope}; widen temporal_scope or remove it"
    return message + (
        f" dated within {scope} (the period the source names); set temporal_scope to a"
        " wider range, or check the document's date in the corpus"
    )

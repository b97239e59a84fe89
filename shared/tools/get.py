"""The GET tool: consumes a GetStep and a search backend, produces a ToolOutput whose
value is the text of the document the step names (or raises ToolError).

Error codes: `BAD_SCOPE` (temporal_scope unreadable), `NOT_FOUND` (no document fits),
`SEARCH_FAILED` (the search store cannot be read).
"""

from __future__ import annotations

from shared.errors import InputError, StoreError, ToolError
from shared.models import GetStep
from shared.search import SearchBackend, format_scope, parse_scope, year_in

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
    except StoreError as e:
        raise ToolError("SEARCH_FAILED", f"step {step.id}: {e}") from None
    if found is None:
        raise ToolError("NOT_FOUND", _not_found(step, date_range, explicit, empty))
    doc, confidence = found
    return ToolOutput(value=doc.content, confidence=confidence, document=doc.evidence())


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

"""The GET tool: consumes a GetStep and a search backend, produces a ToolOutput whose
value is the text of the document the step names, a DocumentText that knows its
document and version, so the run store keeps a reference (shared/stores/texts.py), or raises
ToolError.

Which document is the backend's `best`, i.e. the rules of `shared.search.matching`:
the title (or URL) names it, the period the source names is its period, a
`temporal_scope` is a window its period overlaps. The output's `note` says why the
document won and `candidates` lists every document considered with its verdict.

With `top_k` above 1 the value is a list of texts, best first: the documents that fit
by the same rules, at most top_k. `documents` holds their evidence, `document` the
first one's.

Error codes: `BAD_SCOPE` (temporal_scope unreadable), `NOT_FOUND` (no document fits; the
message names the nearest candidates, their periods and publication dates, and why each
was refused), `AMBIGUOUS` (two different documents fit equally; both are named),
`SEARCH_FAILED` (the search store cannot be read), `SEARCH_UNAVAILABLE` (the store is
down or slow right now: a TransientToolError, which the executor retries).
"""

from __future__ import annotations

from shared.errors import InputError, SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import GetStep
from shared.search import SearchBackend, parse_scope
from shared.stores.texts import document_text

from .base import Finding, ToolOutput


def run_get(step: GetStep, backend: SearchBackend) -> ToolOutput:
    """Fetch the document `step.source` names, within `step.temporal_scope`."""
    try:
        scope = parse_scope(step.temporal_scope) if step.temporal_scope else None
    except InputError as e:
        raise ToolError("BAD_SCOPE", f"step {step.id}: temporal_scope: {e}") from None
    try:
        match = backend.best(step.source, scope)
        empty = match.outcome == "not_found" and not match.candidates and backend.count() == 0
    except SearchUnavailable as e:
        raise TransientToolError("SEARCH_UNAVAILABLE", f"step {step.id}: {e}") from None
    except StoreError as e:
        raise ToolError("SEARCH_FAILED", f"step {step.id}: {e}") from None
    if match.outcome == "ambiguous" and step.top_k == 1:
        raise ToolError("AMBIGUOUS", f"step {step.id}: source {step.source!r}: {match.reason}",
                        candidates=match.candidates)
    if not match.found:
        raise ToolError("NOT_FOUND", _not_found(step, match.reason, empty),
                        candidates=match.candidates)
    found = match.found[: step.top_k]
    evidence = [f.document.evidence(f.confidence) for f in found]
    first = found[0]
    if step.top_k == 1:
        return ToolOutput(value=document_text(first.document), confidence=first.confidence,
                          document=evidence[0], note=match.reason, candidates=match.candidates)
    return ToolOutput(value=[document_text(f.document, i) for i, f in enumerate(found)],
                      confidence=first.confidence,
                      document=evidence[0], documents=evidence, note=match.reason,
                      candidates=match.candidates)


def _not_found(step: GetStep, reason: str, empty: bool) -> str:
    message = f"step {step.id}: {reason}"
    if empty:
        return (f"step {step.id}: no document matches source {step.source!r}; the search "
                "index is empty: index documents with `chordal index FILE.jsonl`")
    if step.temporal_scope:
        return message + "; name the document by its title, or widen temporal_scope"
    return message + ("; name the document by its title (and the period it is about), or "
                      "index it with `chordal index FILE.jsonl`")


def check_scope(step) -> list[Finding]:
    """`bad_scope` when a GET's or SEARCH's `temporal_scope` is not one it can read."""
    if step.temporal_scope is None:
        return []
    try:
        parse_scope(step.temporal_scope)
    except InputError as e:  # its message starts by quoting the scope
        why = str(e).removeprefix(f"date scope {step.temporal_scope!r} ")
        return [("bad_scope", f"step {step.id}'s temporal_scope {why}; or leave "
                 "temporal_scope out")]
    return []

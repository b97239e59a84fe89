"""SEARCH: consumes a SearchStep, the results of the variables its query names and a
search backend, produces the ranked snippets (a list of text, best first) with one
Evidence per snippet in `documents` (naming the page the snippet is on, for a document
with pages: the store ranks pages) and the first in `document`.

`$VAR`s in the query are replaced by their values as text before searching. Periods
follow GET's rules (shared/search/matching.py): a period the query names must be a hit's
period (or, for a document without one, contain or shortly precede its publication), a
title naming another period is left out, and a `temporal_scope` is a window the hit's
period lies in. Drafts, previews, analysts' notes and forecasts come after the documents
that report, so an EXTRACT over the snippets reads a reported figure first. Snippets lose the backend's `**word**` highlighting, so later patterns
see the document's own words.

ToolError codes: BAD_SCOPE, NOT_FOUND (no hit; names the query), SEARCH_FAILED,
SEARCH_UNAVAILABLE (transient: retried by the executor), MISSING_INPUT.
"""

from __future__ import annotations

import regex

from shared.errors import InputError, SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import SearchStep, StepResult
from shared.search import SearchBackend, format_scope, parse_scope
from shared.search.fit import period_fits, window_for
from shared.search.matching import is_provisional
from shared.search.periods import named_period

from .base import ToolOutput
from .variables import substitute

CONFIDENCE = "search_rank"
"""Confidence of a SEARCH value: snippets ranked by the backend's relevance score."""
OVERFETCH = 3
"""Hits asked of the backend per hit wanted, since the title rule drops some after it."""
NEAREST = 3

_HIGHLIGHT = regex.compile(r"\*\*(.+?)\*\*")


def run_search(step: SearchStep, inputs: dict[str, StepResult],
               backend: SearchBackend) -> ToolOutput:
    """The snippets of the `step.top_k` documents that best match `step.query`."""
    query, used = substitute(step.query, inputs, step.id)
    try:
        scope = parse_scope(step.temporal_scope) if step.temporal_scope else None
    except InputError as e:
        raise ToolError("BAD_SCOPE", f"step {step.id}: temporal_scope: {e}") from None
    named = named_period(query)
    lag = backend.lag_days
    try:
        window = window_for(named, lag) or window_for(scope, lag)
        hits = [h for h in backend.search(query, step.top_k * OVERFETCH, window)
                if period_fits(h.document, named, scope, lag) is None]
        # drafts, previews and forecasts after what was reported, each group by relevance
        hits = sorted(hits, key=lambda h: is_provisional(h.document))[: step.top_k]
        nearest = [] if hits else backend.search(query, NEAREST, None)
    except SearchUnavailable as e:
        raise TransientToolError("SEARCH_UNAVAILABLE", f"step {step.id}: {e}") from None
    except StoreError as e:
        raise ToolError("SEARCH_FAILED", f"step {step.id}: {e}") from None
    if not hits:
        shown = repr(query) if query == step.query else f"{query!r} (from {step.query!r})"
        period = " and ".join(format_scope(p) for p in (named, scope) if p)
        scope_text = f" about {period}" if period else ""
        closest = "; ".join(
            f"{h.document.title!r} (period {h.document.period or 'none'}, published "
            f"{h.document.date or 'undated'}): "
            f"{period_fits(h.document, named, scope, lag) or 'fits'}" for h in nearest)
        raise ToolError("NOT_FOUND", f"step {step.id}: no document matches query {shown}"
                        f"{scope_text}" + (f"; closest: {closest}" if closest else "")
                        + "; use fewer or other keywords, widen temporal_scope, or index "
                        "documents with `chordal index FILE.jsonl`")
    evidence = [hit.document.evidence(page=hit.page) for hit in hits]
    return ToolOutput(value=[_HIGHLIGHT.sub(r"\1", hit.snippet) for hit in hits],
                      confidence=CONFIDENCE, document=evidence[0], documents=evidence,
                      inputs=[inputs[name].action_id for name in dict.fromkeys(used)])

"""SEARCH: consumes a SearchStep, the results of the variables its query names and a
search backend, produces the ranked snippets (a list of text, best first) with one
Evidence per snippet in `documents` and the first in `document`.

`$VAR`s in the query are replaced by their values as text before searching; a
`temporal_scope` keeps only documents dated within it. Snippets lose the backend's
`**word**` highlighting, so later patterns see the document's own words.

ToolError codes: BAD_SCOPE, NOT_FOUND (no hit; names the query), SEARCH_FAILED,
SEARCH_UNAVAILABLE (transient: retried by the executor), MISSING_INPUT.
"""

from __future__ import annotations

import regex

from shared.errors import InputError, SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import SearchStep, StepResult
from shared.search import SearchBackend, parse_scope

from .base import ToolOutput
from .variables import substitute

CONFIDENCE = "search_rank"
"""Confidence of a SEARCH value: snippets ranked by the backend's relevance score."""

_HIGHLIGHT = regex.compile(r"\*\*(.+?)\*\*")


def run_search(step: SearchStep, inputs: dict[str, StepResult],
               backend: SearchBackend) -> ToolOutput:
    """The snippets of the `step.top_k` documents that best match `step.query`."""
    query, used = substitute(step.query, inputs, step.id)
    try:
        date_range = parse_scope(step.temporal_scope) if step.temporal_scope else None
    except InputError as e:
        raise ToolError("BAD_SCOPE", f"step {step.id}: temporal_scope: {e}") from None
    try:
        hits = backend.search(query, step.top_k, date_range)
    except SearchUnavailable as e:
        raise TransientToolError("SEARCH_UNAVAILABLE", f"step {step.id}: {e}") from None
    except StoreError as e:
        raise ToolError("SEARCH_FAILED", f"step {step.id}: {e}") from None
    if not hits:
        shown = repr(query) if query == step.query else f"{query!r} (from {step.query!r})"
        scope = f" dated within {step.temporal_scope}" if step.temporal_scope else ""
        raise ToolError("NOT_FOUND", f"step {step.id}: no document matches query {shown}"
                        f"{scope}; use fewer or other keywords, widen temporal_scope, or index "
                        "documents with `chordal index FILE.jsonl`")
    evidence = [hit.document.evidence() for hit in hits]
    return ToolOutput(value=[_HIGHLIGHT.sub(r"\1", hit.snippet) for hit in hits],
                      confidence=CONFIDENCE, document=evidence[0], documents=evidence,
                      inputs=[inputs[name].action_id for name in dict.fromkeys(used)])

"""EXTRACT: consumes a step's pattern and a fetched document's text, produces the string
the pattern's capture group 1 matched (confidence `pattern`), or the step's fallback
(confidence `fallback`), or a ToolError.

Matching uses the `regex` module with a timeout, so a catastrophic pattern such as
`(a+)+$` fails the step (PATTERN_TIMEOUT) instead of hanging the worker. Flags: IGNORECASE
(LLM-written patterns rarely get the document's capitalization right) but not DOTALL, so
`.*?` stays within one line and cannot pair a label with a number paragraphs away.

ToolError codes: NO_MATCH (and no fallback), PATTERN_TIMEOUT, BAD_PATTERN (does not
compile, or has no capture group), NOT_A_DOCUMENT (the source holds no text).
"""

from __future__ import annotations

import regex

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.tools.base import ToolOutput

FLAGS = regex.IGNORECASE
DEFAULT_TIMEOUT_S = 1.0


def run_extract(step: ExtractStep, text: str, document: Evidence | None,
                timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolOutput:
    """Group 1 of the first match of `step.pattern` in `text`, stripped.

    A match whose group 1 is empty or did not take part counts as no match. The value
    carries `document` as its evidence; a fallback value carries none, since the
    document did not state it.
    """
    if not isinstance(text, str):
        raise ToolError("NOT_A_DOCUMENT", f"EXTRACT step {step.id} reads {step.source}, which "
                        f"holds {type(text).__name__}, not document text; point source at "
                        "the output variable of a GET step")
    try:
        compiled = regex.compile(step.pattern, FLAGS)
    except (regex.error, OverflowError, ValueError) as e:
        raise ToolError("BAD_PATTERN", f"pattern `{step.pattern}` does not compile ({e}); "
                        "fix the regular expression") from None
    if compiled.groups < 1:
        raise ToolError("BAD_PATTERN", f"pattern `{step.pattern}` has no capture group; "
                        "wrap the value to extract in ( ), e.g. 'yield rate.*?(\\d+\\.\\d+)%'")
    try:
        match = compiled.search(text, timeout=timeout_s)
    except TimeoutError:
        raise ToolError("PATTERN_TIMEOUT", f"pattern `{step.pattern}` ran longer than "
                        f"{timeout_s:g} s on {_where(document, text)}; avoid nested "
                        "repetition like (a+)+ and prefer lazy, anchored parts like "
                        "'label.{0,80}?(\\d+)'") from None
    value = (match.group(1) or "").strip() if match else ""
    if value:
        return ToolOutput(value=value, confidence="pattern", document=document)
    if step.fallback is not None:
        return ToolOutput(value=step.fallback, confidence="fallback")
    raise ToolError("NO_MATCH", f"pattern `{step.pattern}` found nothing in "
                    f"{_where(document, text)}; loosen it (fewer literal words, \\s+ "
                    "between words, optional units) or add a \"fallback\" value to the step")


def _where(document: Evidence | None, text: str) -> str:
    title = f"{document.title!r} " if document else "the document "
    return f"{title}({len(text):,} characters)"

"""EXTRACT: consumes a step's pattern and a fetched document's text (or the texts of
several documents, best first, from GET with top_k or SEARCH), produces one string.

Layers, each tried over every text before the next layer is tried:
1. the plan's pattern: group 1 of its first match, stripped (confidence `pattern`);
2. only with `step.quantity`: the built-in pattern for that quantity
   (shared/tools/patterns.py), in the sentences holding the pattern's literal words,
   the match nearest those words (confidence `library:<quantity>`);
3. only with `step.quantity`: the nearest number (or date, for `quantity="date"`) in
   those sentences (confidence `entity:number` / `entity:date`);
4. the step's `fallback` (confidence `fallback`, no evidence: no document stated it).
A value carries the document of the text it came from and `quote`, the sentence of it
that holds the value (shared/tools/entities.py: `sentence_around`); `note` names the
layer when it is not the plan's pattern. Every regex runs under a timeout: the plan's
pattern shares one `timeout_s` budget over all texts, the built-in layers another.

ToolError codes: NO_MATCH (and no fallback), PATTERN_TIMEOUT, BAD_PATTERN (does not
compile, or has no capture group), NOT_A_DOCUMENT (the source holds no text).
"""

from __future__ import annotations

import time

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.tools.base import ToolOutput

from . import entities
from .patterns import (DEFAULT_TIMEOUT_S, FLAGS, compile_pattern, literal_words, search,
                       timeout_error)

__all__ = ["DEFAULT_TIMEOUT_S", "FLAGS", "run_extract"]


def run_extract(step: ExtractStep, text: str | list[str],
                document: Evidence | None | list[Evidence | None],
                timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolOutput:
    """The value `step` extracts from `text`, a document's text or a list of them with
    a parallel list of their Evidence in `document`."""
    texts = _texts(step, text)
    documents = list(document) if isinstance(document, list) else [document]
    documents += [None] * (len(texts) - len(documents))
    compiled = compile_pattern(step.pattern, "pattern", groups=1)
    deadline = time.monotonic() + timeout_s
    for body, doc in zip(texts, documents):
        match = search(compiled, body, timeout_s, _where([doc], [body]),
                       remaining_s=deadline - time.monotonic())
        value = (match.group(1) or "").strip() if match else ""
        if value:
            quote = entities.sentence_around(body, match.start(1), match.end(1))
            return ToolOutput(value=value, confidence="pattern", document=doc, quote=quote)
    words = literal_words(step.pattern)
    if step.quantity and words:
        deadline = time.monotonic() + timeout_s  # the built-in layers get their own budget
        for layer in ("library", "entity"):
            for body, doc in zip(texts, documents):
                try:
                    found = _in_sentences(layer, step.quantity, body, words, deadline)
                except TimeoutError:
                    raise timeout_error(f"the built-in {step.quantity} patterns", timeout_s,
                                        _where([doc], [body]), "set a \"fallback\", or "
                                        "point the step at a shorter document") from None
                if found:
                    value, confidence, sentence = found
                    note = (f"pattern `{step.pattern}` found nothing; the {confidence} layer "
                            f"took {value!r} from: {_clip(sentence)}")
                    at = max(sentence.find(value), 0)
                    quote = entities.sentence_around(sentence, at, at + len(value))
                    return ToolOutput(value=value, confidence=confidence, document=doc,
                                      note=note, quote=quote)
    if step.fallback is not None:
        return ToolOutput(value=step.fallback, confidence="fallback",
                          note=f"no layer found a value in {_where(documents, texts)}; "
                               "used the step's fallback")
    if not step.quantity:
        hint = (" or set \"quantity\" (percent, money, date, number, article) to let "
                "built-in patterns try")
    else:
        hint = "" if words else (" or give the pattern the label's words (built-in patterns "
                                 "search only the sentences holding them)")
    raise ToolError("NO_MATCH", f"pattern `{step.pattern}` found nothing in "
                    f"{_where(documents, texts)}; loosen it (fewer literal words, \\s+ "
                    f"between words, optional units){hint} or add a \"fallback\" value to the step")


def _in_sentences(layer: str, quantity: str, text: str, words: list[str],
                  deadline: float) -> tuple[str, str, str] | None:
    """(value, confidence, sentence) of the first keyword sentence where `layer` finds one;
    TimeoutError past `deadline` (a time.monotonic() value)."""
    kind = "date" if quantity == "date" else "number"

    def left() -> float:
        return max(deadline - time.monotonic(), 0.001)

    for sentence in entities.keyword_sentences(text, words, left()):
        if layer == "library":
            candidates = entities.library_matches(quantity, sentence, left())
        else:
            finder = entities.find_dates if kind == "date" else entities.find_numbers
            candidates = finder(sentence, left())
        value = entities.nearest(candidates, sentence, words, left())
        if value:
            confidence = f"library:{quantity}" if layer == "library" else f"entity:{kind}"
            return value, confidence, sentence
    return None


def _texts(step: ExtractStep, text: object) -> list[str]:
    items = text if isinstance(text, list) else [text]
    bad = [t for t in items if not isinstance(t, str)]
    if bad:
        raise ToolError("NOT_A_DOCUMENT", f"EXTRACT step {step.id} reads {step.source}, which "
                        f"holds {type(bad[0]).__name__}, not document text; point source at "
                        "the output variable of a GET or SEARCH step")
    return items


def _where(documents: list[Evidence | None], texts: list[str]) -> str:
    size = f"({sum(len(t) for t in texts):,} characters)"
    titles = [repr(d.title) for d in documents if d is not None]
    if len(texts) == 1:
        return f"{titles[0] if titles else 'the document'} {size}"
    if not texts:
        return "an empty list of documents"
    shown = ", ".join(titles[:3]) + (f" and {len(titles) - 3} more" if len(titles) > 3 else "")
    return f"{len(texts)} texts{' from ' + shown if shown else ''} {size}"


def _clip(sentence: str, limit: int = 160) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"

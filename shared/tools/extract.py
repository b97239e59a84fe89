"""EXTRACT: consumes a step's pattern and a fetched document's text (or the texts of
several documents, best first, from GET with top_k or SEARCH), produces one value: a
string, typed (`quantity`: kind, unit, scale) when it is a figure.

Layers, each tried over every text before the next layer is tried:
1. the plan's pattern: group 1 of its first match, stripped (confidence `pattern`);
2. only with `step.quantity`: the built-in pattern for that quantity
   (shared/tools/patterns.py), in the sentences holding the pattern's literal words,
   the match nearest those words (confidence `library:<quantity>`);
3. only with `step.quantity`: the nearest number (or date, for `quantity="date"`) in
   those sentences (confidence `entity:number` / `entity:date`);
4. the step's `fallback` (confidence `fallback`, no evidence: no document stated it).

Every capture is judged in its document before it is taken (shared/tools/captures.py):
what the step asks for is its `quantity`, else an amount when the pattern's group reads
a figure; a capture with no digit, part of a longer figure or word, a page number, a
footnote mark, a date fragment, a year where an amount is asked or a figure of another
kind is not a value. The layer then moves on: the pattern is tried again from the same
place with that capture set aside (up to `MAX_PASSED_OVER` times per text), a built-in
layer takes the next nearest candidate. A value's `quantity` carries its unit and scale
from the text around it ("$5.4 billion", a table's "(In thousands)").

A value carries the document of the text it came from, with the page it is on when the
text has pages (shared/search/document.py: `page_at`), and `quote`, the sentence of it
that holds the value (shared/tools/entities.py: `sentence_around`); `note` names the
layer when it is not the plan's pattern, and the captures passed over. Every regex runs
under a timeout: the plan's pattern shares one `timeout_s` budget over all texts, the
built-in layers another.

ToolError codes: NO_MATCH (and no fallback), NOT_A_VALUE (what the layers captured was
not a value, and no fallback: the message says what and why), PATTERN_TIMEOUT,
BAD_PATTERN (does not compile, or has no capture group), NOT_A_DOCUMENT (the source
holds no text).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.models.quantity import KINDS
from shared.search.document import page_at
from shared.tools.base import Finding, ToolOutput

from . import entities
from .capture_shape import capture_shape
from .captures import Asked, Verdict, asked_for, judge
from .cells.request import check_row
from .patterns import (DEFAULT_TIMEOUT_S, FLAGS, check_pattern, compile_pattern,
                       literal_words, search, timeout_error)
from shared.tables.quantities import parse_quantity

__all__ = ["DEFAULT_TIMEOUT_S", "FLAGS", "MAX_PASSED_OVER", "check_extract", "run_extract"]

MAX_PASSED_OVER = 20
"""Captures that are not values a layer passes over in one text before it gives up on it."""
_SET_ASIDE = "\x00"
"""What a capture passed over is replaced with before the pattern is tried again."""


@dataclass(frozen=True)
class _PassedOver:
    capture: str
    why: str
    where: str


def run_extract(step: ExtractStep, text: str | list[str],
                document: Evidence | None | list[Evidence | None],
                timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolOutput:
    """The value `step` extracts from `text`, a document's text or a list of them with
    a parallel list of their Evidence in `document`."""
    texts = _texts(step, text)
    documents = list(document) if isinstance(document, list) else [document]
    documents += [None] * (len(texts) - len(documents))
    compiled = compile_pattern(step.pattern, "pattern", groups=1)
    asked = asked_for(step.quantity, step.pattern)
    passed: list[_PassedOver] = []
    deadline = time.monotonic() + timeout_s
    for body, doc in zip(texts, documents):
        found = _by_pattern(compiled, body, doc, asked, passed, timeout_s, deadline)
        if found is not None:
            return found
    words = literal_words(step.pattern)
    if step.quantity and words:
        deadline = time.monotonic() + timeout_s  # the built-in layers get their own budget
        for layer in ("library", "entity"):
            for body, doc in zip(texts, documents):
                try:
                    found = _in_sentences(layer, step.quantity, body, doc, words, asked,
                                          passed, deadline)
                except TimeoutError:
                    raise timeout_error(f"the built-in {step.quantity} patterns", timeout_s,
                                        _where([doc], [body]), "set a \"fallback\", or "
                                        "point the step at a shorter document") from None
                if found:
                    start, end, value, confidence, verdict = found
                    quote = entities.sentence_around(body, start, end)
                    note = (f"pattern `{step.pattern}` found nothing{_passed(passed)}; the "
                            f"{confidence} layer took {value!r} from: {_clip(quote)}")
                    return ToolOutput(value=value, confidence=confidence,
                                      document=_on_page(doc, body, start), note=note,
                                      quote=quote, quantity=verdict.quantity)
    if step.fallback is not None:
        return ToolOutput(value=step.fallback, confidence="fallback",
                          note=f"no layer found a value in {_where(documents, texts)}"
                               f"{_passed(passed)}; used the step's fallback")
    if passed:
        raise ToolError("NOT_A_VALUE", f"pattern `{step.pattern}` found no value in "
                        f"{_where(documents, texts)}: what it captured is not "
                        f"{_WANTED[asked]}: {_listed(passed)}; capture the figure itself "
                        "(start the group with a digit, e.g. (\\d[\\d,]*(?:\\.\\d+)?)), "
                        "name the line item more closely, or add a \"fallback\" value")
    if not step.quantity:
        hint = (" or set \"quantity\" (percent, money, date, number, article) to let "
                "built-in patterns try")
    else:
        hint = "" if words else (" or give the pattern the label's words (built-in patterns "
                                 "search only the sentences holding them)")
    raise ToolError("NO_MATCH", f"pattern `{step.pattern}` found nothing in "
                    f"{_where(documents, texts)}; loosen it (fewer literal words, \\s+ "
                    f"between words, optional units){hint} or add a \"fallback\" value to the step")


_WANTED = {"money": "an amount of money", "percent": "a percent", "number": "a number",
           "date": "a date", "amount": "a figure", "year": "a year", "text": "a value"}


def _by_pattern(compiled, body: str, doc: Evidence | None, asked: Asked,
                passed: list[_PassedOver], timeout_s: float, deadline: float
                ) -> ToolOutput | None:
    """The plan's pattern over one text: its first capture that is a value, the captures
    before it set aside one at a time; None when there is none."""
    searched, pos, set_aside = body, 0, set()
    for _ in range(MAX_PASSED_OVER + 1):
        match = search(compiled, searched, timeout_s, _where([doc], [body]),
                       remaining_s=deadline - time.monotonic(), pos=pos)
        if match is None:
            return None
        start, end = _stripped(body, *match.span(1))
        if start == end or (start, end) in set_aside:
            return None  # the group captured nothing, or only what was set aside
        verdict = judge(body, start, end, asked)
        if verdict.ok:
            if verdict.quantity is not None:  # "2,673,000," is the figure and a comma
                end = start + len(body[start:end].rstrip(",.;:"))
            value = body[start:end]
            note = f"took {value!r}{_passed(passed)}" if passed else None
            return ToolOutput(value=value, confidence="pattern",
                              document=_on_page(doc, body, start), note=note,
                              quote=entities.sentence_around(body, start, end),
                              quantity=verdict.quantity)
        passed.append(_PassedOver(body[start:end], verdict.not_a_value,
                                  _where_on_page(doc, body, start)))
        set_aside.add((start, end))
        searched = searched[:start] + _SET_ASIDE * (end - start) + searched[end:]
        pos = match.start()
    return None


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _in_sentences(layer: str, quantity: str, text: str, doc: Evidence | None,
                  words: list[str], asked: Asked, passed: list[_PassedOver], deadline: float
                  ) -> tuple[int, int, str, str, Verdict] | None:
    """(start, end, value, confidence, verdict) of the value `layer` finds nearest the
    words in the first keyword sentence that holds one; TimeoutError past `deadline` (a
    time.monotonic() value)."""
    kind = "date" if quantity == "date" else "number"
    confidence = f"library:{quantity}" if layer == "library" else f"entity:{kind}"

    def left() -> float:
        return max(deadline - time.monotonic(), 0.001)

    for at, stop in entities.keyword_spans(text, words, left()):
        sentence = text[at:stop]
        if layer == "library":
            candidates = entities.library_matches(quantity, sentence, left())
        else:
            finder = entities.find_dates if kind == "date" else entities.find_numbers
            candidates = finder(sentence, left())
        while candidates:
            best = entities.nearest_span(candidates, sentence, words, left())
            if best is None:
                break
            start, end = _stripped(text, at + best[0], at + best[1])
            if text[start:end] != best[2]:  # a number word ("twelve"): its figure is typed
                typed = parse_quantity(best[2], kind=asked if asked in KINDS else None)
                return start, end, best[2], confidence, Verdict(quantity=typed)
            verdict = judge(text, start, end, asked)
            if verdict.ok:
                return start, end, best[2], confidence, verdict
            if len(passed) < MAX_PASSED_OVER:
                passed.append(_PassedOver(best[2], verdict.not_a_value,
                                          _where_on_page(doc, text, start)))
            candidates = [c for c in candidates if c is not best]
    return None


def _on_page(doc: Evidence | None, text: str, offset: int) -> Evidence | None:
    """`doc` naming the page of `text` that `offset` is on, when the text has pages."""
    page = page_at(text, offset) if doc is not None else None
    return doc if page is None else doc.model_copy(update={"page": page})


def _where_on_page(doc: Evidence | None, text: str, offset: int) -> str:
    page = page_at(text, offset)
    title = repr(doc.title) if doc is not None else "the document"
    return f"{title}{f' page {page}' if page is not None else ''}"


def _listed(passed: list[_PassedOver], limit: int = 4) -> str:
    shown = [f"{_clip(p.capture, 40)!r} ({p.where}) {p.why}" for p in passed[:limit]]
    more = len(passed) - limit
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _passed(passed: list[_PassedOver]) -> str:
    return f"; passed over {_listed(passed, 2)}" if passed else ""


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


def check_extract(step: ExtractStep) -> list[Finding]:
    """A pattern with one capture group, whose group reads a figure only with a digit
    (capture_shape.py: `([\\d,]+)` captures a lone comma, `number_group`); a row
    (cells/request.py)."""
    found: list[Finding] = []
    if step.pattern is not None:
        found += check_pattern(step.id, "pattern", step.pattern, groups=1) or \
            _number_group(step.id, step.pattern)
    return found + check_row(step)


def _number_group(step_id: str, pattern: str) -> list[Finding]:
    shape = capture_shape(pattern, FLAGS)
    if shape is None or not shape.reads_figure or not shape.digitless:
        return []
    return [("number_group", f"step {step_id}'s pattern: its capture group reads a figure but "
             "can match text without a digit (a lone comma, a period, or nothing), which "
             "EXTRACT would not take for a value; make the group start with a digit, like "
             "(\\d[\\d,]*(?:\\.\\d+)?) for 1,234.5, or (\\d+(?:\\.\\d+)?) for 91.7")]

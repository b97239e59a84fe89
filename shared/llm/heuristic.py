"""The heuristic planner, used when no LLM is configured: consumes a question and a
search backend, produces a two-step Plan (GET the best-matching document → EXTRACT the
value or sentence that answers the question).

Deterministic keyword matching: the top BM25 document, its sentence sharing the most
question words, and, when the question asks for a quantity or a date, the value in that
sentence nearest the question's words. The EXTRACT pattern is built from the words just
before the value and checked against the document before the plan is returned.
"""

from __future__ import annotations

import re

from shared.errors import InputError, ToolError
from shared.models import ExtractStep, GetStep, Plan
from shared.search import Document, SearchBackend, format_scope, year_in
from shared.search.terms import keywords, stem, stems, words
from shared.tools.get import run_get

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
VALUE_PATTERNS = {
    "date": rf"\d{{4}}-\d{{2}}-\d{{2}}|{_MONTH}\s+\d{{1,2}},\s+\d{{4}}|\d{{1,2}}\s+{_MONTH}\s+\d{{4}}",
    "percent": rf"(?<![\w.,-]){_NUM}\s?(?:%|percent\b)",
    "money": rf"[$€£]\s?{_NUM}(?:\s(?:billion|million|thousand)\b)?",
    "number": rf"(?<![\w.,$€£/-]){_NUM}(?![\w%]|[.,/-]\d|\s%)(?:\s(?:billion|million|thousand)\b)?",
}
"""Generic captures (no groups of their own) for each kind of value a question asks for."""

QUESTION_KINDS = (
    ("date", re.compile(r"\b(when|what date|which date|what day|deadline|by when)\b", re.I)),
    ("percent", re.compile(r"\b(percent|percentage|rate|share|proportion|margin|yield|growth)\b|%", re.I)),
    ("money", re.compile(
        r"\b(how much|revenue|sales|income|profit|cost|price|spend|spent|fine|penalty|fund|budget|paid)\b", re.I)),
    ("number", re.compile(r"\b(how many|number|count|total|amount|quantity|how long|how old)\b", re.I)),
)
"""Which kinds of value a question asks for, in order of preference."""

TITLE_WORD_WEIGHT = 0.1
"""Weight of a question word that is also in the title: every sentence shares it."""
NOTE = "(Heuristic answer: found by keyword search over the indexed documents, without an LLM.)"


def heuristic_plan(question: str, backend: SearchBackend) -> Plan:
    """A GET → EXTRACT plan answering `question` from the best-matching document;
    InputError when no indexed document matches."""
    if not keywords(question):
        raise InputError(f"question {question!r} has no words to search for; ask about a named thing")
    period = year_in(question)
    hits = backend.search(question, 1, period) if period else []
    scope = format_scope(period) if hits else None
    hits = hits or backend.search(question, 1)
    if not hits:
        raise InputError(
            f"no document matches the question {question!r}; index documents with "
            "`chordal index FILE.jsonl` or configure an LLM planner"
        )
    get, content = _get_step(hits[0].document, scope, backend)
    title_stems = stems(get.source)
    weight = {s: TITLE_WORD_WEIGHT if s in title_stems else 1.0 for s in map(stem, keywords(question))}
    kinds = [kind for kind, pattern in QUESTION_KINDS if pattern.search(question)]
    start, end = _best_sentence(content, weight, kinds)
    for kind in kinds:
        found = _value_pattern(content, start, end, kind, weight, question)
        if found:
            extract = ExtractStep(id="E2", operation="EXTRACT", source="$DOC", pattern=found, output_var="$VALUE")
            answer = f"{{{{ VALUE }}}}, according to {_cited(get)}. {NOTE}"
            return Plan(steps=[get, extract], answer=answer, planner="heuristic")
    extract = ExtractStep(
        id="E2", operation="EXTRACT", source="$DOC",
        pattern=_sentence_pattern(content, start, end), output_var="$SENTENCE",
    )
    answer = f"{_cited(get)} says: {{{{ SENTENCE }}}} {NOTE}"
    return Plan(steps=[get, extract], answer=answer, planner="heuristic")


def _get_step(doc: Document, scope: str | None, backend: SearchBackend) -> tuple[GetStep, str]:
    """A GET step that fetches `doc` by its exact title, and the content it fetches."""
    last: ToolError | None = None
    fetched = None
    for attempt in dict.fromkeys([scope, doc.date]):  # a title's year may not cover its date
        step = GetStep(id="E1", operation="GET", source=doc.title, temporal_scope=attempt, output_var="$DOC")
        try:
            output = run_get(step, backend)
        except ToolError as e:
            last = e
            continue
        fetched = fetched or (step, output.value)
        if output.document.doc_id == doc.id:
            return step, output.value
    if fetched is None:
        raise InputError(f"document {doc.title!r} matches the question but cannot be fetched: {last}")
    return fetched


def _cited(get: GetStep) -> str:
    title = get.source
    if any(mark in title for mark in ("{{", "{%", "{#")):
        title = f"{{% raw %}}{title}{{% endraw %}}"
    return f'"{title}"'


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in [*re.finditer(r"(?<=[.!?])\s+", text), None]:
        stop = m.start() if m else len(text)
        chunk = text[start:stop]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            spans.append((start + lead, start + len(chunk.rstrip())))
        start = m.end() if m else stop
    return spans


def _overlap(text: str, weight: dict[str, float]) -> float:
    return sum(weight.get(s, 0.0) for s in {stem(w) for w in words(text)})


def _best_sentence(content: str, weight: dict[str, float], kinds: list[str]) -> tuple[int, int]:
    def score(span: tuple[int, int]) -> float:
        sentence = content[span[0]:span[1]]
        has_value = any(re.search(VALUE_PATTERNS[k], sentence) for k in kinds)
        return _overlap(sentence, weight) + (0.5 if has_value else 0.0)

    spans = _sentences(content)
    return max(spans, key=lambda span: (score(span), -span[0]))


def _value_pattern(content: str, start: int, end: int, kind: str, weight, question: str) -> str | None:
    """A pattern capturing the value of `kind` in content[start:end] that sits nearest
    the question's words; None when the sentence has no such value."""
    sentence = content[start:end]
    asked = set(words(question))
    dates = [m.span() for m in re.finditer(VALUE_PATTERNS["date"], sentence)]
    best, best_score = None, None
    for m in re.finditer(VALUE_PATTERNS[kind], sentence):
        if set(words(m.group())) <= asked:  # "week 48" in the question is not the answer
            continue
        if kind != "date" and any(a <= m.start() < b for a, b in dates):
            continue
        context = " ".join(sentence[: m.start()].split()[-6:] + sentence[m.end():].split()[:4])
        score = _overlap(context, weight)
        if best_score is None or score > best_score:
            best, best_score = m, score
    if best is None:
        return None
    value, at = best.group(), start + best.start()
    before = content[start:at].split()
    after = content[at + len(value):end].split()
    for n in range(3, 9):  # a few words before the value; more until it is unambiguous
        prefix = " ".join(before[-n:]) + (" " if before and content[at - 1].isspace() else "")
        suffix = "" if before else " " + " ".join(after[:n])
        pattern = _literal(prefix) + f"({VALUE_PATTERNS[kind]})" + _literal(suffix)
        if _captures(pattern, content) == value:
            return pattern
    return None


def _sentence_pattern(content: str, start: int, end: int) -> str:
    """A pattern whose one group captures the sentence content[start:end]."""
    sentence = content[start:end]
    tokens = sentence.split()
    for n in range(6, len(tokens)):
        if sentence[-1] not in ".!?":
            break
        pattern = "(" + _literal(" ".join(tokens[:n])) + r"[\s\S]*?[.!?])(?=\s|$)"
        if _captures(pattern, content) == sentence:
            return pattern
    return "(" + _literal(sentence) + ")"


def _captures(pattern: str, content: str) -> str | None:
    """What `pattern` captures in `content`, if it captures the same with and without
    IGNORECASE (the EXTRACT tool ignores case); None otherwise."""
    found = [re.search(pattern, content, flags) for flags in (0, re.IGNORECASE)]
    values = {m.group(1) if m else None for m in found}
    return values.pop() if len(values) == 1 else None


def _literal(text: str) -> str:
    """`text` as a regex: escaped, any run of whitespace matching any other."""
    return "".join(r"\s+" if part.isspace() else re.escape(part) for part in re.split(r"(\s+)", text))

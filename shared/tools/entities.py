"""A rule-based entity finder: consumes document text and the keywords of a plan's pattern,
produces the sentences that speak about those keywords and, within them, the numbers,
dates or library matches nearest to the keywords. EXTRACT uses it for its library and
entity layers; VALIDATE uses `read_date`.

Every function takes `timeout` (seconds, for each regex call; the `regex` module raises
TimeoutError past it) so a huge text cannot stall a worker.

A sentence qualifies when it holds the most keywords of any sentence and all of them
(two thirds of more than two: the share the heuristic planner asks of a sentence). Numbers are numerals as
documents write them (`91.7%`, `$23.35 billion`, `435,059`); number words (`twelve`,
`ninety-one`) count only in a sentence without numerals. Dates are ISO dates, written
dates, months, quarters and years; a number inside a date is not a number.
"""

from __future__ import annotations

from datetime import date

import regex

from shared.search.terms import IRREGULAR, stem

from .figures import not_alone
from .patterns import FLAGS, LIBRARY

Span = tuple[int, int, str]
"""Start, end and value of one candidate within a sentence."""

_SENTENCE_END = regex.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = regex.compile(r"[^\W_]+")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE_FORMS = [
    LIBRARY["date"],
    regex.compile(rf"(?<!\w)({_MONTH}\s+(?:19|20)\d\d)(?!\d)", FLAGS),
    regex.compile(r"(?<!\w)((?:Q[1-4]|H[12])\s*(?:FY\s*)?(?:19|20)\d\d|(?:first|second|third"
                  r"|fourth)\s+quarter\s+(?:of\s+)?(?:19|20)\d\d|(?:19|20)\d\d-(?:0[1-9]|1[0-2])"
                  r")(?!\d)", FLAGS),
    regex.compile(r"(?<![\w.,$€£¥₹])((?:19|20)\d\d)(?![\w%]|[.,]\d)", FLAGS),
]
_NUMERAL = regex.compile(
    r"(?<![\w.,])([-−]?[$€£¥₹]?\s?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?:thousand|million|billion|trillion|mn|bn|tn|[kmb])\b)?\s?%?)(?![\d])", FLAGS)
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORD = regex.compile(rf"\b(?:({'|'.join(_TENS)})(?:[-\s]({'|'.join(_UNITS[1:10])}))?"
                             rf"|({'|'.join(_UNITS)}))\b", FLAGS)


_POINT = regex.compile(r"\b(?:point|hundred|thousand|million|billion)\b", FLAGS)


def keyword_sentences(text: str, words: list[str], timeout: float | None = None) -> list[str]:
    """The sentences of `text`, in order, that hold the most of `words` (all of them, two
    thirds of more than two)."""
    return [text[start:end] for start, end in keyword_spans(text, words, timeout)]


def keyword_spans(text: str, words: list[str], timeout: float | None = None
                  ) -> list[tuple[int, int]]:
    """Where in `text` the sentences `keyword_sentences` gives are (start, end, stripped).

    Only the sentences around the keywords' occurrences are read (a sentence ends at a
    line break or after `.!?;`), so a long text costs one scan for the keywords."""
    wanted = {stem(w.lower()) for w in words}
    if not wanted:
        return []
    forms = wanted | {word for word, verb in IRREGULAR.items() if stem(verb) in wanted}
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: offsets would shift
        lowered = text
    first = regex.compile(r"\b(?:" + "|".join(map(regex.escape, sorted(forms, key=len,
                          reverse=True))) + r")[^\W_]*", 0 if lowered is not text else FLAGS)
    scored: dict[tuple[int, int], int] = {}
    lines: dict[int, list[tuple[int, int]]] = {}
    for m in first.finditer(lowered, timeout=timeout):
        if stem(m[0].lower()) not in wanted:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        if line_start not in lines:
            line_end = text.find("\n", m.end())
            lines[line_start] = _sentences(text, line_start,
                                           len(text) if line_end < 0 else line_end, timeout)
        span = next((s for s in lines[line_start] if s[0] <= m.start() < s[1]), None)
        if span is not None and span not in scored:
            sentence = text[span[0]:span[1]]
            scored[span] = len(wanted & {stem(w.lower())
                                         for w in _WORD.findall(sentence, timeout=timeout)})
    top = max(scored.values(), default=0)
    need = len(wanted) if len(wanted) <= 2 else -(-2 * len(wanted) // 3)
    if top == 0 or top < need:
        return []
    return sorted(span for span, n in scored.items() if n == top)


def _sentences(text: str, start: int, end: int, timeout: float | None) -> list[tuple[int, int]]:
    """The sentences of the line text[start:end], stripped, as (start, end)."""
    spans, at = [], start
    for m in [*_SENTENCE_END.finditer(text, start, end, timeout=timeout), None]:
        stop = m.start() if m is not None else end
        piece = text[at:stop]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((at + lead, at + len(piece.rstrip())))
        if m is not None:
            at = m.end()
    return spans


QUOTE_SIDE = 150
"""Characters a quote keeps on each side of the value when its sentence is longer."""


def sentence_around(text: str, start: int, end: int, side: int = QUOTE_SIDE) -> str:
    """The sentence of `text` that holds `text[start:end]` (a value EXTRACT read), at most
    `side` characters on each side of it, `…` where it was cut."""
    lo, hi = max(0, start - side), min(len(text), end + side)
    breaks = list(_SENTENCE_END.finditer(text, lo, start))
    begin = breaks[-1].end() if breaks else lo
    after = _SENTENCE_END.search(text, end, hi)
    stop = after.start() if after else hi
    quote = text[begin:stop].strip()
    return (("…" if begin == lo > 0 else "") + quote
            + ("…" if stop == hi < len(text) and not after else ""))


def nearest(candidates: list[Span], sentence: str, words: list[str],
            timeout: float | None = None) -> str | None:
    """The candidate closest to a keyword; on a tie the one after it (labels precede values)."""
    found = nearest_span(candidates, sentence, words, timeout)
    return found[2] if found else None


def nearest_span(candidates: list[Span], sentence: str, words: list[str],
                 timeout: float | None = None) -> Span | None:
    """The candidate `nearest` picks, with where it is in `sentence`."""
    wanted = {stem(w) for w in words}
    marks = [m.span() for m in _WORD.finditer(sentence, timeout=timeout)
             if stem(m[0].lower()) in wanted]
    if not candidates or not marks:
        return None

    def distance(c: Span) -> tuple[int, int, int]:
        gaps = [(c[0] - end, 0) if c[0] >= end else (start - c[1], 1) for start, end in marks
                if c[0] >= end or c[1] <= start]
        return (*min(gaps, default=(len(sentence), 2)), c[0])

    return min(candidates, key=distance)


def library_matches(quantity: str, sentence: str, timeout: float | None = None) -> list[Span]:
    """Matches of the built-in pattern for `quantity`; numbers inside dates, range ends and
    negatives written in words are left out (shared/tools/figures.py)."""
    found = [(m.start(1), m.end(1), m[1].strip())
             for m in LIBRARY[quantity].finditer(sentence, timeout=timeout)]
    if quantity != "date":
        found = [f for f in found if not not_alone(sentence, f[0], f[1])]
    return _outside(found, find_dates(sentence, timeout)) if quantity == "number" else found


def find_dates(sentence: str, timeout: float | None = None) -> list[Span]:
    """Dates, months, quarters and years, the most specific form winning an overlap."""
    found: list[Span] = []
    for pattern in _DATE_FORMS:
        spans = [(m.start(1), m.end(1), m[1]) for m in pattern.finditer(sentence, timeout=timeout)]
        found += _outside(spans, found)
    return sorted(found)


def find_numbers(sentence: str, timeout: float | None = None) -> list[Span]:
    """Numerals (number words when there are none) that are not part of a date."""
    numerals = [(m.start(1), m.end(1), m[1].strip())
                for m in _NUMERAL.finditer(sentence, timeout=timeout)]
    numerals = [n for n in _outside(numerals, find_dates(sentence, timeout))
                if not not_alone(sentence, n[0], n[1])]
    if numerals:
        return numerals
    if _POINT.search(sentence):
        return []  # "eight point nine billion": a word at a time would misread it
    return [(m.start(), m.end(), str(_word_value(m)))
            for m in _NUMBER_WORD.finditer(sentence, timeout=timeout)]


def read_date(text: str) -> date | None:
    """The calendar date `text` states (`2023-09-30`, `30 Sep 2023`, `September 30, 2023`)."""
    if not isinstance(text, str) or not LIBRARY["date"].fullmatch(text.strip()):
        return None
    parts = regex.findall(r"[a-z]+|\d+", text.strip().lower())
    try:
        if len(parts) == 3 and parts[0].isdigit() and len(parts[0]) == 4:
            return date(int(parts[0]), int(parts[1]), int(parts[2]))
        month = next(p for p in parts if p.isalpha())
        day, year = (int(p) for p in parts if p.isdigit())
        return date(year, _MONTHS.index(month[:3]) + 1, day)
    except (ValueError, StopIteration):
        return None


def _outside(spans: list[Span], taken: list[Span]) -> list[Span]:
    return [s for s in spans if not any(s[0] < t[1] and t[0] < s[1] for t in taken)]


def _word_value(m: regex.Match) -> int:
    if m[3]:
        return _UNITS.index(m[3].lower())
    return 20 + 10 * _TENS.index(m[1].lower()) + (_UNITS.index(m[2].lower()) if m[2] else 0)

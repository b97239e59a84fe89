"""Pattern diagnoses: consumes an EXTRACT pattern and the document text it ran on,
produces why it found nothing (NO_MATCH) or ran away (PATTERN_TIMEOUT), and a pattern
that works.

Every pattern offered is first checked with `regex`: for NO_MATCH it must match the
document sentence it was built from and capture the figure in it; for PATTERN_TIMEOUT
it must finish on every document within the time limit. Every pattern made from the
plan's, and every candidate, is compiled as the tools compile it
(shared/tools/pattern_vetting.py: size limits, then a bounded child), so a pattern that
would expand to gigabytes is passed over, never compiled here.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from shared.errors import PatternRefused
from shared.render.labels import capture_span, literal
from shared.search.terms import STOPWORDS
from shared.tools.pattern_vetting import compile_vetted

FLAGS = regex.IGNORECASE
TIMEOUT_S = 1.0
QUANTITIES = {
    "percent": r"(\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)",
    "money": r"[$€£]\s?(\d[\d,]*(?:\.\d+)?)",
    "number": r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?![\d,]\d|\w)",
    "date": r"(\d{4}-\d{2}-\d{2}|(?:January|February|March|April|May|June|July|August|"
            r"September|October|November|December)\s+\d{1,2},\s+\d{4})",
}
"""One capture group each: the figure a suggested pattern extracts."""
SPELLINGS = {"%": ("percent", "per cent", "pct"), "percent": ("%",), "billion": ("bn",),
             "million": ("mn",), "$": ("usd", "dollars", "us$")}
_SENTENCE_END = regex.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$€£])|\n+")
_YEAR = regex.compile(r"(?:19|20)\d{2}")
_REPEATED_GROUP = regex.compile(r"\((\?:)?((?:[^()\\]|\\.)*)\)([+*]|\{\d*,\d*\})")
_GREEDY = regex.compile(r"(?<!\\)\.([*+])(?![?+])")


@dataclass(frozen=True)
class Finding:
    cause: str
    sentence: str | None = None
    pattern: str | None = None
    """A pattern checked to work (None when none could be found)."""
    value: str | None = None
    """What `pattern` captures in `sentence`."""


def keywords(pattern: str, before_group: bool = False) -> list[str]:
    """The literal words of `pattern` (of its part before the capture group)."""
    span = capture_span(pattern)
    text = pattern[:span[0]] if before_group and span else pattern
    found = [w.lower() for w in regex.findall(r"[A-Za-z]{3,}", literal(text))]
    return list(dict.fromkeys(w for w in found if w not in STOPWORDS))


def _compiled(pattern: str) -> regex.Pattern | None:
    """`pattern` compiled within the tools' bounds; None when they refuse it."""
    try:
        return compile_vetted(pattern, FLAGS)
    except PatternRefused:
        return None


def _has(word: str, text: str) -> bool:
    return regex.search(rf"\b{regex.escape(word)}", text, FLAGS) is not None


def nearest_sentence(texts: list[str], words: list[str]) -> str | None:
    """The sentence holding most of `words` (the first such); None when none holds any."""
    best, score = None, 0
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            hits = sum(_has(w, sentence) for w in words)
            if hits > score:
                best, score = sentence.strip(), hits
    return best


def _anchor(sentence: str, words: list[str], before: int,
            after: int) -> tuple[str, int, int, bool] | None:
    """The run of keywords nearest the figure at `before`..`after`: the one ending just
    before it, else the one starting just after it. A regex, its start, its end, and
    whether it comes first."""
    spans = sorted((m.start(), m.end()) for w in words
                   for m in regex.finditer(rf"\b{regex.escape(w)}\w*", sentence, FLAGS))
    ahead = [s for s in spans if s[1] <= before]
    behind = [s for s in spans if s[0] >= after]
    if not ahead and not behind:
        return None
    start, end = ahead[-1] if ahead else behind[0]
    for s, e in (reversed(ahead[:-1]) if ahead else behind[1:]):
        gap = sentence[e:start] if ahead else sentence[end:s]
        if not regex.fullmatch(r"[\s-]{0,2}", gap):
            break
        start, end = (s, end) if ahead else (start, e)
    words_re = r"\s+".join(regex.escape(w) for w in sentence[start:end].split())
    return words_re, start, end, bool(ahead)


def suggest(sentence: str, words: list[str], kinds: list[str]) -> tuple[str, str, str] | None:
    """A pattern with one capture group matching a figure of `sentence`, what it
    captures and the words it spans; checked with `regex` against the sentence."""
    for kind in kinds:
        for q in regex.finditer(QUANTITIES[kind], sentence, FLAGS):
            if kind == "number" and _YEAR.fullmatch(q.group(1)):
                continue
            found = _anchor(sentence, words, q.start(), q.end())
            if found is None:
                continue
            anchor, start, end, first = found
            between = sentence[end:q.start()] if first else sentence[q.end():start]
            if not first and regex.search(r"\d", between):
                continue  # a nearer figure stands between this one and the words after it
            exact = r"\s+".join(regex.escape(part) for part in between.split(" "))
            reach = max(80, len(between) + 20)
            for middle in (rf".{{0,{reach}}}?", rf"\D{{0,{reach}}}?", exact):
                candidate = (f"{anchor}{middle}{QUANTITIES[kind]}" if first
                             else f"{QUANTITIES[kind]}{middle}{anchor}")
                compiled = _compiled(candidate)
                m = compiled and compiled.search(sentence, timeout=TIMEOUT_S)
                if m and m.start(1) == q.start(1) and m.group(1) == q.group(1):
                    shown = sentence[start:q.end()] if first else sentence[q.start():end]
                    return candidate, q.group(1), shown
    return None


def _units(pattern: str) -> list[str]:
    span = capture_span(pattern) or (len(pattern), len(pattern))
    after = literal(pattern[span[1]:]).lower()
    found = [u for u in SPELLINGS if u != "$" and after.startswith(u)]
    return found + (["$"] if pattern[:span[0]].endswith("$") else [])


def _why(pattern: str, sentence: str, found: tuple[str, str, str] | None) -> str:
    relaxed = pattern.replace("(?-i)", "").replace("(?-i:", "(?:")  # EXTRACT ignores case
    compiled = _compiled(relaxed) if relaxed != pattern else None
    if compiled and compiled.search(sentence, timeout=TIMEOUT_S):
        return ("case: the pattern insists on capital or small letters, and the sentence "
                "writes them the other way")
    for u in _units(pattern):
        if u not in sentence.lower():
            seen = [s for s in SPELLINGS[u] if _has(s, sentence) or s in "%$" and s in sentence]
            written = f"writes {seen[0]!r} instead" if seen else f"has no {u!r}"
            return (f"wrong units: the pattern expects {u!r} by the number, but the sentence "
                    f"{written}")
    value = found[1] if found else ""
    span = capture_span(pattern)
    group = pattern[span[0]:span[1]] if span else ""
    if "," in value and "," not in group:
        return (f"pattern too strict: the document writes {value} with thousands separators, "
                f"which {group} does not allow")
    if r"\d+\.\d+" in group and value and "." not in value:
        return f"pattern too strict: {group} demands a decimal point, the document writes {value}"
    expected = " ".join(literal(pattern[:span[0]]).split()[-5:]) if span else ""
    if found and expected:
        return (f"pattern too strict: it expects {expected!r} just before the figure, but "
                f"the document reads {found[2]!r}")
    lacking = [w for w in keywords(pattern) if not _has(w, sentence)]
    missing = f" (it lacks {', '.join(map(repr, lacking))})" if lacking else ""
    return f"pattern too strict: the sentence differs from what the pattern spells out{missing}"


def no_match(pattern: str, quantity: str | None, texts: list[str]) -> Finding:
    """Why `pattern` found nothing in `texts`, the nearest sentence and a working pattern."""
    words = keywords(pattern)
    sentence = nearest_sentence(texts, words)
    if sentence is None:
        return Finding(f"wrong words or wrong document: none of the pattern's words "
                       f"({', '.join(words) or 'none'}) occurs in the document")
    wanted = quantity if quantity in QUANTITIES else (
        "percent" if "%" in _units(pattern) or "percent" in _units(pattern) else
        "money" if "$" in _units(pattern) else "number")
    kinds = list(dict.fromkeys([wanted, "percent", "money", "number", "date"]))
    found = suggest(sentence, keywords(pattern, before_group=True) or words, kinds)
    if found is None:
        return Finding(_why(pattern, sentence, None), sentence)
    return Finding(_why(pattern, sentence, found), sentence, found[0], found[1])


def _nested(m: regex.Match) -> bool:
    """Whether a repeated group repeats something inside it too: `(a+)+`, `(ab*)*`."""
    return regex.search(r"[+*]|\{\d*,", regex.sub(r"\\.", "x", m[2])) is not None


def timeout(pattern: str, texts: list[str]) -> Finding:
    """Why `pattern` backtracks catastrophically, and a lazy/atomic form that finishes."""
    nested = next((m for m in _REPEATED_GROUP.finditer(pattern) if _nested(m)), None)
    if nested:
        what = (f"the nested repetition `{nested.group()}` can split the same characters "
                "between its inner and outer loop in exponentially many ways")
    else:
        what = ("greedy `.*`/`.+` parts each try every length of the rest of the document "
                "before giving any back")
    cause = (f"catastrophic backtracking: {what}; on a text it does not match, the regex "
             "engine tries them all before giving up")
    calmer = _REPEATED_GROUP.sub(_atomic, pattern)
    calmer = _GREEDY.sub(lambda m: ".{0,80}?" if m[1] == "*" else ".{1,80}?", calmer)
    compiled = _compiled(calmer) if calmer != pattern else None
    if compiled is None or not compiled.groups:
        return Finding(cause)
    try:
        matches = [compiled.search(text, timeout=TIMEOUT_S) for text in texts]
    except TimeoutError:
        return Finding(cause)
    value = next((m.group(1) for m in matches if m and m.group(1)), None)
    return Finding(cause, pattern=calmer, value=value)


def _atomic(m: regex.Match) -> str:
    """`(a+)+` -> `((?>a+)+)`: each pass of the inner loop is final; `(.*)*` -> `(.{0,80}?)`."""
    if not _nested(m):
        return m.group()
    if regex.fullmatch(r"\.[*+]\??", m[2]):
        return "(?:.{0,80}?)" if m[1] else "(.{0,80}?)"
    return f"(?>{m[2]}){m[3]}" if m[1] else f"((?>{m[2]}){m[3]})"

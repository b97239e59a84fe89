"""A line of positioned words read as a label and cells: consumes one line's words as
`(x0, x1, text)` (a PDF page's words, or text laid out in columns with character offsets
as positions) and the width of a character, produces its phrases (words set close
together), the cells among them (the phrases that state a figure) and its label (the
phrases just left of its first cell).

A currency sign apart from its figure joins it, as do a ")" or "%" after one; leader
dots glued to a sign or figure ("......$") are parted from it, and the pieces of a figure
a PDF split into two words ("1" "12,120") are joined. On a line with no figures (a
header) words set wide are one phrase unless a wider gap parts them ("Three months
ended  Six months ended").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import regex

from shared.tables.quantities import is_dash, parse_quantity

from .periods import YEAR_CELL

Word = tuple[float, float, str]
"""A word and where it lies on its line: (left x, right x, text)."""

SIGN = regex.compile(r"[$€£¥₹]|US\$")
_LEADER = regex.compile(r"(.*?[.…_]{2,})(\S+)")
_DIGIT = regex.compile(r"\d")
_PIECE = regex.compile(r"\(?[\d,.]+\)?")
_NOTE_MARK = regex.compile(r"\(\d{1,2}\)|\d{1,2}[.)]?|\([a-z]\)|\*{1,3}")
NOTE_WORDS = 4
"""How many words a footnote's text after its mark has at least ("(1) Prior period
results have been adjusted …"), where a row's label comes before its figures."""


@dataclass
class Phrase:
    """Words set close together on a line, and whether they state a figure."""

    x0: float
    x1: float
    text: str
    figure: bool = False


@dataclass
class Parsed:
    """A line split into its phrases, its label (and where it starts) and its cells."""

    phrases: list[Phrase]
    label: str = ""
    label_x0: float | None = None
    cells: list[Phrase] = field(default_factory=list)


def pdf_lines(words: Iterable[Mapping[str, Any]]) -> list[list[Word]]:
    """A PDF page's words (pdfplumber's `extract_words()`: dicts with `x0`, `x1`, `top`,
    `bottom`, `text`) as lines top to bottom, each left to right: a word is on the line
    its vertical middle falls in (give or take a point)."""
    lines: list[tuple[float, float, list[Mapping[str, Any]]]] = []
    for w in sorted(words, key=lambda w: w["top"]):
        middle = (w["top"] + w["bottom"]) / 2
        line = next((line for line in lines if line[0] - 1 <= middle <= line[1] + 1), None)
        if line is None:
            lines.append((w["top"], w["bottom"], [w]))
        else:
            line[2].append(w)
    return [[(w["x0"], w["x1"], w["text"]) for w in sorted(found, key=lambda w: w["x0"])]
            for _, _, found in sorted(lines, key=lambda line: line[0])]


def text_lines(text: str) -> list[list[Word]]:
    """The lines of `text` as words with character offsets as positions."""
    return [[(m.start(), m.end(), m.group()) for m in regex.finditer(r"\S+", line)]
            for line in text.splitlines()]


@lru_cache(maxsize=65536)  # a page's words repeat: figures, dashes, "$", label words
def is_figure(text: str) -> bool:
    """Whether `text` states a figure (a dash is zero); a year or a date is not one."""
    if not _DIGIT.search(text) and not is_dash(text):
        return False
    if YEAR_CELL.fullmatch(text):
        return False
    q = parse_quantity(text)
    return q is not None and q.kind != "date"


def parse_line(line: list[Word], char: float) -> Parsed:
    words = _unglued(sorted((w for w in line if w[2].strip()), key=lambda w: w[0]), char)
    limit = _gap_limit(words, char)
    phrases: list[Phrase] = []
    for x0, x1, text in words:
        last = phrases[-1] if phrases else None
        if last and x0 - last.x1 <= limit and not SIGN.fullmatch(text) and not (
                is_figure(text) and (last.figure or SIGN.fullmatch(last.text) is None
                                      and is_figure(last.text))):
            space = "" if x0 - last.x1 < 0.2 * char else " "  # "(1,645" ")" touching
            last.x1, last.text = x1, f"{last.text}{space}{text}"
        else:
            phrases.append(Phrase(x0, x1, text))
    for p in phrases:
        p.figure = is_figure(p.text)
    if phrases and all(SIGN.fullmatch(p.text) for p in phrases):
        return Parsed([])  # currency signs set on a line of their own: a blank line
    phrases = _join_signs(phrases)
    parsed = Parsed(phrases)
    first = next((i for i, p in enumerate(phrases) if p.figure), None)
    if first == 0 and len(phrases) > 1 and _NOTE_MARK.fullmatch(phrases[0].text) and (
            not phrases[1].figure and len(phrases[1].text.split()) >= NOTE_WORDS):
        first = None  # a footnote under a table: "(1) Prior period results have been …"
    if first is None:
        if phrases:
            parsed.label, parsed.label_x0 = " ".join(p.text for p in phrases), phrases[0].x0
        return parsed
    if first:  # the label: the phrases just left of the cells, not text further left
        run = first - 1
        while run > 0 and phrases[run].x0 - phrases[run - 1].x1 <= 2 * char:
            run -= 1
        parsed.label = " ".join(p.text for p in phrases[run:first])
        parsed.label_x0 = phrases[run].x0
    parsed.cells = phrases[first:]
    return parsed


def _unglued(words: list[Word], char: float) -> list[Word]:
    """Leader dots set against a currency sign or a figure ("......$") parted from it;
    the pieces of one figure a PDF's words split ("1" "12,120") joined."""
    out: list[Word] = []
    for x0, x1, text in words:
        m = _LEADER.fullmatch(text)
        if m and (SIGN.fullmatch(m[2]) or is_figure(m[2])):
            cut = x0 + (x1 - x0) * len(m[1]) / len(text)
            out += [(x0, cut, m[1]), (cut, x1, m[2])]
        elif out and x0 - out[-1][1] < 0.35 * char and _PIECE.fullmatch(out[-1][2]) and (
                _PIECE.fullmatch(text) and is_figure(out[-1][2] + text)):
            out[-1] = (out[-1][0], x1, out[-1][2] + text)
        else:
            out.append((x0, x1, text))
    return out


def _gap_limit(words: list[Word], char: float) -> float:
    """The widest gap between two words of one phrase: a character and a half; on a line
    with no figures (a header), less where its words are set wide and a wider gap parts
    two headers ("Three months ended  Six months ended")."""
    gaps = [b[0] - a[1] for a, b in zip(words, words[1:]) if b[0] - a[1] <= 1.5 * char]
    if len(gaps) < 2 or any(is_figure(w[2]) for w in words):
        return 1.5 * char
    return max(0.6 * char, min(1.5 * char, 1.3 * min(g for g in gaps if g > 0.1 * char)
                               if any(g > 0.1 * char for g in gaps) else 1.5 * char))


def _join_signs(phrases: list[Phrase]) -> list[Phrase]:
    """A currency sign apart from its figure joins it; so does a ")" or "%" after one."""
    out: list[Phrase] = []
    for p in phrases:
        if out and SIGN.fullmatch(out[-1].text) and p.figure:
            sign = out.pop()
            p = Phrase(sign.x0, p.x1, f"{sign.text}{p.text}", True)
        elif out and out[-1].figure and p.text in (")", "%", ")%", "%)") and is_figure(
                out[-1].text + p.text):
            prev = out.pop()
            p = Phrase(prev.x0, p.x1, prev.text + p.text, True)
        out.append(p)
    return out

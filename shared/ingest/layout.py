"""Text laid out in columns: consumes the words of one page with their positions (a PDF
page's, as pdfplumber reads them), produces its lines top to bottom (the words the table
reader takes) and the page's text with each line's words where the page puts them.

A line's words are one space apart where the page spaces them as prose, and at least
two apart, at their column, where the page leaves a gap wider than `COLUMN_GAP`
characters: so a row label stays on the line of its figures, the figures stay in their
columns, and a pattern or a reader of text tables finds both (as `pdftotext -layout`
writes a page). Dot leaders (`Revenues ........$ 122,882`) are left out, so the label
and the figure are words of their own. A closing parenthesis or percent sign set apart from its figure is
joined to it (`(1,657)`, `9.1%`). A wider gap between two lines than `PARAGRAPH_GAP`
line pitches becomes a blank line.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

COLUMN_GAP = 3.0
"""A gap between two words wider than this many character widths separates columns;
prose on the filings measured never spaces words wider (justified lines reach about 3,
table columns start above it)."""
GLUE_GAP = 0.15
"""Words closer than this many character widths are one word the PDF wrote in pieces."""
CLOSING = frozenset({")", "%", ")%", "%)", "),", ")."})
"""Marks a PDF sets apart from the figure they close; joined to it within `CLOSING_GAP`."""
CLOSING_GAP = 1.5
LEADER = re.compile(r"(?:\s*\.){4,}\s*")
"""A run of dots leading the eye from a label to its figure."""
PARAGRAPH_GAP = 1.5
"""Lines further apart than this many times the page's usual line pitch have a blank line
between them."""


@dataclass(frozen=True)
class Placed:
    """A word with its box on the page (points from the left and the top)."""

    x0: float
    x1: float
    top: float
    bottom: float
    text: str


@dataclass(frozen=True)
class Line:
    top: float
    words: tuple[Placed, ...]
    """Left to right, pieces of one word joined."""

    def cells(self) -> list[tuple[float, float, str]]:
        """The words as the table reader takes them: (x0, x1, text)."""
        return [(w.x0, w.x1, w.text) for w in self.words]


def char_width(words: list[Placed]) -> float:
    """The page's usual character width: the median over its words."""
    return statistics.median((w.x1 - w.x0) / len(w.text) for w in words) or 1.0


def lines_of(words: list[Placed], width: float) -> list[Line]:
    """`words` grouped into lines (a word joins the line whose first word's top is within
    half a word's height of its own), top to bottom, each left to right."""
    if not words:
        return []
    tolerance = max(2.0, 0.5 * statistics.median(w.bottom - w.top for w in words))
    lines: list[Line] = []
    group: list[Placed] = []
    for word in sorted(words, key=lambda w: (w.top, w.x0)):
        if group and word.top - group[0].top > tolerance:
            lines.append(_line(group, width))
            group = []
        group.append(word)
    lines.append(_line(group, width))
    # a line that was only a dot leader has no word left (page 431 of Tesla's 10-K for
    # 2020 sets one alone over a signature's name)
    return [line for line in lines if line.words]


def _line(words: list[Placed], width: float) -> Line:
    joined: list[Placed] = []
    for w in sorted((part for w in words for part in _without_leaders(w, width)),
                    key=lambda w: w.x0):
        if joined:
            gap = (w.x0 - joined[-1].x1) / width
            if gap < GLUE_GAP or (w.text in CLOSING and gap < CLOSING_GAP):
                last = joined.pop()
                w = Placed(last.x0, max(last.x1, w.x1), min(last.top, w.top),
                           max(last.bottom, w.bottom), last.text + w.text)
        joined.append(w)
    return Line(min(w.top for w in words), tuple(joined))


def _without_leaders(word: Placed, width: float) -> list[Placed]:
    """`word` cut where a dot leader runs through it, the leader left out; each piece
    keeps its own end of the word's box (a leader's dots are narrower than letters)."""
    pieces = LEADER.split(word.text)
    if len(pieces) == 1:
        return [word]
    first, last = pieces[0], pieces[-1]
    kept = []
    if first:
        kept.append(Placed(word.x0, word.x0 + len(first) * width, word.top, word.bottom, first))
    kept += [Placed(word.x0, word.x1, word.top, word.bottom, p) for p in pieces[1:-1] if p]
    if last:
        kept.append(Placed(word.x1 - len(last) * width, word.x1, word.top, word.bottom, last))
    return kept


def laid_out(lines: list[Line], width: float) -> str:
    """The text of `lines`: words at their columns (counted in `width`s from the page's
    leftmost word), blank lines where the page leaves a paragraph's gap."""
    if not lines:
        return ""
    left = min(line.words[0].x0 for line in lines)
    pitches = [b.top - a.top for a, b in zip(lines, lines[1:]) if b.top > a.top]
    pitch = statistics.median(pitches) if pitches else 0.0
    out: list[str] = []
    for n, line in enumerate(lines):
        if n and pitch and line.top - lines[n - 1].top > PARAGRAPH_GAP * pitch:
            out.append("")
        text, end = "", None
        for w in line.words:
            column = round((w.x0 - left) / width)
            if end is None:
                text = " " * column
            elif (w.x0 - end) / width <= COLUMN_GAP:
                text += " "
            else:
                text += " " * max(2, column - len(text))
            text += w.text
            end = w.x1
        out.append(text.rstrip())
    return "\n".join(out)

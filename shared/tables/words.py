"""Tables in positioned words: consumes the lines of a page, each its words as
`(x0, x1, text)` (a PDF page's words, or the words of text laid out in columns with
character offsets as positions), produces the tables they lay out.

A line's words make phrases where the gaps between them are narrow; a phrase that
states a figure is a cell, the phrases left of a line's first cell its label. Lines
with cells, and the label lines between them, make a table's body; its columns are the
x ranges its cells share; the lines just above, over the columns, are its header (a
header phrase spans the columns under it); lines above those that say a unit are its
notes, a short line above them its title.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import regex

from shared.tools.quantities import parse_quantity

from .assemble import Line, assemble
from .model import Table
from .units import scale_in

Word = tuple[float, float, str]
"""A word and where it lies on its line: (left x, right x, text)."""

_YEAR = regex.compile(r"(?:19|20)\d{2}")
_SIGN = regex.compile(r"[$€£¥₹]|US\$")
_HEADER_WORDS = regex.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b|\bended\b|\bending\b|"
    r"\byears?\b|\bquarters?\b|\bmonths\b|\bweeks\b|\bfiscal\b|\bas\s+of\b|\bQ[1-4]\b|"
    r"\b(?:19|20)\d{2}\b", regex.IGNORECASE)
MAX_GAP_LINES = 8
"""Label lines with no figures a table's body may hold in a row (headings, wrapped labels)."""


@dataclass
class Phrase:
    x0: float
    x1: float
    text: str
    figure: bool = False


@dataclass
class Parsed:
    """A line split into its label and its cells."""

    words: list[Word]
    phrases: list[Phrase]
    label: str = ""
    label_x0: float | None = None
    cells: list[Phrase] = field(default_factory=list)


def text_lines(text: str) -> list[list[Word]]:
    """The lines of `text` as words with character offsets as positions."""
    return [[(m.start(), m.end(), m.group()) for m in regex.finditer(r"\S+", line)]
            for line in text.splitlines()]


def tables_in_lines(lines: list[list[Word]], page: int | None = None) -> list[Table]:
    """Every table the lines lay out, top to bottom."""
    words = [w for line in lines for w in line if w[2].strip()]
    if not words:
        return []
    char = statistics.median((w[1] - w[0]) / max(1, len(w[2])) for w in words)
    parsed = [_parse(line, char) for line in lines]
    tables = []
    for start, end in _blocks(parsed):
        table = _table(parsed, start, end, char, page)
        if table is not None:
            tables.append(table)
    return tables


def _is_figure(text: str) -> bool:
    if _YEAR.fullmatch(text):
        return False
    q = parse_quantity(text)
    return q is not None and q.kind != "date"


def _parse(line: list[Word], char: float) -> Parsed:
    words = sorted((w for w in line if w[2].strip()), key=lambda w: w[0])
    phrases: list[Phrase] = []
    for x0, x1, text in words:
        last = phrases[-1] if phrases else None
        if last and x0 - last.x1 <= 1.5 * char and not (
                _is_figure(text) and (last.figure or _SIGN.fullmatch(last.text) is None
                                      and _is_figure(last.text))):
            space = "" if x0 - last.x1 < 0.2 * char else " "  # "(1,645" ")" touching
            last.x1, last.text = x1, f"{last.text}{space}{text}"
        else:
            phrases.append(Phrase(x0, x1, text))
    for p in phrases:
        p.figure = _is_figure(p.text)
    phrases = _join_signs(phrases)
    parsed = Parsed(words, phrases)
    first = next((i for i, p in enumerate(phrases) if p.figure), None)
    if first is None:
        if phrases:
            parsed.label, parsed.label_x0 = " ".join(p.text for p in phrases), phrases[0].x0
        return parsed
    if first:
        parsed.label = " ".join(p.text for p in phrases[:first])
        parsed.label_x0 = phrases[0].x0
    parsed.cells = phrases[first:]
    return parsed


def _join_signs(phrases: list[Phrase]) -> list[Phrase]:
    """A currency sign apart from its figure joins it; so does a ")" or "%" after one."""
    out: list[Phrase] = []
    for p in phrases:
        if out and _SIGN.fullmatch(out[-1].text) and p.figure:
            sign = out.pop()
            p = Phrase(sign.x0, p.x1, f"{sign.text}{p.text}", True)
        elif out and out[-1].figure and p.text in (")", "%", ")%", "%)") and _is_figure(
                out[-1].text + p.text):
            prev = out.pop()
            p = Phrase(prev.x0, p.x1, prev.text + p.text, True)
        out.append(p)
    return out


def _blocks(parsed: list[Parsed]) -> list[tuple[int, int]]:
    """(first, last + 1) of each run of lines with cells and the label lines between
    them; a line reaching into the figures, or more than MAX_GAP_LINES label lines (blank
    lines aside), ends a run."""
    blocks, start, gap, blank, last, left = [], None, 0, 0, None, 0.0
    for i, line in enumerate(parsed):
        if line.cells:
            if start is not None and not line.label and len(line.cells) == 1 and gap + blank:
                blocks.append((start, last + 1))  # a page number under a table
                start = None
            if start is None:
                start, left = i, min(c.x0 for c in line.cells)
            gap, blank, last = 0, 0, i
            left = min(left, min(c.x0 for c in line.cells))
        elif start is not None:
            if not line.phrases:
                blank += 1
            else:
                gap += 1
            if gap > MAX_GAP_LINES or blank > 2 or (line.phrases and line.phrases[-1].x1 > left):
                blocks.append((start, last + 1))
                start, gap, blank = None, 0, 0
    if start is not None:
        blocks.append((start, last + 1))
    return [(a, b) for a, b in blocks if sum(1 for p in parsed[a:b] if p.cells) >= 2]


def _columns(cells: list[Phrase], char: float) -> list[tuple[float, float]]:
    """The x ranges the cells share: cells overlapping (nearly) are one column."""
    spans: list[list[float]] = []
    for c in sorted(cells, key=lambda c: c.x0):
        if spans and c.x0 <= spans[-1][1] + 0.3 * char:
            spans[-1][1] = max(spans[-1][1], c.x1)
        else:
            spans.append([c.x0, c.x1])
    return [(a, b) for a, b in spans]


def _column_of(p: Phrase, columns: list[tuple[float, float]]) -> int | None:
    overlaps = [min(p.x1, b) - max(p.x0, a) for a, b in columns]
    best = max(range(len(columns)), key=lambda j: overlaps[j])
    return best if overlaps[best] > 0 else None


def _table(parsed: list[Parsed], start: int, end: int, char: float,
           page: int | None) -> Table | None:
    columns = _columns([c for line in parsed[start:end] for c in line.cells if c.figure], char)
    left = columns[0][0] - char
    while start > 0 and _label_only(parsed[start - 1], left) and scale_in(
            parsed[start - 1].label) is None:
        start -= 1  # headings above the first figures belong to the body
    lines = []
    for line in parsed[start:end]:
        cells = [""] * len(columns)
        for c in line.cells:
            j = _column_of(c, columns)
            if j is None or cells[j]:
                return None  # two cells in one column, or one in none: not sure of it
            cells[j] = c.text
        lines.append(Line(label=line.label, cells=cells))
    top, headers, beside = _header(parsed, start, columns, left, char)
    notes, title = _notes(parsed, top)
    return assemble(headers, lines, notes=" ".join(notes + beside), title=title, page=page,
                    wraps=True)


def _label_only(line: Parsed, left: float) -> bool:
    """A line of label words only, all of them left of the figures."""
    return bool(line.phrases) and not line.cells and line.phrases[-1].x1 < left


def _header(parsed: list[Parsed], start: int, columns: list[tuple[float, float]],
            left: float, char: float) -> tuple[int, list[str], list[str]]:
    """The first line of the header above `start`, each column's header text (its
    lines top to bottom) and the header's words left of the columns."""
    parts: list[list[str]] = [[] for _ in columns]
    beside: list[str] = []
    top, blank = start, 0
    for i in range(start - 1, max(-1, start - 9), -1):
        line = parsed[i]
        if not line.phrases:
            blank += 1
            if blank > 2:
                break
            continue
        over = [p for p in line.phrases if p.x1 > left]
        if line.cells or not over or any(p.x0 < left < p.x1 for p in over) or any(
                len(p.text) > 60 for p in over):
            break
        for p, under in zip(over, _spans(over, columns, char)):
            for j in under:
                parts[j].insert(0, p.text)
        beside[:0] = [p.text for p in line.phrases if p.x1 <= left]
        top, blank = i, 0
    return top, [" ".join(p) for p in parts], beside


def _spans(phrases: list[Phrase], columns: list[tuple[float, float]],
           char: float) -> list[list[int]]:
    """The columns each header phrase of a line stands over: the widest run of columns,
    none claimed by another phrase, that it is centred over ("Years Ended September 30,"
    over three years), or else those it overlaps, or else the nearest."""
    own = [_overlapped(p, columns) or [_nearest(p, columns)] for p in phrases]
    out = []
    for i, p in enumerate(phrases):
        others = {j for k, cols in enumerate(own) if k != i for j in cols}
        middle = (p.x0 + p.x1) / 2
        best = own[i]
        for first in range(min(own[i]), -1, -1):
            for last in range(max(own[i]), len(columns)):
                run = set(range(first, last + 1))
                if run & others or len(run) <= len(best):
                    continue
                a, b = columns[first][0], columns[last][1]
                if abs((a + b) / 2 - middle) <= max(2 * char, 0.1 * (b - a)):
                    best = sorted(run)
        out.append(best)
    return out


def _overlapped(p: Phrase, columns: list[tuple[float, float]]) -> list[int]:
    return [j for j, (a, b) in enumerate(columns) if min(p.x1, b) - max(p.x0, a) > 0]


def _nearest(p: Phrase, columns: list[tuple[float, float]]) -> int:
    middle = (p.x0 + p.x1) / 2
    return min(range(len(columns)), key=lambda j: abs((columns[j][0] + columns[j][1]) / 2
                                                      - middle))


def _notes(parsed: list[Parsed], top: int) -> tuple[list[str], str | None]:
    """The unit lines and the title above a table's header (up to four short lines,
    stopping at a blank, a sentence or a page number)."""
    notes, titles = [], []
    for i in range(top - 1, max(-1, top - 5), -1):
        text = " ".join(p.text for p in parsed[i].phrases)
        if not text or parsed[i].cells or len(text) > 150 or text.endswith("."):
            break
        if scale_in(text) is not None:
            notes.insert(0, text)
        else:
            titles.insert(0, text)
    return notes, " ".join(titles) or None

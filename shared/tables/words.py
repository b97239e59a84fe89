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
from .periods import YEAR_CELL
from .units import scale_in

Word = tuple[float, float, str]
"""A word and where it lies on its line: (left x, right x, text)."""

_DIGIT = regex.compile(r"\d")
_LEADER = regex.compile(r"(.*?[.…_]{2,})(\S+)")
_PIECE = regex.compile(r"\(?[\d,.]+\)?")
_SENTENCE = regex.compile(r"(?:\S+\s+){7,}\S*(?<!\b(?:Inc|Corp|Co|Ltd|No))\.$")
"""The end of a sentence of prose (eight words or more), not of a company's name."""

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
    if YEAR_CELL.fullmatch(text):
        return False
    q = parse_quantity(text)
    return q is not None and q.kind != "date"


def _parse(line: list[Word], char: float) -> Parsed:
    words = _unglued(sorted((w for w in line if w[2].strip()), key=lambda w: w[0]), char)
    limit = _gap_limit(words, char)
    phrases: list[Phrase] = []
    for x0, x1, text in words:
        last = phrases[-1] if phrases else None
        if last and x0 - last.x1 <= limit and not _SIGN.fullmatch(text) and not (
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
        if m and (_SIGN.fullmatch(m[2]) or _is_figure(m[2])):
            cut = x0 + (x1 - x0) * len(m[1]) / len(text)
            out += [(x0, cut, m[1]), (cut, x1, m[2])]
        elif out and x0 - out[-1][1] < 0.35 * char and _PIECE.fullmatch(out[-1][2]) and (
                _PIECE.fullmatch(text) and _is_figure(out[-1][2] + text)):
            out[-1] = (out[-1][0], x1, out[-1][2] + text)
        else:
            out.append((x0, x1, text))
    return out


def _gap_limit(words: list[Word], char: float) -> float:
    """The widest gap between two words of one phrase: a character and a half; on a line
    with no figures (a header), less where its words are set wide and a wider gap parts
    two headers ("Three months ended  Six months ended")."""
    gaps = [b[0] - a[1] for a, b in zip(words, words[1:]) if b[0] - a[1] <= 1.5 * char]
    if len(gaps) < 2 or any(_is_figure(w[2]) for w in words):
        return 1.5 * char
    return max(0.6 * char, min(1.5 * char, 1.3 * min(g for g in gaps if g > 0.1 * char)
                               if any(g > 0.1 * char for g in gaps) else 1.5 * char))


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


def _column_of(p: Phrase, columns: list[tuple[float, float]], char: float) -> int | None:
    """The column a cell is in: the one it overlaps most, or the one clearly nearest
    (a dash centred under right-aligned figures); None when neither."""
    overlaps = [min(p.x1, b) - max(p.x0, a) for a, b in columns]
    best = max(range(len(columns)), key=lambda j: overlaps[j])
    if overlaps[best] > 0:
        return best
    gaps = sorted((-o, j) for j, o in enumerate(overlaps))
    if gaps[0][0] <= 3 * char and (len(gaps) == 1 or gaps[0][0] * 2 < gaps[1][0]):
        return gaps[0][1]
    return None


def _table(parsed: list[Parsed], start: int, end: int, char: float,
           page: int | None) -> Table | None:
    if end - start > 2 and _page_number(parsed[end - 1]):
        end -= 1
    columns = _columns([c for line in parsed[start:end] for c in line.cells
                        if c.figure and _DIGIT.search(c.text)], char)
    if not columns:
        return None
    area = _area(parsed[start:end], columns, char)
    while start > 0 and _label_only(parsed[start - 1], area) and scale_in(
            _text(parsed[start - 1], area)) is None:
        start -= 1  # headings above the first figures belong to the body
    lines = []
    for line in parsed[start:end]:
        if _glued(line.label):
            return None  # figures run into the label: its cells cannot be told apart
        cells = [""] * len(columns)
        for c in line.cells:
            j = _column_of(c, columns, char)
            if j is None or cells[j]:
                return None  # two cells in one column, or one in none: not sure of it
            cells[j] = c.text
        label = line.label if line.cells else _text(line, area)
        lines.append(Line(label=label, cells=cells))
    if _shifted(lines):
        return None
    top, headers, beside = _header(parsed, start, columns, area, char)
    notes, title = _notes(parsed, top, area)
    return assemble(headers, lines, notes=" ".join(notes + beside), title=title, page=page,
                    wraps=True)


def _shifted(lines: list[Line]) -> bool:
    """Whether the rows with the most cells fill different columns: a block of rows set
    a column further over than the rest, so that positions cannot tell which is which."""
    filled = [frozenset(j for j, c in enumerate(line.cells) if c) for line in lines]
    most = max(len(f) for f in filled)
    return most < len(lines[0].cells) and len({f for f in filled if len(f) == most}) > 1


def _page_number(line: Parsed) -> bool:
    """A line that is only a page number (under a table, with no blank line between)."""
    return not line.label and len(line.cells) == 1 and bool(
        regex.fullmatch(r"\d{1,3}", line.cells[0].text))


def _glued(label: str) -> bool:
    """Whether a label ends in two figures: columns set too close to be told apart."""
    figures = 0
    for token in reversed(label.split()):
        if _SIGN.fullmatch(token):
            continue
        if not _is_figure(token):
            break
        figures += 1
    return figures >= 2


@dataclass
class Area:
    """Where a table lies across its lines: its labels from `margin` to `labels_end`,
    its figures from `left` on. Words left of the margin are another column of the page
    (prose beside a table)."""

    margin: float
    labels_end: float
    left: float


def _area(body: list[Parsed], columns: list[tuple[float, float]], char: float) -> Area:
    left = columns[0][0] - char
    starts = [line.label_x0 for line in body if line.cells and line.label_x0 is not None]
    ends = [p.x1 for line in body if line.cells for p in line.phrases
            if p.x1 < line.cells[0].x0 and p.x0 >= min(starts, default=left)]
    margin = min(starts, default=left) - 4 * char
    return Area(margin=margin, labels_end=min(left, max(ends, default=left)), left=left)


def _text(line: Parsed, area: Area) -> str:
    """A line's words within the table's area, left of its figures."""
    return " ".join(p.text for p in line.phrases if p.x0 >= area.margin and p.x1 <= area.left)


def _label_only(line: Parsed, area: Area) -> bool:
    """A line of label words only, within the table's labels."""
    inside = [p for p in line.phrases if p.x0 >= area.margin]
    return bool(inside) and not line.cells and inside[-1].x1 < area.left


def _header(parsed: list[Parsed], start: int, columns: list[tuple[float, float]],
            area: Area, char: float) -> tuple[int, list[str], list[str]]:
    """The first line of the header above `start`, each column's header text (its
    lines top to bottom) and the header's words left of the columns. A header phrase
    lies right of the labels, centred over the columns or the header below it; one
    reaching from the labels into the columns or centred elsewhere (a title, a sentence)
    ends the header."""
    parts: list[list[str]] = [[] for _ in columns]
    beside: list[str] = []
    top, blank, lowest = start, 0, True
    extent = (columns[0][0], columns[-1][1])  # a header line's words stand over the ones below
    for i in range(start - 1, max(-1, start - 9), -1):
        line = parsed[i]
        if not line.phrases:
            blank += 1
            if blank > 2:
                break
            continue
        over = [p for p in line.phrases if p.x1 > area.left and p.x0 >= area.margin]
        if line.cells or not over or any(
                p.x0 < area.labels_end or len(p.text) > 60 or not lowest and not (
                    extent[0] - char <= (p.x0 + p.x1) / 2 <= extent[1] + char) for p in over):
            break  # a title or a sentence: centred on the page, or reaching into the labels
        placed = _placed(over, columns, char, lowest)
        if placed is None:
            break
        for p, under in zip(over, placed):
            for j in under:
                parts[j].insert(0, p.text)
        extent = (min(extent[0], *(p.x0 for p in over)), max(extent[1], *(p.x1 for p in over)))
        beside[:0] = [_text(line, area)]
        top, blank, lowest = i, 0, False
    return top, [" ".join(p) for p in parts], beside


def _placed(phrases: list[Phrase], columns: list[tuple[float, float]], char: float,
            lowest: bool) -> list[list[int]] | None:
    """The columns each header phrase of a line stands over. On the line just above the
    figures, those it overlaps (or the one it nearly touches); on a line above that, where
    a phrase spans the columns of its group, each column goes to the nearest phrase
    ("Three Months Ended" | "Nine Months Ended"), and a line's only phrase spans the
    widest run of columns it is centred over ("Years Ended September 30," over three
    years). None when a phrase stands over no column."""
    if lowest:  # right-aligned over right-aligned figures, or a little off them
        own = [_overlapped(p, columns) or ([j] if (j := _column_of(p, columns, char / 2))
                                           is not None else []) for p in phrases]
        return own if all(own) else None
    if len(phrases) == 1:
        own = _overlapped(phrases[0], columns) or [_nearest(phrases[0], columns)]
        return [_centred(phrases[0], own, columns, char)]
    out: list[list[int]] = [[] for _ in phrases]
    for j, (a, b) in enumerate(columns):
        middle = (a + b) / 2
        distance = [max(p.x0 - middle, middle - p.x1, 0) for p in phrases]
        out[min(range(len(phrases)), key=lambda k: distance[k])].append(j)
    return out if all(out) else None


def _centred(p: Phrase, own: list[int], columns: list[tuple[float, float]],
             char: float) -> list[int]:
    """The widest run of columns around `own` that `p` is centred over."""
    middle = (p.x0 + p.x1) / 2
    best = own
    for first in range(min(own), -1, -1):
        for last in range(max(own), len(columns)):
            a, b = columns[first][0], columns[last][1]
            if last - first + 1 > len(best) and abs((a + b) / 2 - middle) <= max(
                    2 * char, 0.1 * (b - a)):
                best = list(range(first, last + 1))
    return best


def _overlapped(p: Phrase, columns: list[tuple[float, float]]) -> list[int]:
    return [j for j, (a, b) in enumerate(columns) if min(p.x1, b) - max(p.x0, a) > 0]


def _nearest(p: Phrase, columns: list[tuple[float, float]]) -> int:
    middle = (p.x0 + p.x1) / 2
    return min(range(len(columns)),
               key=lambda j: abs((columns[j][0] + columns[j][1]) / 2 - middle))


def _notes(parsed: list[Parsed], top: int, area: Area) -> tuple[list[str], str | None]:
    """The unit lines and the title above a table's header (its words within the table's
    area): up to five short lines, stopping at a sentence, a line with figures or four
    blank lines."""
    notes, titles, blank, seen = [], [], 0, 0
    for i in range(top - 1, -1, -1):
        inside = [p for p in parsed[i].phrases if p.x0 >= area.margin]
        text = " ".join(p.text for p in inside)
        if not text:
            blank += 1
            if blank > 3:
                break
            continue
        if any(p.figure for p in inside) or len(text) > 150 or _SENTENCE.search(text) or (
                seen == 5):
            break
        blank, seen = 0, seen + 1
        if scale_in(text) is not None:
            notes.insert(0, text)
        else:
            titles.insert(0, text)
    return notes, " ".join(titles) or None

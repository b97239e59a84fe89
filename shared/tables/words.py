"""Tables in positioned words: consumes the lines of a page, each its words as
`(x0, x1, text)` (a PDF page's words, or the words of text laid out in columns with
character offsets as positions), produces the tables they lay out.

Each line is read as a label and cells (lines.py). Lines with cells, and the label
lines between them, make a table's body; its columns are the x ranges its cells share
(a dash centred under right-aligned figures goes to the nearest); the lines above are
its header, notes and title (header.py). A table the reader is not sure of is left out:
two cells in one column, a cell in none, figures run into a label, or rows set a
column further over than the rest.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import regex

from .assemble import Line, assemble
from .header import (area_of, column_of, header_of, heading, label_only, lead_in_of, notes_of,
                     text_in)
from .lines import SIGN, Parsed, Phrase, Word, is_figure, parse_line
from shared.models.table import Table
from .units import scale_in, unit_clause

__all__ = ["Heads", "page_tables"]

_DIGIT = regex.compile(r"\d")
MAX_GAP_LINES = 8
"""Label lines with no figures a table's body may hold in a row (headings, wrapped labels)."""


@dataclass(frozen=True)
class Heads:
    """What a table's body is read under: its columns' x ranges, their header texts, the
    notes above them (its unit) and its title. A table at the top of the next page with
    no heads of its own, under the same columns, is read under them."""

    columns: list[tuple[float, float]]
    headers: list[str]
    notes: str
    title: str | None


def page_tables(lines: list[list[Word]], page: int | None = None,
                before: Heads | None = None) -> tuple[list[Table], Heads | None]:
    """Every table the lines lay out, top to bottom, and the heads of the page's last
    table when it reaches the page's foot (None when none does). `before`, the heads the
    page before ended under, are those of a first table at the page's top that states
    no heads of its own under the same columns (a balance sheet broken over two pages)."""
    words = [w for line in lines for w in line if w[2].strip()]
    if not words:
        return [], None
    char = statistics.median((w[1] - w[0]) / max(1, len(w[2])) for w in words)
    parsed = [parse_line(line, char) for line in lines]
    blocks = _blocks(parsed)
    running = _running_unit(parsed, blocks[0][0] if blocks else len(parsed))
    tables, heads = [], None
    for n, (start, end) in enumerate(blocks):
        top = n == 0 and _lines_with_words(parsed[:start]) <= CONTINUED_LINES
        read = _table(parsed, start, end, char, page, running, before if top else None)
        heads = None
        if read is not None:
            tables.append(read[0])
            if _lines_with_words(parsed[end:]) <= FOOT_LINES:
                heads = read[1]
    return tables, heads


CONTINUED_LINES = 6
"""How many lines (a running header) may stand above a table that continues the page
before's."""
FOOT_LINES = 4
"""How many lines (a page number, a footer) may stand under a table the next page may
continue."""


def _lines_with_words(parsed: list[Parsed]) -> int:
    return sum(1 for line in parsed if line.phrases)


_UNIT_LINE = regex.compile(r"^\(\s*(?:\$\s*|amounts\s+|dollars\s+|dollar\s+amounts\s+)?in\s+"
                           r"(?:thousands|millions|billions)\b[^()]*\)$", regex.I)
RUNNING_LINES = 6
"""How far down a page its running header reaches."""


def _running_unit(parsed: list[Parsed], first: int) -> str | None:
    """The unit a page's running header states for every table on it, a line of its own
    among its first lines, above its first table ("NOTES TO CONSOLIDATED FINANCIAL
    STATEMENTS (CONTINUED)" over "(In thousands, except share and per share data)");
    None when there is none."""
    texts = [" ".join(p.text for p in line.phrases) for line in parsed[:min(first, RUNNING_LINES)]
             if line.phrases and not line.cells]
    for n, text in enumerate(texts):
        if _UNIT_LINE.match(text.strip()):
            # a running header names what the page continues: the notes, a statement
            return text if any(_CONTINUES.search(t) for t in texts[:n]) else None
    return None


_CONTINUES = regex.compile(r"\bnotes\s+to\b|\(continued\)", regex.I)


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


def _table(parsed: list[Parsed], start: int, end: int, char: float, page: int | None,
           running: str | None = None,
           before: Heads | None = None) -> tuple[Table, Heads] | None:
    if end - start > 2 and _page_number(parsed[end - 1]):
        end -= 1
    columns = _columns([c for line in parsed[start:end] for c in line.cells
                        if c.figure and _DIGIT.search(c.text)], char)
    if not columns:
        return None
    area = area_of(parsed[start:end], columns, char)
    while start > 0 and (label_only(parsed[start - 1], area) or heading(
            parsed[start - 1], area.labels, area.left, char)) and scale_in(
            " ".join(p.text for p in parsed[start - 1].phrases)) is None:
        start -= 1  # headings above the first figures belong to the body
    area = area_of(parsed[start:end], columns, char)
    lines = []
    for line in parsed[start:end]:
        if _glued(line.label):
            return None  # figures run into the label: its cells cannot be told apart
        cells = [""] * len(columns)
        for c in line.cells:
            j = column_of(c, columns, char)
            if j is None or cells[j]:
                return None  # two cells in one column, or one in none: not sure of it
            cells[j] = c.text
        label = line.label if line.cells else text_in(line, area)
        lines.append(Line(label=label, cells=cells))
    if _shifted(lines):
        return None
    top, headers, beside = header_of(parsed, start, columns, area, char)
    notes, title = notes_of(parsed, top, area)
    lead = lead_in_of(parsed, top, area)
    if scale_in(" ".join([*notes, *beside, title or "", *filter(None, headers)])) is None and (
            clause := unit_clause(lead or "")):
        notes = [*notes, clause]  # "… Revenue is as follows (in thousands, except …):"
    if running and scale_in(" ".join([*notes, *beside, title or ""])) is None:
        notes = [*notes, running]  # the page's "(In thousands, …)", which it states for all
    heads = Heads(columns, headers, " ".join(notes + beside), title)
    if before is not None and _continued(heads, before, char):
        heads = Heads(columns, before.headers, before.notes, title or before.title)
    table = assemble(heads.headers, lines, notes=heads.notes, title=heads.title, page=page,
                     wraps=True)
    if table is not None and lead:
        table = table.model_copy(update={"lead_in": lead})
    return None if table is None else (table, heads)


def _continued(heads: Heads, before: Heads, char: float) -> bool:
    """Whether a table with `heads` continues the one read under `before`: it states no
    heads, unit nor title of its own (but "(continued)"), and its columns lie where those
    heads' columns lay."""
    return not any(heads.headers) and scale_in(heads.notes) is None and (
        heads.title is None or _CONTINUES.search(heads.title) and scale_in(
            heads.title) is None) and any(before.headers) and len(
        heads.columns) == len(before.columns) and all(
        min(b, d) - max(a, c) > -char for (a, b), (c, d) in zip(heads.columns, before.columns))


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
        if SIGN.fullmatch(token):
            continue
        if not is_figure(token):
            break
        figures += 1
    return figures >= 2

"""Rows of cells read as a table: consumes a grid of cell texts (an HTML <table>, a
JSON record's table, a TAT-QA table: the first column the labels), produces the column
headers, the notes above them and the body lines `assemble` makes a table of.

A "$" in a cell of its own joins the figure after it, a ")" or "%" the figure before it
(a header over the column left empty moves onto the figures); columns empty in every
row (separators) go. The header rows are the rows above the first that holds a figure
other than a year, the body the rows under them up to a row that starts another header
(the table's rows for another year). A header cell that spans columns (its colspan
lost, as in TAT-QA) covers the columns of its group: all of them when it is the row's
only cell (a change only those below it that name no period), equal groups when the
row's cells each fall in one; a column between or beside header cells that could be
under either, one naming a period, gets no period.
"""

from __future__ import annotations

import regex

from shared.tables.quantities import parse_quantity

from .assemble import Line
from .periods import COMPARE, YEAR_CELL, period_of
from .units import names_more, scale_in

_F = regex.IGNORECASE | regex.VERSION1
_PERIOD_WORDS = regex.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\bended\b|\bending\b|"
    r"\byears?\b|\bquarters?\b|\bmonths\b|\bweeks\b|\bfiscal\b|\bas\s+of\b|^at\b", _F)
_SIGN = regex.compile(r"[$€£¥₹]|US\$")
UNSURE = "\0"
"""A header part that could be either of two cells: the column's period cannot be told."""


Read = tuple[list[str | None], str, list[Line], list[list[str]]]


def read_rows(rows: list[list[str]]) -> Read | None:
    """(column headers, notes, body lines, the rows after the body) of a grid, a header
    None where the column could be under either of two header cells; None when the grid
    holds no figures. The rows after the body start a table of their own."""
    grid = [[" ".join(str(c).split()) if c is not None else "" for c in row] for row in rows
            if isinstance(row, (list, tuple))]
    width = max((len(r) for r in grid), default=0)
    if width < 2:
        return None
    grid = [r + [""] * (width - len(r)) for r in grid]
    first = _first_body_row(grid)
    if first is None:
        return None
    for row in grid[first:]:
        _join_signs(row)
    _move_headers(grid, first)
    keep = [0] + [j for j in range(1, width) if any(r[j] for r in grid)]
    grid = [[r[j] for j in keep] for r in grid]
    if len(keep) < 2:
        return None
    start = first
    while start > 0 and _body_heading(grid[start - 1], grid[:start - 1]):
        start -= 1  # headings just above the figures are the body's first
    headers, notes = _headers(grid[:start], len(keep) - 1)
    above = [r[1:] for r in grid[:start]]
    end = next((i for i in range(first + 1, len(grid)) if _new_header(grid[i], above)),
               len(grid))
    lines = [_line(r) for r in grid[start:end]]
    return headers, notes, lines, grid[end:]


def _body_heading(row: list[str], above: list[list[str]]) -> bool:
    """A row just above the first figures that heads the body, not the columns: a label
    alone (not a unit line), or, under a header row naming periods, one text in a column
    of figures that is not a period nor a unit ("Cloud and License Revenues:" under
    "2019 | Actual | Constant | 2018")."""
    if not any(row[1:]):
        return scale_in(row[0]) is None
    cells = [c for c in row[1:] if c]
    text = cells[0] if len(cells) == 1 else ""
    return not row[0] and bool(text) and not _is_figure(text) and not (
        _names_period(text) or scale_in(text) is not None or _PERIOD_WORDS.search(text)
        or COMPARE.search(text)) and any(any(_names_period(c) for c in r[1:] if c)
                                         for r in above)


def _names_period(text: str) -> bool:
    """A header cell that is a year or names a period."""
    return bool(YEAR_CELL.fullmatch(text) or period_of(text))


def _new_header(row: list[str], above: list[list[str]]) -> bool:
    """A row in the body that starts a header of its own (the same table for another
    year below the first, or for other columns): a header row repeated, or cells that
    are all periods, or periods where the header above has them and its own words
    elsewhere. The rows under it are not of the columns above."""
    cells = [c for c in row[1:] if c]
    if not cells or any(_is_figure(c) for c in cells):
        return False
    if row[1:] in above or all(_names_period(c) for c in cells):
        return True
    # the header again for earlier periods ("Dec 30, 2017 | Acquisitions | … | Dec 29,
    # 2018" under "Dec 29, 2018 | Acquisitions | … | Dec 28, 2019"): each cell a period
    # or the text of the header cell above it
    return any(period_of(c) for c in cells) and any(
        all(not c or period_of(c) or c == a[j] for j, c in enumerate(row[1:]) if j < len(a))
        for a in above)


def _line(row: list[str]) -> Line:
    """A body row as a line; a heading written in a column of figures (its label cell
    empty) is the line's label."""
    cells = [c for c in row[1:] if c]
    if not row[0] and len(cells) == 1 and not _is_figure(cells[0]):
        return Line(label=cells[0], cells=[""] * (len(row) - 1))
    return Line(label=row[0], cells=row[1:])


def _is_figure(text: str) -> bool:
    """A cell that states a figure: not a year, a date, nor a unit line (`$000`, `(000)`)."""
    return bool(text) and parse_quantity(text) is not None and not YEAR_CELL.fullmatch(text) and (
        parse_quantity(text).kind != "date") and not (
        scale_in(text) is not None and not regex.search(r"[1-9]", text))


_NONE = regex.compile(r"(?i)none|nil|n/?a")
"""A cell that says its row has no figure there ("Dividend yield: None")."""


def _first_body_row(grid: list[list[str]]) -> int | None:
    """The first row with a figure, or a labelled row above it whose cells say it has
    none ("Dividend yield | None | None | None" over "Expected volatility | 27.4% | …"):
    a row of the body, not a header of the columns."""
    first = next((i for i, row in enumerate(grid) if any(_is_figure(c) for c in row[1:])), None)
    if first is None:
        return None
    return next((i for i, row in enumerate(grid[:first]) if row[0] and any(row[1:]) and all(
        _NONE.fullmatch(c) for c in row[1:] if c)), first)


def _join_signs(row: list[str]) -> None:
    """A currency sign in a cell of its own onto the figure right of it; a lone ")" or
    "%" onto the figure left of it."""
    for j, text in enumerate(row):
        if j == 0:
            continue
        if _SIGN.fullmatch(text):
            nxt = next((k for k in range(j + 1, len(row)) if row[k]), None)
            if nxt is not None and parse_quantity(row[nxt]) is not None:
                row[nxt], row[j] = f"{text}{row[nxt]}", ""
        elif text in (")", "%", ")%", "%)"):
            prev = next((k for k in range(j - 1, 0, -1) if row[k]), None)
            if prev is not None and parse_quantity(row[prev] + text) is not None:
                row[prev], row[j] = row[prev] + text, ""


def _move_headers(grid: list[list[str]], first: int) -> None:
    """Header cells over a column left empty by joined signs (a "$" column under a year
    spanning "$" and figure) onto the column of figures beside it: repeated colspans go,
    a year over the "$" moves right onto its figures (or left, over a lone ")")."""
    for j in range(1, len(grid[0])):
        if any(r[j] for r in grid[first:]) or not any(r[j] for r in grid[:first]):
            continue
        for k in (j + 1, j - 1):
            if not 0 < k < len(grid[0]) or not any(r[k] for r in grid[first:]):
                continue
            if all(not r[j] or r[k] in ("", r[j]) for r in grid[:first]):
                for r in grid[:first]:
                    r[k], r[j] = r[k] or r[j], ""
                break


def _headers(rows: list[list[str]], count: int) -> tuple[list[str | None], str]:
    """Each column's header text, its rows' parts top to bottom, and the notes (unit
    lines, header text in the label column)."""
    notes: list[str] = []
    prefix: list[str] = []
    parts: list[list[str]] = [[] for _ in range(count)]
    header_rows = [r for r in rows if any(r[1:])]
    for row in rows:
        if row[0]:
            notes.append(row[0])
            if (_PERIOD_WORDS.search(row[0]) or YEAR_CELL.fullmatch(row[0])) and scale_in(
                    row[0]) is None:
                prefix.append(row[0].rstrip(":"))
    last = header_rows[-1] if header_rows else None
    periods = [bool(period_of(c)) for c in last[1:]] if last else []
    for n, row in enumerate(header_rows):
        cells = row[1:]
        if all(scale_in(c) is not None and not names_more(c) or not c for c in cells) and not any(
                period_of(c) for c in cells):
            notes.extend(c for c in cells if c)
            continue
        below = header_rows[n + 1][1:] if n + 1 < len(header_rows) else []
        for j, text in enumerate(_spread(cells, spanning=row is not last and not _wrapped(
                cells, below), periods=periods)):
            if text:
                parts[j].append(text)
    headers = [None if UNSURE in p else " ".join(prefix + p) for p in parts]
    return headers, " ".join(notes)


def _measure(text: str) -> bool:
    """A header naming what columns count ("Net additions (losses)", "% of
    penetration"), not when ("Years Ended", "2019 vs. 2018")."""
    return not _PERIOD_WORDS.search(text) and not period_of(text) and not YEAR_CELL.search(text)


_DANGLING = regex.compile(r"\b(?:of|at|and|the|for|to|in|from|on|by)\s*$", regex.I)
"""A head broken off mid-phrase. Fewer words than a label line that goes on
(assemble.py's `_CONNECTOR`): "Years ended December 31," and "Year Ended" end heads
that span their columns."""


def _wrapped(cells: list[str], below: list[str]) -> bool:
    """Whether a header row's one cell is the first line of its own column's head, not a
    head over all the columns: it breaks off mid-phrase ("Balance at Beginning of" over
    "Period (1/1/19)", "Land and" over "Ground") above a row that heads every column with
    something other than periods alone ("… | Increase / (Decrease) | Balance at End of
    Period"). "As of" over dates spans them."""
    said = [c for c in cells if c]
    return len(said) == 1 and bool(_DANGLING.search(said[0])) and len(below) == len(cells) \
        and all(below) and not all(period_of(c) for c in below)


def _spread(cells: list[str], *, spanning: bool, periods: list[bool]) -> list[str]:
    """Each column's text from one header row; cells of an upper row span their group.
    `periods`: which columns' lowest header cells name a period."""
    at = [j for j, c in enumerate(cells) if c]
    if not spanning or len(at) == len(cells):
        return cells
    n, k = len(cells), len(at)
    if k == 1 and COMPARE.search(cells[at[0]]) and any(periods) and not all(periods):
        # "Percent Change" over "2019 | Actual | Constant | 2018": the comparison spans
        # the columns comparing, not the years compared
        return [cells[at[0]] if not p else "" for p in periods]
    if k == 1:
        return [cells[at[0]]] * n
    if n % k == 0 and all(p // (n // k) == i for i, p in enumerate(at)):
        return [cells[at[j // (n // k)]] for j in range(n)]
    out = []
    for j in range(n):
        if cells[j]:
            out.append(cells[j])
            continue
        left = max((p for p in at if p < j), default=None)
        right = min((p for p in at if p > j), default=None)
        near = [cells[p] for p in (left, right) if p is not None]
        if left is not None and _measure(cells[left]) and periods[j] and periods[j - 1]:
            # it continues the periods under what they count ("Net additions (losses)"
            # over "August 31, 2019 | August 31, 2018"): a colspan lost
            out.append(cells[left])
            continue
        # under one of its neighbours, which one unknown: no period can be told from it
        out.append(UNSURE if any(period_of(c) for c in near) else "")
    return out

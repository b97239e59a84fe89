"""A table's header, notes and title: consumes the lines of a page (read by lines.py)
above a table's body and where its labels and columns lie, produces each column's header
text, the words beside the header, the unit lines above it and its title.

A header line's phrases lie right of the labels: on the line just above the figures
each stands over the columns it overlaps; on a line above that, where a phrase spans
the columns of its group, each column goes to the nearest phrase ("Three Months Ended" |
"Nine Months Ended"), and a line's only phrase spans the widest run of columns it is
centred over ("Years Ended September 30," over three years). A line reaching from the
labels into the columns, or centred elsewhere (a title, a sentence), ends the header,
as does a unit, "(Unaudited)" or a statement's name ("Consolidated Statements of
Income"). Above it, up to five short lines are the notes (those that state a unit) and
the title. Words left of the table's margin belong to another column of the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import regex

from .lines import Parsed, Phrase
from .units import scale_in

Columns = list[tuple[float, float]]
_TITLE = regex.compile(r"\bstatements?\s+of\b|\bbalance\s+sheets?\b|\bconsolidated\b"
                       r"|^\(?unaudited\)?$", regex.IGNORECASE)
"""Words of a statement's title or its notes, never of a column's header."""
_SENTENCE = regex.compile(r"(?:\S+\s+){7,}\S*(?<!\b(?:Inc|Corp|Co|Ltd|No))\.$")
"""The end of a sentence of prose (eight words or more), not of a company's name."""


def column_of(p: Phrase, columns: Columns, char: float) -> int | None:
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


@dataclass
class Area:
    """Where a table lies across its lines: its labels from `margin` to `labels_end`,
    its figures from `left` on. Words left of the margin are another column of the page
    (prose beside a table)."""

    margin: float
    labels_end: float
    left: float
    labels: float
    """Where the rows' labels, or the headings among them, start."""


OUTDENT = 8
"""How many characters left of the rows' labels a heading among them may start
("SUPPLEMENTAL DISCLOSURE OF CASH FLOW INFORMATION:" set at the page's margin over rows
indented under it)."""


def area_of(body: list[Parsed], columns: Columns, char: float) -> Area:
    left = columns[0][0] - char
    starts = [line.label_x0 for line in body if line.cells and line.label_x0 is not None]
    first = min(starts, default=left)
    ends = [p.x1 for line in body if line.cells for p in line.phrases
            if p.x1 < line.cells[0].x0 and p.x0 >= first]
    headings = [line.phrases[0].x0 for line in body if heading(line, first, left, char)]
    labels = min([first, *headings])
    return Area(margin=labels - 4 * char, labels_end=min(left, max(ends, default=left)),
                left=left, labels=labels)


def heading(line: Parsed, labels: float, left: float, char: float) -> bool:
    """A line of words only, ending left of the figures and starting at most OUTDENT
    characters left of the rows' labels (at `labels`): a heading among the rows."""
    return bool(line.phrases) and not line.cells and line.phrases[-1].x1 < left and (
        line.phrases[0].x0 >= labels - OUTDENT * char)


def text_in(line: Parsed, area: Area) -> str:
    """A line's words within the table's area, left of its figures."""
    return " ".join(p.text for p in line.phrases if p.x0 >= area.margin and p.x1 <= area.left)


def label_only(line: Parsed, area: Area) -> bool:
    """A line of label words only, within the table's labels."""
    inside = [p for p in line.phrases if p.x0 >= area.margin]
    return bool(inside) and not line.cells and inside[-1].x1 < area.left


def header_of(parsed: list[Parsed], start: int, columns: Columns,
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
        if lowest and over and not line.cells and all(scale_in(p.text) is not None
                                                      for p in over):
            beside[:0] = [" ".join(p.text for p in over)]
            continue  # "(In millions)" set between the column heads and the figures
        if line.cells or not over or any(
                p.x0 < area.labels_end or len(p.text) > 60 or _TITLE.search(p.text)
                or scale_in(p.text) is not None or not lowest and not (
                    extent[0] - char <= (p.x0 + p.x1) / 2 <= extent[1] + char) for p in over):
            break  # a title, a note or a sentence: centred on the page, or in the labels
        placed = _placed(over, columns, char, lowest, [p[-1] if p else "" for p in parts])
        if placed is None:
            break
        for p, under in zip(over, placed):
            for j in under:
                parts[j].insert(0, p.text)
        extent = (min(extent[0], *(p.x0 for p in over)), max(extent[1], *(p.x1 for p in over)))
        beside[:0] = [text_in(line, area)]
        top, blank, lowest = i, 0, False
    return top, [" ".join(p) for p in parts], beside


def _placed(phrases: list[Phrase], columns: Columns, char: float,
            lowest: bool, below: list[str]) -> list[list[int]] | None:
    """The columns each header phrase of a line stands over. On the line just above the
    figures, those it overlaps (or the one it nearly touches); on a line above that, where
    each phrase spans the columns of its group, the phrases left to right take the
    consecutive runs of columns they are best centred over ("Three Months Ended" |
    "Nine Months Ended"), and a line's only phrase spans the widest run of columns it is
    centred over ("Years Ended September 30," over three years). None when a phrase
    stands over no column."""
    if lowest:  # right-aligned over right-aligned figures, or a little off them
        own = [_overlapped(p, columns) or ([j] if (j := column_of(p, columns, char / 2))
                                           is not None else []) for p in phrases]
        return own if all(own) else None
    if len(phrases) == 1:
        own = _overlapped(phrases[0], columns) or [_nearest(phrases[0], columns)]
        return [_centred(phrases[0], own, columns, char)]
    # the phrases, left to right, over consecutive runs of columns: the runs each phrase
    # is best centred over ("$ 33,981" under "Six Months Ended" starts nearer "Three
    # Months Ended", whose run it is not in)
    order = sorted(range(len(phrases)), key=lambda k: phrases[k].x0)
    if len(phrases) > len(columns):
        return None
    size, left = divmod(len(columns), len(phrases))
    runs = [below[i:i + size] for i in range(0, len(columns), size)]
    if not left and size > 1 and all(run == runs[0] for run in runs):
        # the same heads under each ("2022 2021 | 2022 2021"): a run each, however the
        # phrases are set over them (Microsoft sets "Three Months Ended" flush right)
        bounds = tuple(range(0, len(columns) + 1, size))
        return _runs(phrases, columns, char, order, bounds)

    def off_centre(cuts: tuple[int, ...]) -> float:
        bounds = (0, *cuts, len(columns))
        return sum(abs((phrases[k].x0 + phrases[k].x1) / 2
                       - (columns[first][0] + columns[last - 1][1]) / 2)
                   for k, first, last in zip(order, bounds, bounds[1:]))

    cuts = min(combinations(range(1, len(columns)), len(phrases) - 1), key=off_centre)
    return _runs(phrases, columns, char, order, (0, *cuts, len(columns)))


def _runs(phrases: list[Phrase], columns: Columns, char: float, order: list[int],
          bounds: tuple[int, ...]) -> list[list[int]] | None:
    """The columns of each phrase (`order`: left to right) between consecutive `bounds`;
    None when a phrase stands over none of its run."""
    out: list[list[int]] = [[] for _ in phrases]
    for k, first, last in zip(order, bounds, bounds[1:]):
        if phrases[k].x1 < columns[first][0] - 2 * char \
                or phrases[k].x0 > columns[last - 1][1] + 2 * char:
            return None  # over none of its run: a note, not a column head
        out[k] = list(range(first, last))
    return out


def _centred(p: Phrase, own: list[int], columns: Columns,
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


def _overlapped(p: Phrase, columns: Columns) -> list[int]:
    return [j for j, (a, b) in enumerate(columns) if min(p.x1, b) - max(p.x0, a) > 0]


def _nearest(p: Phrase, columns: Columns) -> int:
    middle = (p.x0 + p.x1) / 2
    return min(range(len(columns)),
               key=lambda j: abs((columns[j][0] + columns[j][1]) / 2 - middle))


def lead_in_of(parsed: list[Parsed], top: int, area: Area) -> str | None:
    """The sentence ending in a colon just above a table's heads, however long its lines
    (up to five), from where it starts: a line that begins it in capitals, or the first
    line under a blank line or the end of another sentence."""
    lines: list[str] = []
    for i in range(top - 1, -1, -1):
        inside = [p for p in parsed[i].phrases if p.x1 > area.margin]
        if inside and _MARK_ONLY.fullmatch(inside[0].text):
            inside = inside[1:]  # "(1) Includes stock-based compensation expense as follows"
        text = " ".join(p.text for p in inside)
        if not text:
            if lines:
                break
            continue
        if any(p.figure for p in inside) or _SENTENCE.search(text) or len(lines) == 5:
            break
        if not lines and not text.endswith(":"):
            return None
        ends = list(_SENTENCE_END.finditer(text))
        if ends:  # another sentence ends on this line: the lead-in starts after it
            lines.insert(0, text[ends[-1].end():])
            break
        lines.insert(0, text)
    return " ".join(lines) or None


_MARK_ONLY = regex.compile(r"\(?\d{1,2}\)|\(?[a-z]\)|[*†‡]")
_SENTENCE_END = regex.compile(r"[.;]\s+(?=\p{Lu})")


def notes_of(parsed: list[Parsed], top: int, area: Area) -> tuple[list[str], str | None]:
    """The unit lines and the title above a table's header (its words that reach into
    the table's area: a lead-in set at the page's margin, left of labels indented under
    a heading, is the table's; prose of another column ends left of it): up to five
    short lines, stopping at a sentence, a line with figures or four blank lines."""
    notes, titles, blank, seen = [], [], 0, 0
    for i in range(top - 1, -1, -1):
        inside = [p for p in parsed[i].phrases if p.x1 > area.margin]
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

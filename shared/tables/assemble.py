"""A table from its parts: consumes what a reader found (the column headers, the lines of
the body as a label and one cell text per column, the notes and title above it),
produces a `Table` with its columns' periods, its unit and scale, its rows' sections and
totals, every cell typed; or None when the parts do not make a table one can read.

A body line with no cells is a section heading ("Cash flows from investing
activities:"), or, where labels can wrap (text laid out in columns, PDF words), the
first part of the next line's label when that one reads as its continuation ("Purchase
of property and" / "equipment  (1,234)"). A row is a total when its label says so
("Total current liabilities", "Net cash provided by …"). Per-share rows are in units
whatever the table's scale ("in thousands, except per share data"); share counts are
numbers, not money; a row or column about percentages holds percents.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from shared.models.quantity import Quantity
from shared.tools.quantities import parse_quantity

from .model import Cell, Column, Row, Table
from .periods import period_of
from .units import PER_SHARE, SHARES, currency_in, excepted, scale_in

_F = regex.IGNORECASE | regex.VERSION1
_TOTAL = regex.compile(r"^(?:total|sub-?total|net\s+cash|net\s+(?:increase|decrease|change)\s+in\s+"
                       r"cash|cash(?:\s+and\s+\S+)*\s+at\s+end)\b", _F)
_FOOTNOTE = regex.compile(r"(?:\s*(?:\((?:[a-z]|\d{1,2})\)|\[\d{1,2}\]|[*†‡§]+|[¹²³⁴⁵⁶⁷⁸⁹⁰]+))+$", _F)
_LEADERS = regex.compile(r"(?:\s*\.){2,}\s*$|\s*[$€£]\s*$")
_PERCENT = regex.compile(r"%|\bper\s*cent\b|\bpercent(?:age)?\b", _F)
_CONNECTOR = regex.compile(r"(?:\b(?:and|or|of|for|in|to|on|from|by|the|with|at|net|per|as|a|"
                           r"an|under|into|other)|[,(&/-])$", _F)


@dataclass
class Line:
    """A body line as a reader found it: its label and one cell text per column ("" where
    it has none)."""

    label: str
    cells: list[str]


def assemble(headers: list[str | None], lines: list[Line], *, notes: str = "",
             title: str | None = None, page: int | None = None,
             wraps: bool = False) -> Table | None:
    """The table `headers` (one text per column; None for a column whose header the
    reader could not tell) and `lines` make; `notes` is the text between the title and
    the columns ("(In thousands, except per share data)")."""
    if not headers or not any(any(c for c in line.cells) for line in lines):
        return None
    context = " ".join(filter(None, (title, notes, *headers)))
    scale = scale_in(context) or 0
    cells_text = " ".join(c for line in lines for c in line.cells)
    unit = currency_in(" ".join(filter(None, (title, notes)))) or currency_in(cells_text) or (
        "USD" if regex.search(r"\$", context) else None)
    per_share_out, shares_out = excepted(context)
    columns = [Column(header=h or "", period=period_of(h) if h else None) for h in headers]
    percent_columns = [bool(_PERCENT.search(h or "")) for h in headers]
    rows: list[Row] = []
    section: str | None = None
    pending: list[str] = []
    for line in lines:
        label = _clean(line.label)
        if not any(line.cells):
            if label:
                pending.append(label)
            continue
        if wraps:
            while pending and _continues(pending[-1], label):
                label = f"{pending.pop()} {label}".strip()
        if pending:
            section = _heading(pending[-1])
            pending = []
        total = bool(_TOTAL.match(label)) or (not label and bool(rows))
        in_section = section or ""
        per_share = bool(PER_SHARE.search(label) or PER_SHARE.search(in_section))
        row_scale = 0 if per_share or (shares_out and SHARES.search(label)) else scale
        row_unit = None if SHARES.search(label) and not per_share else unit
        percent_row = bool(_PERCENT.search(label))
        cells = [_cell(text, row_unit, row_scale, percent_row or percent_columns[i])
                 for i, text in enumerate(line.cells)]
        rows.append(Row(label=label, cells=cells, section=section, total=total))
        if total and label:
            section = None
    if not rows:
        return None
    return Table(page=page, title=title or None, unit=unit, scale=scale, columns=columns,
                 rows=rows)


def _clean(label: str) -> str:
    label = " ".join((label or "").split())
    label = _LEADERS.sub("", _FOOTNOTE.sub("", label)).strip()
    return label


def _heading(label: str) -> str:
    return label.rstrip(":").strip()


def _continues(first: str, label: str) -> bool:
    """Whether `label` reads as the rest of `first`, a label line with no figures."""
    if first.endswith(":") or not label:
        return False
    return label[0].islower() or label[0] in "(&" or bool(_CONNECTOR.search(first))


def _cell(text: str, unit: str | None, scale: int, percent: bool) -> Cell | None:
    text = " ".join((text or "").split())
    if not text:
        return None
    quantity = parse_quantity(text, unit=unit, scale=scale)
    if quantity is not None and percent and quantity.kind in ("number", "money") and not (
            regex.search(r"[$€£¥₹]", text)):
        quantity = Quantity(kind="percent", amount=quantity.amount, text=quantity.text)
    return Cell(text=text, quantity=quantity)

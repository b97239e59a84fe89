"""A table from its parts: consumes what a reader found (the column headers, the lines of
the body as a label and one cell text per column, the notes and title above it),
produces a `Table` with its columns' periods, its unit and scale, its rows' sections and
totals, every cell typed; or None when the parts do not make a table one can read.

A body line with no cells is a section heading ("Cash flows from investing
activities:"), or, where labels can wrap (text laid out in columns, PDF words), the
first part of the next line's label when that one reads as its continuation ("Purchase
of property and" / "equipment  (1,234)"). A row is a total when its label says so
("Total current liabilities", "Net cash provided by …"), or when its figures are, in
every column, the sum of the rows above it back to the last total or heading, two or
more of them ("Swiss", "Non-Swiss", then "Income before taxes"). Per-share rows are in units
whatever the table's scale ("in thousands, except per share data"); share counts are
numbers, not money, and so are the figures of a column whose header counts ("Number of
Shares") or gives a duration ("Remaining Contractual Term (in Years)") beside a column
of money ("Weighted-Average Exercise Price Per Share": money in units); a row or column
about percentages holds percents, and so does a
column whose first and last figures carry "%" and none a currency (a rate
reconciliation writes the sign on those lines only). A table of quarters down the side
(`Fourth Quarter` under `2019:`, columns `High` and `Low`) is turned to have its quarters
as columns (quarters.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import regex

from shared.models.quantity import Quantity
from shared.tables.quantities import parse_quantity

from shared.models.table import Cell, Column, Row, Table
from .periods import MARK, period_context, period_of
from .quarters import quarters_across
from .units import PEOPLE, PER_SHARE, SHARE_COUNT, currency_in, excepted, scale_in

_F = regex.IGNORECASE | regex.VERSION1
_TOTAL = regex.compile(r"^(?:total|sub-?total|net\s+cash|net\s+(?:increase|decrease|change)"
                       r"\s+in\s+cash|cash(?:\s+and\s+\S+)*\s+at\s+end)\b", _F)
_FOOTNOTE = regex.compile(rf"(?:\s*{MARK})+(?=\s*:?$)", _F)
_LEADERS = regex.compile(r"(?:\s*[.…_]){2,}\s*[$€£]?\s*$|\s+[$€£.]\s*$")
_PERCENT_ONLY = regex.compile(
    r"(?:%|percent(?:age)?)(?:\s+of\s+(?:net\s+)?(?:revenues?|sales|total))?", _F)
_PERCENT = regex.compile(r"%|\bper\s*cent\b|\bpercent(?:age)?\b", _F)
_CONNECTOR = regex.compile(r"(?:\b(?:and|or|of|for|in|to|on|from|by|the|with|at|net|per|as|a|"
                           r"an|under|into|other|ended|ending|during|through|than|less|"
                           r"including|excluding|before|after|between|over)|[,;(&/–-])$", _F)

_MINOR = regex.compile(r"from|with|into|onto|over|than|upon|under|after|before|during|"
                       r"through|between|within|without|against|about", _F)
"""Words of four letters or more a title writes in lower case."""


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
    scale = scale_in(" ".join(filter(None, (title, notes)))) or scale_in(context) or 0
    cells_text = " ".join(c for line in lines for c in line.cells)
    unit = currency_in(" ".join(filter(None, (title, notes)))) or currency_in(cells_text) or (
        "USD" if regex.search(r"\$", context) else None)
    shares_out = excepted(context)[1]
    around = period_context(" ".join(filter(None, (title, notes))))
    columns = _percent_pairs([Column(header=h or "", period=period_of(h, around) if h else None)
                              for h in headers])
    percent_columns = [bool(_PERCENT.search(h or "")) for h in headers]
    column_units = [_column_unit(h or "", unit, scale, shares_out) for h in headers]
    rows: list[Row] = []
    section: str | None = None
    pending: list[str] = []
    ended = False  # the last pending line ends in a footnote mark: the label is whole
    for line in lines:
        label = _clean(line.label)
        marked = label != _clean(line.label, marks=False)
        if not any(line.cells):
            if label and pending and wraps and not ended and _continues(pending[-1], label):
                pending[-1] = f"{pending[-1]} {label}"
            elif label:
                pending.append(label)
            ended = ended if not label else marked
            continue
        # a label the table has stated on its own line before is a row of its own under
        # the next heading ("Automotive segment": Revenues, Gross profit; "Energy
        # generation and storage segment": Revenues, …), not the rest of it; nor does a
        # label go on after a footnote mark ("… attributable to common stockholders (1)")
        if wraps and not ended and not any(r.label == label for r in rows):
            while pending and _continues(pending[-1], label):
                label = f"{pending.pop()} {label}".strip()
        if wraps and not label and pending and not pending[-1].endswith(":"):
            # figures set on the line under their label ("Other long-term liabilities" /
            # "1,904  476  495"): the label's row, not a total under it as a heading
            label = pending.pop()
        ended = False
        if pending:
            section = _heading(pending[-1])
            pending = []
        total = bool(_TOTAL.match(label)) or (not label and bool(rows))
        row_unit, row_scale = _row_unit(label, section or "", unit, scale, shares_out)
        percent_row = bool(_PERCENT.search(label))
        cells = [_cell(text, *(column_units[i] if i < len(column_units) and column_units[i]
                               else (row_unit, row_scale)), percent_row or percent_columns[i])
                 for i, text in enumerate(line.cells)]
        rows.append(Row(label=label, cells=cells, section=section, total=total,
                        marked=marked))
        if total and _closes(label, section):
            section = None
    if not rows:
        return None

    def cell_of(text: str, label: str, section: str | None, header: str) -> Cell | None:
        row_unit, row_scale = _row_unit(label, section or "", unit, scale, shares_out)
        return _cell(text, row_unit, row_scale,
                     bool(_PERCENT.search(label) or _PERCENT.search(header)))
    table = Table(page=page, title=title or None, unit=unit, scale=scale, columns=columns,
                  rows=_shares_of_rows(_sums(_percent_columns(_year_columns(rows, columns)))))
    return quarters_across(table, cell_of)


_YEAR_HEADER = regex.compile(r"\byears?\b|\bexpir|\bmatur|\bdates?\b", _F)
_YEAR_CELL = regex.compile(r"^(?:19|20)\d{2}(?:\s+or\s+\p{L}+)?$", _F)


def _year_columns(rows: list[Row], columns: list[Column]) -> list[Row]:
    """`rows`, with no figure in a column of years ("Last Fiscal Year of Expiration":
    `2039`, `2039 or indefinite`; a header that names no period itself): a year the
    column states is when, never an amount."""
    years = [not column.period and bool(_YEAR_HEADER.search(column.header)) and all(
        _YEAR_CELL.match(c.text) for r in rows if i < len(r.cells) and (c := r.cells[i]))
        and any(i < len(r.cells) and r.cells[i] for r in rows)
        for i, column in enumerate(columns)]
    if not any(years):
        return rows
    return [r.model_copy(update={"cells": [
        c.model_copy(update={"quantity": None}) if c is not None and years[i] else c
        for i, c in enumerate(r.cells)]}) for r in rows]


_SHARE_OF = regex.compile(r"^(?:as\s+an?\s+)?(?:percent(?:age)?|%)\s+of\s+\D{1,40}$", _F)
"""A row that is a percentage of something and names nothing else ("Percentage of
revenue", "% of total net revenues")."""


def _shares_of_rows(rows: list[Row]) -> list[Row]:
    """`rows`, each percentage row that is the share of the figure row above it
    ("Product  $39,005" / "Percentage of revenue  75.1%") under that row's label as its
    heading: it is the product's percentage of revenue, the next one the service's."""
    out: list[Row] = []
    for row in rows:
        above = out[-1] if out else None
        if above is not None and _SHARE_OF.match(row.label) and above.label and (
                not _SHARE_OF.match(above.label)) and row.section == above.section and any(
                c is not None and c.quantity is not None and c.quantity.kind != "percent"
                for c in above.cells):
            row = row.model_copy(update={"section": above.label})
        out.append(row)
    return out


def _sums(rows: list[Row]) -> list[Row]:
    """`rows`, with those whose label does not say total marked totals when they add up
    the rows above them (`_adds_up`)."""
    out: list[Row] = []
    start = 0
    for row in rows:
        if out and row.section != out[-1].section:
            start = len(out)
        if not row.total and row.label and _adds_up(out[start:], row):
            row = row.model_copy(update={"total": True})
        out.append(row)
        if row.total:
            start = len(out)
    return out


def _adds_up(parts: list[Row], row: Row) -> bool:
    """Whether each figure of `row` is the sum of `parts`' figures in its column (to the
    total's last digit), with two or more parts and some column adding two non-zero
    figures. Money and numbers only, in one scale."""
    if len(parts) < 2:
        return False
    checked = added = 0
    for i, cell in enumerate(row.cells):
        q = cell.quantity if cell is not None else None
        if q is None or q.kind not in ("money", "number"):
            continue
        figures = []
        for part in parts:
            c = part.cells[i] if i < len(part.cells) else None
            if c is None or c.quantity is None:
                continue
            if c.quantity.kind != q.kind or c.quantity.scale != q.scale:
                return False
            figures.append(c.quantity.amount)
        step = Decimal(1).scaleb(q.amount.as_tuple().exponent)
        if abs(sum(figures, Decimal(0)) - q.amount) > step:
            return False
        checked += 1
        added += sum(1 for f in figures if f) >= 2
    return checked > 0 and added > 0


def whole_of(rows: list[Row], n: int) -> int | None:
    """The index of the total row that `rows[n]` is a part of: the first total after it
    under the same heading whose figures its parts add up to, in every column
    (`_adds_up`): the rows back to the last total before them, or, for a total of totals,
    those totals and the rows between them ("Total Electronic Components" and
    "Interconnect …" of "Total Net Sales"). None when the total that closes the row does
    not add up, or none does."""
    row = rows[n]
    start = n
    while start > 0 and rows[start - 1].section == row.section:
        start -= 1
    open_: list[int] = []  # rows no total has closed yet, in order
    block = 0  # where the rows since the last total begin in `open_`
    for i in range(start, len(rows)):
        if rows[i].section != row.section:
            return None
        if not rows[i].total:
            open_.append(i)
            continue
        parts = open_[block:]
        if len(parts) < 2 or not _adds_up([rows[p] for p in parts], rows[i]):
            parts = open_
            if not _adds_up([rows[p] for p in parts], rows[i]):
                if n in open_[block:]:  # a total that does not add up closes its block
                    return None
                open_ = open_[:block] + [i]
                block = len(open_)
                continue
        if i > n and n in parts:
            return i
        open_ = [p for p in open_ if p not in parts] + [i]
        block = len(open_)
    return None


def _percent_columns(rows: list[Row]) -> list[Row]:
    """Rows whose plain numbers are percents where their column is one: its first and
    last figures are written with "%" and none with a currency, as a rate reconciliation
    writes only its first and total lines so ("21.0%", "3.7", …, "13.0%")."""
    width = max(len(r.cells) for r in rows)
    percent = []
    for i in range(width):
        cells = [r.cells[i] for r in rows if i < len(r.cells) and r.cells[i] is not None
                 and regex.search(r"\d", r.cells[i].text)]
        percent.append(len(cells) > 2 and "%" in cells[0].text and "%" in cells[-1].text
                       and not any(regex.search(r"[$€£¥₹]", c.text) for c in cells))
    if not any(percent):
        return rows
    return [r.model_copy(update={"cells": [
        c.model_copy(update={"quantity": Quantity(kind="percent", amount=c.quantity.amount,
                                                  text=c.quantity.text)})
        if c is not None and c.quantity is not None and c.quantity.kind == "number"
        and percent[i] else c for i, c in enumerate(r.cells)]}) for r in rows]


def _percent_pairs(columns: list[Column]) -> list[Column]:
    """Columns of a table set in pairs, an amount and its percent ("2015  %  2014  %"):
    each percent column is of the period of the amount left of it. Only when every
    column with a period has its percent beside it (a lone "%" after the last year is a
    change)."""
    pairs = [i for i in range(1, len(columns)) if columns[i].period is None
             and columns[i - 1].period and _PERCENT_ONLY.fullmatch(
                 _own(columns[i].header, columns[i - 1].header))]
    dated = [i for i, c in enumerate(columns) if c.period]
    if not pairs or [i - 1 for i in pairs] != dated:
        return columns
    return [c.model_copy(update={"period": columns[i - 1].period}) if i in pairs else c
            for i, c in enumerate(columns)]


def _own(header: str, left: str) -> str:
    """`header` without the words it shares at its start with its left neighbour's."""
    mine, theirs = header.split(), left.split()
    shared = 0
    while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
        shared += 1
    return " ".join(mine[shared:])


_YEARS = regex.compile(r"\((?:in\s+)?years\)|\b(?:term|life|lives|period)\b.*\byears?\b", _F)
"""A column of durations ("Weighted-Average Remaining Contractual Term (in Years)")."""
_COUNT = regex.compile(r"\bnumber\b", _F)
_PRICE = regex.compile(r"\bweighted[\s-]+average\s+(?:grant[\s-]+date\s+)?(?:fair\s+value|"
                       r"(?:exercise\s+)?price)\b|\bexercise\s+price\b|\bprice\s+paid\b", _F)
"""A column of prices per share or option ("Weighted Average Grant Date Fair Value")."""


def _column_unit(header: str, unit: str | None, scale: int,
                 shares_out: bool) -> tuple[str | None, int] | None:
    """The unit and scale a column's header gives its figures whatever their rows are,
    where the table's unit is another column's ("Number of Shares" and "Weighted-Average
    Exercise Price Per Share" beside it, "NUMBER M" beside "$M"): a count or a duration is
    a number, a figure per share money in units; None when the header says neither (the
    rows say, `_row_unit`). A header that names a currency is money."""
    if not header or currency_in(header) or regex.search(r"[$€£¥₹]", header):
        return None
    own = scale_in(header)
    if PEOPLE.search(header) or SHARE_COUNT.search(header):
        return None, own if own is not None else 0 if shares_out else scale
    if PER_SHARE.search(header) or _PRICE.search(header):
        return unit, 0
    if _YEARS.search(header):
        return None, 0
    if _COUNT.search(header):
        return None, own if own is not None else scale
    return None


def _row_unit(label: str, section: str, unit: str | None, scale: int,
              shares_out: bool) -> tuple[str | None, int]:
    """The unit and scale of a row's figures: a share count is a number (in units when
    the table excepts share data), a per-share figure money in units, a label that states
    its own scale ("Revenue miles (in thousands)") a number in it."""
    own = scale_in(label) if scale_in(label) is not None else scale_in(section)
    if PEOPLE.search(label):
        return None, own or 0
    if SHARE_COUNT.search(label) or SHARE_COUNT.search(section):
        return None, own if own is not None else 0 if shares_out else scale
    if PER_SHARE.search(label) or PER_SHARE.search(section):
        return unit, 0
    if own is not None:
        return (currency_in(label) or currency_in(section)), own
    return unit, scale


def _clean(label: str, marks: bool = True) -> str:
    """`label` without dot leaders and (`marks`) the footnote marks after it."""
    label = " ".join((label or "").split())
    for _ in range(2):  # "Net Book Value Per Share (a) ......$": leaders, then the mark
        label = _LEADERS.sub("", label).strip()
        if marks:
            label = _FOOTNOTE.sub("", label).strip()
    return label


def _heading(label: str) -> str:
    return label.rstrip(":").strip()


def _closes(total: str, section: str | None) -> bool:
    """Whether the total labelled `total` ends its section: "Total revenues" under
    "Revenues" does; a part's subtotal, saying the heading's words and more of its own,
    does not ("Total automotive revenues", then "Energy generation and storage" and
    "Services and other" are revenues still: Tesla's 10-K). Words such as "net" are no
    part ("Total revenues, net" ends "Revenues")."""
    said, heading = (_stems(text) - _NO_PART for text in (total, section or ""))
    return not heading or not (heading < said)


def _stems(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w
            for w in regex.findall(r"\w+", text.lower())}


_NO_PART = {"total", "subtotal", "sub", "net", "and", "of", "the", "in", "for"}


_PART = regex.compile(r"(?:basic|diluted)(?:\s*(?:and|&)\s*(?:basic|diluted))?", _F)
"""A label that names a part of the line above, never its rest: "Net income per share of
common stock attributable to common stockholders" / "Basic" / "Diluted" (Tesla's 10-K)."""


def _continues(first: str, label: str) -> bool:
    """Whether `label` reads as the rest of `first`, a label line with no figures: it
    starts in lower case or with a dash, `first` ends in a word that needs more ("and",
    "of", a comma, "Net income-"), or `first` is a long line in sentence case (a heading
    is short, in title case or capitals, or ends with a colon) and `label` is not a
    `_PART` of it."""
    if first.endswith(":") or not label:
        return False
    if label[0].islower() or label[0] in "(&-–" or _CONNECTOR.search(first):
        return True
    if _PART.fullmatch(label):
        return False
    words = first.split()
    # a heading in title case writes its small words in lower case ("Cash Flows from
    # Investing Activities")
    named = [w for w in words if len(w) > 3 and w[0].isalpha() and not _MINOR.fullmatch(w)]
    capitals = sum(w[0].isupper() for w in named)
    return len(words) >= 5 and capitals < len(named)


def _cell(text: str, unit: str | None, scale: int, percent: bool) -> Cell | None:
    text = " ".join((text or "").split())
    if not text:
        return None
    quantity = parse_quantity(text, unit=unit, scale=scale)
    if quantity is not None and percent and quantity.kind in ("number", "money") and not (
            regex.search(r"[$€£¥₹]", text)):
        quantity = Quantity(kind="percent", amount=quantity.amount, text=quantity.text)
    return Cell(text=text, quantity=quantity)

"""Tables of quarters down the side, read the other way round: consumes an assembled
`Table` whose every row is a quarter (`Fourth Quarter` under the heading `2019:`, `First
Quarter` beside columns headed `2018 High` / `2018 Low`, `Q3 2019`) and whose columns
name things rather than periods (`High`, `Low`, `Revenue`), produces the same figures as
a table of those things by quarter: a row per column (`High`), a column per quarter
(`Fourth Quarter 2019`, period `2019-Q4`). A line item is then read by row and period
as in any other table ("the high price in the fourth quarter of 2019").

Only a table every row of which is one quarter of a known year turns: the year from the
row's label, its heading, or the one year every column's header names; no quarter twice;
every column named by words of its own (what its header says beyond the year and the
words all headers share, which become the rows' section), no two alike and none a
period. Anything else is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable

import regex

from shared.models.table import Cell, Column, Row, Table

from .periods import header_quarter, period_of

_F = regex.IGNORECASE | regex.VERSION1
_YEAR_HEADING = regex.compile(r"^\s*(?P<fiscal>(?:fiscal\s+(?:year\s+)?|FY\s*))?"
                              r"(?P<y>(?:19|20)\d{2})\s*:?\s*$", _F)
"""A heading that is a year and nothing else (`2019`, `2019:`, `Fiscal 2019`)."""
_YEAR = regex.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_QUARTER = regex.compile(r"^(?P<y>\d{4})-Q(?P<q>[1-4])$")

CellOf = Callable[[str, str, str | None, str], Cell | None]
"""How the assembler types a cell's text as a row's (`text`, row label, row section,
the column header it came from)."""


def quarters_across(table: Table, cell_of: CellOf) -> Table:
    """`table` turned so its quarters are columns, when every row is a quarter and every
    column a thing (the module's rules); else `table` itself."""
    quarters = _quarters(table)
    things = _things(table)
    if quarters is None or things is None:
        return table
    section, labels = things
    columns = [Column(header=header, period=period_of(header)) for header in quarters]
    rows = []
    for i, (column, label) in enumerate(zip(table.columns, labels)):
        cells = [cell_of(row.cells[i].text, label, section, column.header)
                 if i < len(row.cells) and row.cells[i] is not None else None
                 for row in table.rows]
        rows.append(Row(label=label, cells=cells, section=section))
    return table.model_copy(update={"columns": columns, "rows": rows})


def _quarters(table: Table) -> list[str] | None:
    """Each row's quarter as a column header (`Fourth Quarter 2019`, `Fiscal 2019 Third
    Quarter`), or None when some row is not one quarter of a known year, or two are the
    same."""
    shared_year = _shared_year(table)
    headers: list[str] = []
    seen: set[tuple[str, int]] = set()
    for row in table.rows:
        if (m := _QUARTER.match(period_of(row.label) or "")) and not row.section:
            year, quarter, fiscal = m["y"], int(m["q"]), False
        elif (quarter := header_quarter(row.label)) is None:
            return None
        elif m := _YEAR_HEADING.match(row.section or ""):
            year, fiscal = m["y"], bool(m["fiscal"])
        elif shared_year is not None and not row.section:
            year, fiscal = shared_year
        else:
            return None
        if (year, quarter) in seen:
            return None
        seen.add((year, quarter))
        label = " ".join(row.label.split()).rstrip(":")
        if not regex.search(r"quarter", label, _F):
            label = f"{label} Quarter"
        headers.append(f"Fiscal {year} {label}" if fiscal else f"{label} {year}")
    return headers if headers else None


def _shared_year(table: Table) -> tuple[str, bool] | None:
    """The one year every column's header names (`2018 Low`, `2018 High`), and whether
    as a fiscal year; None when they name none or different ones."""
    years = {tuple(_YEAR.findall(c.header)) for c in table.columns}
    if len(years) != 1 or len(next(iter(years))) != 1:
        return None
    fiscal = all(regex.search(r"\bfiscal\b|\bFY", c.header, _F) for c in table.columns)
    return next(iter(years))[0], fiscal


def _things(table: Table) -> tuple[str | None, list[str]] | None:
    """What the columns are (`High`, `Low`) and the words their headers share (`Common
    Stock Price Range`), or None when a column names a period, says nothing of its own
    or says what another says."""
    headers = [" ".join(_YEAR.sub(" ", c.header).split()) for c in table.columns]
    split = [h.split() for h in headers]
    common = 0
    while len(split) > 1 and all(len(s) > common for s in split) and len(
            {s[common].lower() for s in split}) == 1:
        common += 1
    labels = [" ".join(s[common:]) for s in split]
    if any(not label or period_of(label) is not None or header_quarter(label) is not None
           for label in labels) or len({label.lower() for label in labels}) != len(labels):
        return None
    if any(period_of(c.header) not in (None, *_YEAR.findall(c.header)) for c in table.columns):
        return None
    section = " ".join(split[0][:common]) or None
    return section, labels

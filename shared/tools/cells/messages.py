"""What EXTRACT by row says: consumes the tables, rows and columns the cell reader looked
at, produces the words of its output and errors — a cell's quote (the row as the table
writes it, the column read first), how a table, row and column are named (with the
periods of the columns), the rows nearest the one asked for, and the NOT_FOUND or
NOT_A_VALUE error saying why no cell was read and what to change.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.models.table import Row, Table

from ..rows import label_words, likeness
from .request import Request, item_names, period_text, request_of

NEAREST = 3
"""How many rows a NOT_FOUND names."""
QUOTE_CHARS = 300

TablesOf = Callable[[str], list[Table]]
"""`tables_of(doc_id) -> list[Table]`, in document order."""


def quote(table: Table, row: Row, column: int) -> str:
    """The row as the table writes it, the column read first: `Interest expense — 2016:
    130 (row: 2018: $39 · 2017: 80 · 2016: 130)`."""
    label = f"{row.section}: {row.label}" if row.section else row.label
    cells = " · ".join(f"{column_name(table, i)}: {c.text}" for i, c in enumerate(row.cells) if c)
    text = f"{label} — {column_name(table, column)}: {row.cells[column].text} (row: {cells})"
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 2] + "…)"


def column_name(table: Table, i: int) -> str:
    column = table.columns[i]
    return column.header or column.period or f"column {i + 1}"


def table_name(table: Table) -> str:
    name = f"table {table.title!r}" if table.title else "a table"
    return f"{name} (page {table.page})" if table.page else name


def where(row: Row, table: Table) -> str:
    return f"row {row.label!r} of {table_name(table)}"


def columns_named(table: Table) -> str:
    """The columns with the periods their headers name: `'2018' (2017-10-01..2018-09-30)`."""
    shown = []
    for i, column in enumerate(table.columns):
        name = column_name(table, i)
        period = column.period
        shown.append(repr(name) + (f" ({period})" if period and period != name else ""))
    return ", ".join(shown) or "none"


def rows_near(request: Request, evidence: Evidence,
             tables: list[Table]) -> list[tuple[float, str]]:
    """Rows whose labels come nearest the request's names (the step's own words count
    twice the library's), each with its table, document and columns."""
    found = []
    for table in tables:
        for row in table.rows:
            label = label_words(row.label)
            score = max((likeness(name, label) * (1 if own else 0.5)
                         for name, own in request.names), default=0.0)
            if score > 0:
                found.append((score, f"{row.label!r} in {table_name(table)} of "
                              f"{evidence.title!r}, columns {columns_named(table)}"))
    return sorted(found, key=lambda f: -f[0])[:NEAREST]


def nearest_rows(step: ExtractStep, documents: list[Evidence | None], tables_of: TablesOf,
                 limit: int = NEAREST) -> list[str]:
    """The rows of the documents' tables nearest `step.row`, best first, each with its
    table, page, document and columns (their periods): what `chordal debug` shows."""
    request = request_of(step)
    found: list[tuple[float, str]] = []
    for evidence in {e.doc_id: e for e in documents if e is not None}.values():
        found += rows_near(request, evidence, tables_of(evidence.doc_id))
    return [text for _, text in sorted(found, key=lambda f: -f[0])[:limit]]


def not_found(step: ExtractStep, request: Request, misses: list[tuple[str, str]],
               nearest: list[tuple[float, str]], bare: list[str], documents: int) -> ToolError:
    """Why no cell was read: the fitting rows' own reasons (no column for the period, a
    cell of another kind), else the nearest rows, else documents without tables."""
    without = (f"; {', '.join(map(repr, bare[:3]))} {'has' if len(bare) == 1 else 'have'} no "
               "tables (indexed as plain text: index the PDF or HTML file, or a record with "
               "`tables`)") if bare else ""
    if misses:
        kinds = {kind for kind, _ in misses}
        fix = ("give `quantity` the kind the cell holds, or read another row" if kinds == {"value"}
               else "give a period the table has, or the row of another table")
        return ToolError("NOT_A_VALUE" if kinds == {"value"} else "NOT_FOUND",
                         f"step {step.id}: row {step.row!r}{period_text(request)}: "
                         + "; ".join(dict.fromkeys(text for _, text in misses[:4]))
                         + f"{without}; {fix}")
    if bare and documents == len(bare):
        return ToolError("NOT_FOUND", f"step {step.id}: no table holds row {step.row!r}"
                         + without.replace("; ", ": ", 1))
    where = "its document" if documents == 1 else f"its {documents} documents"
    count = len(request.names) - 1
    names = (f" (nor any of the {count} names the domain library gives "
             f"{item_names(request)})" if count > 0 else "")
    shown = "; ".join(dict.fromkeys(text for _, text in sorted(nearest, key=lambda n: -n[0])
                                    [:NEAREST]))
    return ToolError("NOT_FOUND", f"step {step.id}: no table row of {where} is "
                     f"{step.row!r}{names}"
                     + (f"; nearest rows: {shown}" if shown else "; no table row shares a "
                        "word with it") + without
                     + "; name the row as the table writes it, or check that GET fetched the "
                     "document whose tables hold it")

"""EXTRACT by row in every period (`period: "all"`): consumes a step with `row` and the
documents and tables `read_cell` takes, produces the row's figure in each period of the
one table that states it in every one of its periods, earliest first: the figures'
texts as the value (a list), each typed in `quantities`, the row quoted and the
table's page as evidence. A plan that averages or adds a line item over the periods a
report shows ("the average cost of sales", "the total over all 3 years") cannot name
them before it sees the table; `mean($X)` and `sum($X)` in COMPUTE take the series, and
`change($X)`, `percent_change($X)` one of two periods.

Each period is read as a step naming it would read it, in that table alone (the same
rows fit, the same column is chosen). A table holds the row when it has two or more
periods, all of one length (years, or quarters: not a quarter beside a year), and every
one of them gives one figure. The tables that hold it must be of the same periods (a
five-year summary beside a three-year statement: the mean of which?); of them, those
where the row fits best answer (a row that is the item's own label over one that
qualifies it), and they must state one series (a summary repeating the statement states
the same); otherwise the step is AMBIGUOUS, naming each. None holds it: NOT_FOUND, saying where the row is stated when a
step without a period would read it, else the nearest rows as any EXTRACT by row does.
"""

from __future__ import annotations

from dataclasses import replace

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.models.table import Table
from shared.tables.periods import column_periods, one_length
from shared.tools.base import ToolOutput

from .messages import QUOTE_CHARS, TablesOf, column_name, table_name
from .read import Option, _answer, _options, _same, read_cells
from .request import periods_counted, request_of


def read_series(step: ExtractStep, documents: list[Evidence | None],
                tables_of: TablesOf) -> ToolOutput:
    """The row's figures in every period of the one table that holds it (see above)."""
    held: list[tuple[Evidence, Table, list[Option]]] = []
    seen: set[str] = set()
    for evidence in documents:
        if evidence is None or evidence.doc_id in seen:
            continue
        seen.add(evidence.doc_id)
        for table in tables_of(evidence.doc_id):
            if (cells := _in_every_period(step, evidence, table)) is not None:
                held.append((evidence, table, cells))
        if held:
            break  # the first document whose tables hold the row answers, as for one cell
    if not held:
        raise _not_found(step, documents, tables_of, periods_counted(step.period))
    spans = {_periods(table) for _, table, _ in held}
    if len(spans) > 1:  # a five-year summary beside a three-year statement: which mean?
        _ambiguous(step, held, "tables of different periods")
    best = min(cells[0].key for _, _, cells in held)
    held = [h for h in held if h[2][0].key == best]
    series = [h for n, h in enumerate(held)  # one figure each, as _same judges one cell's
              if not any(_one_series(h[2], other[2]) for other in held[:n])]
    if len(series) > 1:
        _ambiguous(step, series, "tables that state different figures")
    evidence, table, cells = series[0]
    row = cells[0].row
    figures = [c.row.cells[c.column].text for c in cells]
    periods = [table.columns[c.column].period for c in cells]
    label = f"{row.section}: {row.label}" if row.section else row.label
    quote = f"{label} — " + " · ".join(f"{column_name(table, c.column)}: {f}"
                                        for c, f in zip(cells, figures))
    quote = quote if len(quote) <= QUOTE_CHARS else quote[:QUOTE_CHARS - 1] + "…"
    return ToolOutput(
        value=figures, confidence="table_row" if cells[0].own else "line_item",
        document=evidence.model_copy(update={"page": table.page}),
        note=f"{_where(table, cells)}, in each of its {len(cells)} periods: "
             + ", ".join(f"{p}: {f}" for p, f in zip(periods, figures)),
        quote=quote, quantities=[c.quantity for c in cells])


def _one_series(a: list[Option], b: list[Option]) -> bool:
    """Whether two tables state one figure in each period (a summary repeating the
    statement, `5,119` in thousands beside `$5.1` million)."""
    return all(_same(x.quantity, y.quantity, signed=False) for x, y in zip(a, b))


def _ambiguous(step: ExtractStep, held: list[tuple[Evidence, Table, list[Option]]],
               what: str) -> None:
    shown = "; ".join(f"{_where(table, cells)}: " + ", ".join(
        f"{table.columns[c.column].period}: {c.row.cells[c.column].text}" for c in cells)
        for _, table, cells in held[:3])
    raise ToolError("AMBIGUOUS", f"step {step.id}: row {step.row!r} in every period fits "
                    f"{what}: {shown}; name the row as the table writes it, give the heading "
                    "it sits under, or name the periods one step each")


def _in_every_period(step: ExtractStep, evidence: Evidence, table: Table) -> list[Option] | None:
    """The cell the row names in each period of `table` (earliest first), each chosen as
    a step naming that period would choose it; None when a period gives none, or figures
    that differ, or the table has fewer than two periods or periods of two lengths, or
    not as many as the step counts (`all 3`)."""
    periods = _periods(table)
    if len(periods) < 2 or periods_counted(step.period) not in (None, len(periods)):
        return None
    request = request_of(step)
    cells = []
    for period in periods:
        options, _ = _options(replace(request, period=period), evidence, [table])
        if not options:
            return None
        try:
            out = _answer(step, request, options)
        except ToolError:
            return None  # cells of the period that state different figures
        cells.append(next(o for o in options if o.row.cells[o.column].text == out.value))
    return cells


def _periods(table: Table) -> tuple[str, ...]:
    """The periods `table`'s columns name, earliest first; none when they are of two
    lengths (a quarter beside a year)."""
    spans = column_periods(table)
    return tuple(spans) if one_length(spans.values()) else ()


def _where(table: Table, cells: list[Option]) -> str:
    return f"row {cells[0].row.label!r} of {table_name(table)}"


def _not_found(step: ExtractStep, documents: list[Evidence | None],
               tables_of: TablesOf, count: int | None) -> ToolError:
    """NOT_FOUND for a row no table states in every period (of `count` periods, when the
    step counts them): where a step without a period reads it, or the error such a step
    gets (the nearest rows)."""
    try:
        out, _ = read_cells(step.model_copy(update={"period": None, "fallback": None}),
                            documents, tables_of)
    except ToolError as e:
        return e
    periods = f"{count} periods" if count else "two or more periods"
    return ToolError("NOT_FOUND", f"step {step.id}: row {step.row!r} is stated ({out.note}), "
                     f"but no one table states it in each of {periods} of one length; name "
                     "the periods one step each, or check the row's name")

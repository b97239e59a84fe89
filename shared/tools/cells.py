"""EXTRACT by row: consumes a step with `row` (and `period`), the Evidence of the
documents its source holds (a GET's document; a top_k GET's or a SEARCH's, best first)
and a way to read a document's tables (`SearchBackend.tables`), produces the one cell
the row and period name: its text as the value, its `quantity` (in the table's unit
and scale), the row as the table writes it with the column's header as `quote`, and the
document's evidence with the table's page.

The row matches by words (shared/tools/rows.py) — the step's own, and the names the
domain library gives the line item (shared/tools/line_items.py: `capital expenditure`
is also `purchases of property, plant and equipment`) — the column by `period`
(shared/tables/periods.py `columns_for`; without one, the table's newest column, or its
one column of figures). The first document whose tables hold the row for that period
answers. Among the rows that fit, the best way of fitting wins: the label is the name,
then it is the name under its heading, then the name qualified after a comma; the
step's own words before the library's; then a heading the item sits under
(`investing activities`, or words the row gives in parentheses or before a colon);
then the fewest words beyond the name; then a total (`Total cost of goods sold` over
the `Cost of goods sold` line above it, a part of it).
Rows and columns that fit alike and state the same figure (a summary repeating the
statement) are one answer.

A step's `fallback` stands in for a cell that is not found or not a value (confidence
`fallback`, no evidence), never for an ambiguous one.

ToolError codes: NOT_FOUND (no row fits, or none has a figure for the period: the
message names the nearest rows and the columns their tables have), AMBIGUOUS (rows or
columns that fit alike state different figures: each is named), NOT_A_VALUE (the cell
is not a figure of the kind asked for, or is text), NOT_A_DOCUMENT (the source holds
no document), SEARCH_FAILED and SEARCH_UNAVAILABLE (the tables cannot be read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import regex

from shared.errors import SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import Evidence, ExtractStep
from shared.models.quantity import SCALE_WORDS, Quantity
from shared.tables.model import Cell, Row, Table
from shared.tables.periods import columns_for
from shared.tools.base import ToolOutput
from shared.tools.quantities import parse_quantity

from .line_items import LineItem, items_named
from .rows import Fit, Label, aside_words, fit, hints, label_words, likeness

_CONTINUES = regex.compile(r"^\s*(?:[-–—]|\p{Ll})")
_LEADS_ON = regex.compile(r"\b(?:of|in|for|by|to|from|on|with|at|as)\s*:?\s*$", regex.IGNORECASE)

NEAREST = 3
"""How many rows a NOT_FOUND names."""
QUOTE_CHARS = 300
FIGURE_KINDS = ("money", "number", "percent", "date")

TablesOf = Callable[[str], list[Table]]
"""`tables_of(doc_id) -> list[Table]`, in document order."""


def backend_tables(backend, step: ExtractStep) -> TablesOf:
    """`backend.tables`, its failures as the step's: SEARCH_UNAVAILABLE (transient: the
    executor retries) and SEARCH_FAILED."""
    def tables_of(doc_id: str) -> list[Table]:
        try:
            return backend.tables(doc_id)
        except SearchUnavailable as e:
            raise TransientToolError("SEARCH_UNAVAILABLE", f"step {step.id}: {e}") from None
        except StoreError as e:
            raise ToolError("SEARCH_FAILED", f"step {step.id}: {e}") from None
    return tables_of


@dataclass(frozen=True)
class Request:
    """What the step asks for, in words."""

    row: str
    names: tuple[tuple[Label, bool], ...]
    """Each name the row goes by, and whether it is the step's own words."""
    context: frozenset[str]
    """Heading words that prefer a row: the library's sections and the step's asides."""
    words: frozenset[str]
    """Every word of the names and asides: a label's parenthetical words beyond them
    count against it."""
    items: tuple[LineItem, ...]
    kind: str | None
    """The kind the step asks for (`quantity`), else the one the library gives the line
    item: a cell of another kind is not a value."""
    period: str | None


@dataclass(frozen=True)
class Option:
    """One cell a row and column name."""

    evidence: Evidence | None
    table: Table
    row: Row
    column: int
    quantity: Quantity
    key: tuple
    """Smaller is a better fit."""
    own: bool


def request_of(step: ExtractStep) -> Request:
    """The row, its names, the heading words and the kind `step` asks for."""
    item_text, aside = hints(step.row)
    items = items_named(item_text) or items_named(step.row)
    names = [(label_words(item_text), True)]
    names += [(label_words(n), False) for item in items for n in item.all_names()]
    unique = tuple(dict((n.words, (n, own)) for n, own in reversed(names)).values())[::-1]
    context = {w for text in (aside, *(s for i in items for s in i.sections))
               for w in label_words(text).words}
    kinds = {i.kind for i in items}
    kind = step.quantity if step.quantity in FIGURE_KINDS else (
        kinds.pop() if len(kinds) == 1 else None)
    words = {w for name, _ in unique for w in name.words} | context
    words |= set(label_words(aside).words)
    return Request(step.row, unique, frozenset(context), frozenset(words), tuple(items), kind,
                   step.period)


def read_cell(step: ExtractStep, documents: list[Evidence | None],
              tables_of: TablesOf) -> ToolOutput:
    """The cell `step.row` and `step.period` name in the tables of `documents`."""
    request = request_of(step)
    seen: set[str] = set()
    misses: list[tuple[str, str]] = []
    nearest: list[tuple[float, str]] = []
    bare: list[str] = []
    for evidence in documents:
        if evidence is None or evidence.doc_id in seen:
            continue
        seen.add(evidence.doc_id)
        tables = tables_of(evidence.doc_id)
        if not tables:
            bare.append(evidence.title)
            continue
        options, why = _options(request, evidence, tables)
        if options:
            return _answer(step, request, options)
        misses += why
        nearest += _nearest(request, evidence, tables)
    if not seen:
        raise ToolError("NOT_A_DOCUMENT", f"EXTRACT step {step.id} reads the tables of "
                        f"{step.source}'s documents, and {step.source} holds none; point "
                        "source at the output variable of a GET or SEARCH step")
    error = _not_found(step, request, misses, nearest, bare, len(seen))
    if step.fallback is not None:
        return ToolOutput(value=step.fallback, confidence="fallback",
                          note=f"no cell ({error.code}: {error.message}); used the step's "
                               "fallback")
    raise error


def _options(request: Request, evidence: Evidence,
             tables: list[Table]) -> tuple[list[Option], list[tuple[str, str]]]:
    """Every cell of a fitting row in a column of the period (best fits first), and why
    each fitting row gave none."""
    options: list[Option] = []
    why: list[tuple[str, str]] = []
    for table in tables:
        title = set(label_words(table.title).words) if table.title else set()
        for row in table.rows:
            label, section = _label(row)
            found = _fit(request, label, section)
            if found is None:
                continue
            how, own = found
            heading = title | set(section.words if section else ())
            aside = len(aside_words(row.label) - request.words)
            key = [how.rank, not own, -len(request.context & heading), how.extra + aside,
                   not row.total]
            columns = _columns(request, table, row)
            if not columns:
                why.append(("column", f"{_where(row, table)} has no column for "
                            f"{request.period} (its columns: {_periods(table)})"
                            if request.period else f"{_where(row, table)} has no figure in a "
                            "column with a period"))
                continue
            for i in columns:
                cell = row.cells[i]
                quantity = _typed(request, table, cell)
                if quantity is None:
                    shown = repr(cell.text) if cell else "nothing"
                    why.append(("value", f"{_where(row, table)} holds {shown} under "
                                f"{_header(table, i)!r}, not a {request.kind or 'figure'}"))
                    continue
                options.append(Option(evidence, table, row, i, quantity, tuple(key), own))
    if options:
        best = min(o.key for o in options)
        options = [o for o in options if o.key == best]
    return options, why


def _label(row: Row) -> tuple[Label, Label | None]:
    """The words a row is named by, and its heading's. A label that reads on from its
    heading (`Number of shares used in computing:` / `-basic earnings per share`,
    `Includes stock-based compensation of:` / `Cost of services revenue`) is named by
    both."""
    section = label_words(row.section) if row.section else None
    if row.section and (_CONTINUES.match(row.label) or _LEADS_ON.search(row.section)):
        return label_words(f"{row.section} {row.label}"), None
    return label_words(row.label), section


def _fit(request: Request, label: Label, section: Label | None) -> tuple[Fit, bool] | None:
    fits = [(f, own) for name, own in request.names if (f := fit(name, label, section))]
    return min(fits, key=lambda f: (f[0].rank, not f[1], f[0].extra)) if fits else None


def _columns(request: Request, table: Table, row: Row) -> list[int]:
    """The columns of the period (without one, the newest); of the kind asked for when
    the period has columns of several kinds (an amount when none is asked for: a "% of
    total revenue" beside it is derived from it), else all of the period's, whose cells
    then tell they are not of that kind."""
    if request.period:
        return (columns_for(table, request.period, request.kind or "money")
                or columns_for(table, request.period))
    dated = [(_end(c.period), i) for i, c in enumerate(table.columns) if c.period]
    if dated:
        newest = max(end for end, _ in dated)
        return [i for end, i in dated if end == newest]
    return [i for i, c in enumerate(row.cells) if c is not None and c.quantity is not None]


def _end(period: str) -> str:
    return period.rpartition("..")[2]


def _typed(request: Request, table: Table, cell: Cell | None) -> Quantity | None:
    """The cell's figure, of the kind asked for; None when it states none. A line item
    the library knows is in units when it is per share and in the table's scale when it
    is not, whatever heading the row sits under."""
    if cell is None or cell.quantity is None:
        return None
    q = cell.quantity
    scale = q.scale
    kind = request.kind
    if request.items and q.kind in ("money", "number"):
        per_share = {item.per_share for item in request.items}
        scale = 0 if per_share == {True} else table.scale if per_share == {False} else scale
    if (kind and kind != q.kind) or scale != q.scale:
        return parse_quantity(cell.text, kind=kind, unit=q.unit or table.unit, scale=scale)
    return q


def _answer(step: ExtractStep, request: Request, options: list[Option]) -> ToolOutput:
    first = options[0]
    figures = list({_shown(o): o for o in options}.values())
    if any(not _same(o.quantity, first.quantity, signed=False) for o in options):
        shown = "; ".join(_shown(o) for o in figures[:4])
        more = f" and {len(figures) - 4} more" if len(figures) > 4 else ""
        raise ToolError("AMBIGUOUS", f"step {step.id}: row {step.row!r}"
                        f"{_for(request)} fits cells that state different figures: "
                        f"{shown}{more}; name the row as the table writes it, give the "
                        "heading it sits under (\"investing activities: …\") or a period "
                        "that names one column")
    # one figure, written as an amount in one table and as an outflow "(130)" in
    # another: the amount of the line item is the one without the sign; and in a
    # table that states its scale over one that states none
    stated = any(o.quantity.scale for o in options)
    chosen = min(options, key=lambda o: (
        o.quantity.kind != "date" and stated and not o.quantity.scale,
        o.quantity.kind != "date" and o.quantity.amount < 0))
    table, row, column = chosen.table, chosen.row, chosen.column
    evidence = chosen.evidence.model_copy(update={"page": table.page}) if chosen.evidence else None
    via = "" if chosen.own else f" (the line item {_item_names(request)})"
    scale = f"; {SCALE_WORDS[table.scale]}s" if table.scale else ""
    note = (f"row {row.label!r}{via} of {_table_name(table)}{scale}, column "
            f"{_header(table, column)!r}" + (f" (period {table.columns[column].period})"
                                            if table.columns[column].period else ""))
    others = [o for o in figures if o.quantity.text != chosen.quantity.text]
    if others:
        note += "; also stated as " + "; ".join(_shown(o) for o in others[:3])
    return ToolOutput(value=row.cells[column].text, confidence="table_row" if chosen.own
                      else "line_item", document=evidence, note=note,
                      quote=_quote(table, row, column), quantity=chosen.quantity)


def _shown(o: Option) -> str:
    return f"{_where(o.row, o.table)} under {_header(o.table, o.column)!r}: {o.quantity.text}"


def _same(a: Quantity, b: Quantity, signed: bool = True) -> bool:
    """Whether two cells state one figure: equal, or equal as the coarser one rounds
    (5,119 thousand and 5.1 million), or the same digits where one table states no
    scale (a summary whose "in thousands" the reader did not see); `signed` False:
    whatever their signs."""
    if a.kind == "date" or b.kind == "date":
        return a.date == b.date
    if (a.kind == "percent") != (b.kind == "percent") or (a.unit and b.unit and a.unit != b.unit):
        return False
    if a.scale != b.scale and 0 in (a.scale, b.scale):
        return (a.amount == b.amount) if signed else abs(a.amount) == abs(b.amount)
    x, y = a.absolute(), b.absolute()
    if not signed:
        x, y = abs(x), abs(y)
    coarse = Decimal(1).scaleb(max(x.as_tuple().exponent, y.as_tuple().exponent))
    try:
        return x.quantize(coarse) == y.quantize(coarse)
    except InvalidOperation:
        return x == y


def _quote(table: Table, row: Row, column: int) -> str:
    """The row as the table writes it, the column read first: `Interest expense — 2016:
    130 (row: 2018: $39 · 2017: 80 · 2016: 130)`."""
    label = f"{row.section}: {row.label}" if row.section else row.label
    cells = " · ".join(f"{_header(table, i)}: {c.text}" for i, c in enumerate(row.cells) if c)
    text = f"{label} — {_header(table, column)}: {row.cells[column].text} (row: {cells})"
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 2] + "…)"


def _header(table: Table, i: int) -> str:
    column = table.columns[i]
    return column.header or column.period or f"column {i + 1}"


def _headers(table: Table) -> str:
    return ", ".join(repr(_header(table, i)) for i in range(len(table.columns))) or "none"


def _table_name(table: Table) -> str:
    name = f"table {table.title!r}" if table.title else "a table"
    return f"{name} (page {table.page})" if table.page else name


def _where(row: Row, table: Table) -> str:
    return f"row {row.label!r} of {_table_name(table)}"


def _for(request: Request) -> str:
    return f" for {request.period}" if request.period else ""


def _item_names(request: Request) -> str:
    return " / ".join(repr(i.name) for i in request.items) or "asked for"


def _nearest(request: Request, evidence: Evidence,
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
                found.append((score, f"{row.label!r} in {_table_name(table)} of "
                              f"{evidence.title!r}, columns {_periods(table)}"))
    return sorted(found, key=lambda f: -f[0])[:NEAREST]


def nearest_rows(step: ExtractStep, documents: list[Evidence | None], tables_of: TablesOf,
                 limit: int = NEAREST) -> list[str]:
    """The rows of the documents' tables nearest `step.row`, best first, each with its
    table, page, document and columns (their periods): what `chordal debug` shows."""
    request = request_of(step)
    found: list[tuple[float, str]] = []
    for evidence in {e.doc_id: e for e in documents if e is not None}.values():
        found += _nearest(request, evidence, tables_of(evidence.doc_id))
    return [text for _, text in sorted(found, key=lambda f: -f[0])[:limit]]


def _periods(table: Table) -> str:
    """The columns with the periods their headers name: `'2018' (2017-10-01..2018-09-30)`."""
    shown = []
    for i, column in enumerate(table.columns):
        header = _header(table, i)
        period = column.period
        shown.append(repr(header) + (f" ({period})" if period and period != header else ""))
    return ", ".join(shown) or "none"


def _not_found(step: ExtractStep, request: Request, misses: list[tuple[str, str]],
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
                         f"step {step.id}: row {step.row!r}{_for(request)}: "
                         + "; ".join(dict.fromkeys(text for _, text in misses[:4]))
                         + f"{without}; {fix}")
    if bare and documents == len(bare):
        return ToolError("NOT_FOUND", f"step {step.id}: no table holds row {step.row!r}"
                         + without.replace("; ", ": ", 1))
    where = "its document" if documents == 1 else f"its {documents} documents"
    count = len(request.names) - 1
    names = (f" (nor any of the {count} names the domain library gives "
             f"{_item_names(request)})" if count > 0 else "")
    shown = "; ".join(dict.fromkeys(text for _, text in sorted(nearest, key=lambda n: -n[0])
                                    [:NEAREST]))
    return ToolError("NOT_FOUND", f"step {step.id}: no table row of {where} is "
                     f"{step.row!r}{names}"
                     + (f"; nearest rows: {shown}" if shown else "; no table row shares a "
                        "word with it") + without
                     + "; name the row as the table writes it, or check that GET fetched the "
                     "document whose tables hold it")

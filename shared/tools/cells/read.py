"""The cell reader: consumes a step with `row`, the Evidence of its source's documents
and a way to read a document's tables, produces the one cell the row and period name
(see the package's docstring for the rules), or the ToolError that says why none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation

import regex

from shared.errors import SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import Evidence, ExtractStep
from shared.models.quantity import SCALE_WORDS, Quantity
from shared.models.table import Cell, Column, Row, Table
from shared.tables.assemble import whole_of
from shared.tables.periods import (bare_quarter, columns_for, fiscal_named, header_quarter,
                                   period_of, year_quarter)
from shared.tables.units import PER_SHARE, SHARE_COUNT, scale_in
from shared.tools.base import ToolOutput
from shared.tables.quantities import is_dash, parse_quantity

from ..rows import (FILLERS, RANKS, TERM_SAID, Fit, Label, a_component, aside_words,
                    current_part, fit, footnoted, implied_rival, in_context, label_words,
                    of_a_statement, of_deferred_taxes, only_deferred_taxes, other_term_cells,
                    other_than_asked, read_after_whole, rows_title, subject_of, term_part,
                    word_for_word)
from .messages import (TablesOf, column_name, columns_named, not_found, quote, rows_near,
                       table_name, where)
from .request import Request, item_names, period_text, request_of

_CONTINUES = regex.compile(r"^\s*(?:[-–—]|\p{Ll})")
_TOTAL = regex.compile(r"^\s*total\b[^\w]*(?:\([^()]*\)[^\w]*)?$", regex.IGNORECASE)
"""A label that is `Total` and nothing else but what it says in parentheses."""
_LEADS_ON = regex.compile(r"\b(?:of|in|for|by|to|from|on|with|at)\s*:?\s*$", regex.IGNORECASE)
"""A heading the labels under it read on from (`Includes stock-based compensation of:`).
Not one ending "as" (`Deferred compensation liabilities reported as:` / `Accrued
expenses`): it says where its rows are reported, and each label names its row."""
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATED = regex.compile(
    rf"\b(?:(?:as\s+)?(?:at|of|on)\s+)?(?:{_MONTH}\s+\d{{1,2}},?\s+|\d{{1,2}}\s+{_MONTH},?\s+)?"
    r"(?:19|20)\d{2}\b", regex.IGNORECASE)
"""The date or year a row's label or heading names its period by (`at September 30, 2018`)."""


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


class Key(NamedTuple):
    """How well a row fits a step, compared field by field: smaller is a better fit."""

    rank: int
    """How the row's words name the item (`RANKS`: its own label, under a heading, …)."""
    foreign: bool
    """Named by another name than the step's own words (the domain library's)."""
    context: int
    """Minus the step's context words the table's title and headings say."""
    unasked: int
    """Words of the row's heading that the step's context does not say."""
    segment: bool
    """A segment's or a part's row, read after a row of the whole."""
    extra: int
    """Words the label says beyond the step's, and words set aside in its label."""
    beyond: int
    """Words of the heading that completes the label beyond the step's own."""
    not_total: bool

    def placement(self) -> tuple:
        """The fit before the segment flag: where a row stands among its table's rows."""
        return self[:4]


@dataclass(frozen=True)
class Option:
    """One cell a row and column name."""

    evidence: Evidence | None
    table: Table
    row: Row
    column: int
    quantity: Quantity
    key: Key
    """Smaller is a better fit."""
    own: bool
    part: bool = False
    """The current or non-current part of a total the step asks for: read only with the
    other part, added (`_parts_by_term`)."""


def read_cell(step: ExtractStep, documents: list[Evidence | None],
              tables_of: TablesOf) -> ToolOutput:
    """The cell `step.row` and `step.period` name in the tables of `documents`."""
    return read_cells(step, documents, tables_of)[0]


def read_cells(step: ExtractStep, documents: list[Evidence | None],
               tables_of: TablesOf) -> tuple[ToolOutput, list[Option]]:
    """`read_cell`'s output, and every cell that fit best and states its figure (none
    for a fallback)."""
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
        if parts := _parts_by_term(request, options):
            return _sum_of_parts(step, request, parts), \
                parts.whole or [parts.current[0], parts.non_current[0]]
        options = [o for o in options if not o.part]  # a part alone is not the total asked
        if options:
            out = _answer(step, request, options)
            return out, [o for o in options if o.row.cells[o.column].text == out.value]
        misses += why
        nearest += rows_near(request, evidence, tables)
    if not seen:
        raise ToolError("NOT_A_DOCUMENT", f"EXTRACT step {step.id} reads the tables of "
                        f"{step.source}'s documents, and {step.source} holds none; point "
                        "source at the output variable of a GET or SEARCH step")
    error = not_found(step, request, misses, nearest, bare, len(seen))
    if step.fallback is not None:
        return ToolOutput(value=step.fallback, confidence="fallback",
                          note=f"no cell ({error.code}: {error.message}); used the step's "
                               "fallback"), []
    raise error


def _options(request: Request, evidence: Evidence,
             tables: list[Table]) -> tuple[list[Option], list[tuple[str, str]]]:
    """Every cell of a fitting row in a column of the period (best fits first), and why
    each fitting row gave none."""
    options: list[Option] = []
    why: list[tuple[str, str]] = []
    for table in tables:
        dated = _rows_of_period(request, table)
        for n, row in enumerate(table.rows):
            if dated.get(n) is not False:  # False: its label or heading names another period
                _row_options(request, evidence, table, n, bool(dated.get(n)), options, why)
    if not only_deferred_taxes(tables):
        for o in [o for o in options if of_deferred_taxes(o.row, o.table, request.row)]:
            why.append(("row", f"{where(o.row, o.table)} is the deferred tax on it"))
            options.remove(o)
    if not _SAYS_TOTAL.search(request.row):
        options = _parts_over_their_totals(options)
    if options:
        best = min(o.key for o in options)
        fits = options
        options = [o for o in options if o.key == best]
        if unsigned := _unsigned_elsewhere(options, fits):
            options = unsigned
        options += _scale_elsewhere(options, fits)
        named = [o for o in options if word_for_word(o.row.label, request.row)]
        if len({o.row.cells[o.column].text for o in options}) > 1 and named and len(
                {o.row.cells[o.column].text for o in named}) == 1:
            options = named  # "owed by members": not the row "owed to members"
        if all(o.key.segment for o in options):
            # read from segments only: a row of the whole that fits less well must state
            # the same figure, or which one is meant is not said; but rows that are only
            # another expense within the item ("Research and development" in a table of
            # "Depreciation expense recorded in the … statements of operations") are not
            # the item, and the best-fitting row of the whole is ("Research and
            # development, net" of the statement of operations)
            wholes = [f for f in fits if not f.key.segment]
            if wholes and all(a_component(o.table, request.row) for o in options):
                options = [f for f in wholes if f.key == min(w.key for w in wholes)]
            else:
                options += wholes
        if all(footnoted(o.row) for o in options):
            # "Research and development expenses (1)" ("(1) Excludes stock-based
            # compensation"): a row that names the item exactly or under its heading is its
            # rival
            options += [f for f in fits if f not in options and f.key.rank <= RANKS["under"]
                        and not footnoted(f.row) and not f.key.segment]
        if not TERM_SAID.search(request.row):  # "deferred revenue": current or noncurrent?
            options += _other_terms(options, tables)
    return options, why


def _other_terms(options: list[Option], tables: list[Table]) -> list[Option]:
    """The cells that state the other part by term of a row in `options` (shared/tools/
    rows.py `other_term_cells`), each once."""
    found: list[Option] = []
    for o in options:
        for table, row, i, cell in other_term_cells(o.row, o.table, o.column, tables):
            if all(f.row is not row for f in found):
                found.append(Option(o.evidence, table, row, i,
                                    _signed(cell.quantity, row, table.alike(i)), o.key, o.own))
    return found


def _unsigned_elsewhere(best: list[Option], fits: list[Option]) -> list[Option]:
    """The cells of the best-fitting rows still to fit, when those rows write the figure
    asked only as a deduction ("Research and development expense (6,306)" in a
    reconciliation to operating income) and a row that fits less well states the same
    figure as an amount ("Operating expenses: Research and development 6,306"): the line
    item's amount is the figure without the sign. Empty otherwise."""
    if not all(o.quantity.amount is not None and o.quantity.amount < 0
               and _BRACKET.match(o.quantity.text) for o in best):
        return []
    plain = [o for o in fits if o.quantity.amount is not None and o.quantity.amount > 0
             and all(_same(o.quantity, b.quantity, signed=False) for b in best)]
    if not plain:
        return []
    key = min(o.key for o in plain)
    return [o for o in plain if o.key == key]



def _scale_elsewhere(best: list[Option], fits: list[Option]) -> list[Option]:
    """When no best-fitting cell's table states its scale (a summary whose "in thousands"
    stands in a paragraph above it: "Total revenue $ 2,865,507"), the cells of rows still
    to fit that state the same figure in a table that states one ("Revenue" of the
    statement of operations, in thousands): the figure is theirs, in their scale. Empty
    otherwise."""
    if not best or any(o.quantity.scale for o in best) \
            or any(o.quantity.kind not in ("money", "number") for o in best):
        return []
    return [o for o in fits if o not in best and o.quantity.scale
            and o.quantity.kind == best[0].quantity.kind
            and all(o.quantity.amount == b.quantity.amount for b in best)]


def _row_options(request: Request, evidence: Evidence, table: Table, n: int, dated: bool,
                 options: list[Option], why: list[tuple[str, str]]) -> None:
    """Add to `options` the cells of the table's row `n` in the columns asked, if the row
    fits the request, and to `why` what each of its columns lacks; `dated`: the row names
    the period asked in its label or heading (`_rows_of_period`)."""
    row = table.rows[n]
    label, section = _label(_undated(row) if dated else row)
    title = set(label_words(rows_title(table)).words) if table.title else set()
    subject = set(label_words(about).words) if (about := subject_of(table)) else set()
    heading = title | subject | set(section.words if section else ())
    columns = _figures_asked(request, table, row) if dated else _columns(request, table, row)
    if dated and not label.words and not section:
        # a row that is its period ("2021" of a maturity schedule): its columns name
        # the item ("Operating Leases", "Finance Leases")
        found, columns = _fit_by_header(request, table, columns)
    else:
        found = _fit(request, label, section, row)
        if found is None:
            found, columns = _fit_in_context(request, label, row, table, heading, columns)
        if found is None and (alone := _read_on_from(row)):
            # named by its own words under its heading, after any row that names them
            # better ("Non-deductible items" under "Tax effect of:")
            if near := _fit(request, alone, label_words(row.section), row):
                found = Fit("context", near[0].extra + 1), near[1]
        if found is None and request.names_sharing(label) and (wholes := _wholes(table, n)):
            # the totals the row adds into say what its parts are ("UK" over "Total
            # revenue from external customers by country": the UK's revenue)
            found, columns = _fit_in_context(request, label, row, table, heading | wholes,
                                             columns)
    if found is None:
        return
    part = current_part(request.row, row)
    if other := other_than_asked(request.row, row):
        why.append(("row", f"{where(row, table)} is under {row.section!r}: {other}"))
        if not part:
            return
    how, own = found
    columns = _named_by_header(request, table, row, label, section, columns)
    aside = len(aside_words(row.label) - request.words)
    # under the heading given, the one that says no more ("Revenue:" over "Cost of revenue")
    unasked = len(set(section.words) - request.context) if section and request.context else 0
    # and of rows that headings or titles complete alike, the heading that says no more
    # than the step's words ("… maintenance revenue": under "Revenue", not under "Cost of
    # revenue"; a total of the table, not the subtotal under "Acquisition-related charges")
    beyond = len(set(section.words) - request.own) if section and how.how in (
        "under", "context") else 0
    # a segment's row ("Net sales" under "AWS", the table repeating it under each
    # segment's heading) after the row of the whole, unless the step names the segment;
    # and so a row with several columns of the period ("2023 Launch Services", "2023
    # Space Systems") none of whose headers the step names
    segment = read_after_whole(row, table, request.row, bool(section) and set(
        section.words) <= request.words) or bool(request.period) and len(columns) > 1
    if segment and (total := _total_of_parts(request, table, row, columns)):
        # the segments' total, still read after a row stating the company's figure: a
        # segment note's "Interest expense" total leaves out the corporate interest
        columns = total
    key = Key(how.rank, not own, -len(request.context & heading), unasked, segment,
              how.extra + aside, beyond, not row.total)
    if not columns:
        why.append(("column", f"{where(row, table)} has no column for {request.period} (its "
                    f"columns: {columns_named(table)})" if request.period else
                    f"{where(row, table)} has no figure in a column with a period"))
        return
    per_share = bool(PER_SHARE.search(request.row))
    for i in columns:
        cell = row.cells[i]
        if per_share and counts_shares(row, i):
            why.append(("value", f"{where(row, table)} counts shares under "
                        f"{column_name(table, i)!r}, not a figure per share"))
        elif (quantity := _typed(request, table, cell, row)) is None:
            shown = repr(cell.text) if cell else "nothing"
            why.append(("value", f"{where(row, table)} holds {shown} under "
                        f"{column_name(table, i)!r}, not a {request.kind or 'figure'}"))
        else:
            options.append(Option(evidence, table, row, i, _signed(quantity, row, table.alike(i)),
                                  key, own, part))


def _wholes(table: Table, n: int) -> set[str]:
    """The words of the totals the table's row `n` adds into, and those they add into
    ("Ceramic Components" into "Total Electronic Components", into "Total Net Sales")."""
    words: set[str] = set()
    while (n := whole_of(table.rows, n)) is not None:
        words |= set(label_words(table.rows[n].label).words)
    return words


def _named_by_header(request: Request, table: Table, row: Row, label: Label,
                     section: Label | None, columns: list[int]) -> list[int]:
    """Of several columns of the period, those whose header says most of what the step's
    own words say beyond the row's label and heading ("fair value of total debt": the row
    `Total debt` under `December 31, 2019 Fair Value`, not `… Carrying Amount`; "total
    expected charges": under `Total Expected Charges`, not `Remaining Expected Charges`;
    "total net receivables" of a row that is no total: under `30 June 2019 Total`, not
    `… Current`); all of them when no header, or every one, says as much."""
    if len(columns) < 2:
        return columns
    said = set(label.words) | set(section.words if section else ())
    rest = request.own - said - FILLERS
    if _SAYS_TOTAL.search(request.row) and not _SAYS_TOTAL.search(row.label):
        rest |= {_TOTAL_WORD}
    said_by = {i: len(rest & _header_words(table.columns[i].header)) for i in columns}
    most = max(said_by.values())
    named = [i for i in columns if said_by[i] == most]
    return named if most and len(named) < len(columns) else columns


def _total_of_parts(request: Request, table: Table, row: Row, columns: list[int]) -> list[int]:
    """Of the period's columns none of whose headers the step names, the one whose header
    says "total" when the row's figure there is the sum of its figures in the others (a
    segment note's "2024 Ondas Networks", "2024 Ondas OAS", "2024 Ondas Total"): the
    company's figure, as one row would state it. Empty otherwise (expected, incurred and
    remaining charges are no parts of a total)."""
    totals = [i for i in columns if _SAYS_TOTAL.search(table.columns[i].header or "")]
    if not request.period or len(totals) != 1:
        return []
    amounts = [q.amount if (c := row.cells[i]) is not None and (q := c.quantity) is not None
               else None for i in columns]
    if any(a is None for a in amounts):
        return []
    total = amounts[columns.index(totals[0])]
    return totals if sum(amounts) - total == total else []


_SAYS_TOTAL = regex.compile(r"\btotal\b", regex.IGNORECASE)
_TOTAL_WORD = "total"
"""The word `total`, which a row's or header's words leave out (`Total revenue` is a
row of revenue), as a header's word: a total column asked of a row that is no total."""


def _header_words(header: str | None) -> set[str]:
    words = set(label_words(header).words)
    return words | {_TOTAL_WORD} if header and _SAYS_TOTAL.search(header) else words


def _signed(quantity: Quantity, row: Row, columns: list[int]) -> Quantity:
    """`quantity`, its accountants' negative ("(762.3)") written with a minus when its row
    states figures of its kind of both signs (net income 542.0 beside (762.3), "Other
    (expense) income"): there the parentheses are the figure's sign, not an amount shown
    as an outflow, and arithmetic on it is of the signed figure (COMPUTE refuses to
    guess which a lone bracketed figure means). Only figures in `columns` (those of
    the same measure over other periods) say so."""
    if quantity.amount is None or quantity.amount >= 0 or not _BRACKET.match(quantity.text) \
            or not row.both_signs(quantity.kind == "percent", columns):
        return quantity
    return quantity.model_copy(update={"text": "-" + _BRACKET.sub("", quantity.text)
                                       .replace(")", "", 1).strip()})


_BRACKET = regex.compile(r"^\s*[$€£¥₹]?\s*\(")


def _rows_of_period(request: Request, table: Table) -> dict[int, bool]:
    """In a table whose columns name no period, the rows whose label (else heading)
    names one, each with whether it is the period asked (`Outstanding at September 30,
    2018` of a share-option table, the rows under `As at 31 December 2019`): such a row
    is read without its period's words, in its columns of figures. Empty when a column
    names a period (the column's wins), no period is asked, or no row names one."""
    if not request.period or any(c.period for c in table.columns):
        return {}
    named = []
    for n, row in enumerate(table.rows):
        text = row.label if period_of(row.label) else row.section or ""
        if period := period_of(text):
            named.append((n, text, period))
    if not named:
        return {}
    if (quarter := _quarter_columns(request, table)) is not None:
        # a table of quarters under year headings: "Q3" is the newest year's, "2019-Q3"
        # the one under "2019" (under "Fiscal 2019" only the company's own, "Q3 FY2019")
        years = [p for _, _, p in named if regex.fullmatch(r"\d{4}", p)]
        if not (years and quarter):
            return {}
        if (asked := year_quarter(request.period)) is None:
            return {n: p == max(years) for n, _, p in named}
        year, _, fiscal = asked
        return {n: p == str(year) and (fiscal or not fiscal_named(text))
                for n, text, p in named}
    named += _between_balances(table, named)
    asked = set(columns_for(Table(columns=[Column(header=text, period=p)
                                           for _, text, p in named], rows=[]),
                            request.period))
    return {n: j in asked for j, (n, _, _) in enumerate(named)}


def _between_balances(table: Table, named: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """The rows of a rollforward between two balances its labels date ("Non-vested at
    December 31, 2018", "Granted", "Vested", "Non-vested at December 31, 2019"): each is
    of the period from the day after the first balance to the second."""
    out = []
    for (a, _, start), (b, _, end) in zip(named, named[1:]):
        if ".." in start or ".." in end or b - a < 2:
            continue
        try:
            first, last = date.fromisoformat(start), date.fromisoformat(end)
        except ValueError:
            continue
        if last <= first:
            continue
        span = f"{first + timedelta(days=1)}..{last}"
        out += [(n, span, span) for n in range(a + 1, b)
                if not period_of(table.rows[n].label) and not table.rows[n].section]
    return out


def _undated(row: Row) -> Row:
    """The row without the date or year its label and heading name its period by."""
    return row.model_copy(update={"label": _DATED.sub(" ", row.label),
                                  "section": row.section and _DATED.sub(" ", row.section)})


def _figures_asked(request: Request, table: Table, row: Row) -> list[int]:
    """The columns of figures of a row whose label or heading names its period: those
    whose header shares a word with the row asked, not counting a figure per share
    unless it is one (`Number of Shares` of `shares outstanding`, not `Weighted-Average
    Exercise Price Per Share`), else all of them."""
    figures = [i for i, c in enumerate(row.cells) if c is not None and c.quantity is not None]
    if (quarter := _quarter_columns(request, table)) is not None:
        return [i for i in quarter if i in figures]
    # in a rollforward by component ("Net income — — — — 2,043 2,043"), a dash is a
    # component the line does not touch
    figures = [i for i in figures if not is_dash(row.cells[i].text)] or figures
    per_share = bool(PER_SHARE.search(request.row))
    # by the step's own words: a name the library knows the item by ("net income
    # attributable to common stockholders") names no component's column ("Total
    # Palantir's Stockholders' Equity" of a statement of equity)
    named = [i for i in figures if request.own & set(label_words(table.columns[i].header).words)
             and per_share == bool(PER_SHARE.search(table.columns[i].header))]
    if not named and len(figures) > 1 and not any(table.columns[i].header.strip()
                                                  for i in figures):
        return []  # several figures under no header (segments whose names the reader lost)
    return named or figures


def _quarter_columns(request: Request, table: Table) -> list[int] | None:
    """For a quarter asked with no year ("Q3"), the columns whose header names that
    quarter and nothing else (`Third`, `Third Quarter`); None when no quarter is asked
    that way."""
    quarter = bare_quarter(request.period)
    if quarter is None and (asked := year_quarter(request.period)) is not None \
            and any(header_quarter(c.header) for c in table.columns):
        quarter = asked[1]  # "2019-Q3" of `Third` under "2019"
    if quarter is None:
        return None
    return [i for i, c in enumerate(table.columns) if header_quarter(c.header) == quarter]


def counts_shares(row: Row, column: int) -> bool:
    """Whether the row counts shares: its label says so, or the heading it sits under
    does and its cell is not written as money ("Basic earnings per share  1,305.7" under
    "Weighted average number of shares … (shares, millions)"; a "$3.50" under a share
    heading the table did not close is a figure per share)."""
    cell = row.cells[column] if column < len(row.cells) else None
    money = cell is not None and bool(regex.search(r"[$€£¥₹]", cell.text))
    return bool(SHARE_COUNT.search(row.label)
                or (SHARE_COUNT.search(row.section or "") and not money))


def _parts_over_their_totals(options: list[Option]) -> list[Option]:
    """Without the total rows of a table where a row that is not a total fits as well:
    a step that does not say "total" names the part ("Other assets" beside "Total other
    assets", "Cost of goods sold" beside "Total cost of goods sold")."""
    parts = {}
    for o in options:
        if not o.row.total:
            key = parts.get(id(o.table))
            place = o.key.placement()
            parts[id(o.table)] = place if key is None else min(key, place)
    return [o for o in options if not (o.row.total and id(o.table) in parts
                                       and parts[id(o.table)] <= o.key.placement())]


def _label(row: Row) -> tuple[Label, Label | None]:
    """The words a row is named by, and its heading's. A label that reads on from its
    heading (`Number of shares used in computing:` / `-basic earnings per share`,
    `Includes stock-based compensation of:` / `Cost of services revenue`) is named by
    both; what a label says after "for the year ended …" is not its name."""
    section = label_words(row.section) if row.section else None
    text = _PERIOD_TAIL.sub("", row.label)
    if row.section and (_CONTINUES.match(text) or _LEADS_ON.search(row.section)):
        return label_words(f"{row.section} {text}"), None
    if not row.section and (m := _HEADED.match(text)) and (head := label_words(m["head"])).words:
        return label_words(m["label"]), head  # "Current: Federal": Federal under Current
    return label_words(text), section


_HEADED = regex.compile(r"^\s*(?P<head>[^:\d]*\p{L}[^:\d]*?)\s*:\s*(?P<label>\p{L}.*)$", regex.S)
"""A label that writes its heading before a colon, on its own line (`Current: Federal`,
`Deferred: State`, `Creditors: amounts falling due within one year`)."""


def _read_on_from(row: Row) -> Label | None:
    """The words of a row's own label when `_label` names it by its heading's too ("Tax
    effect of:" / "Non-deductible items", "Net cash provided by (used in):" / "Investing
    activities"): it may be named by its own as well, as readers name it. Not under a
    heading of what the rows include ("Includes stock-based compensation of:" / "Cost of
    services revenue" is not the cost of services revenue)."""
    text = _PERIOD_TAIL.sub("", row.label)
    if not row.section or not _LEADS_ON.search(row.section) or _CONTINUES.match(text) \
            or _INCLUDED.search(row.section):
        return None
    return label_words(text)


_INCLUDED = regex.compile(r"\binclu(?:de[sd]?|ding)\b", regex.I)
_PERIOD_TAIL = regex.compile(
    r"(?<=\w)\s+for\s+the\s+(?:(?:half|financial|fiscal)[\s-]+)?(?:years?|period|quarter|"
    r"(?:three|six|nine|twelve)\s+months)\s+end(?:ed|ing)\b.*$", regex.I | regex.S)
"""What a label says of the period it is for ("Final dividend for the year ended 30 June
2018 of AU 14 cents"): the row is named by what comes before."""


def _fit(request: Request, label: Label, section: Label | None,
         row: Row) -> tuple[Fit, bool] | None:
    fits = [(f, own) for name, own in request.names_sharing(label)
            if (f := fit(name, label, section))]
    if not fits and not label.words and _TOTAL.match(row.label):
        # `Total` asked for by itself is a total line; its heading or what the step and
        # the label say in parentheses (`Total (loan)`) tell several apart, else they
        # are ambiguous
        fits = [(Fit("exact", 0), own) for name, own in request.names
                if not name.distinct - FILLERS]
    return min(fits, key=lambda f: (f[0].rank, not f[1], f[0].extra)) if fits else None


def _fit_in_context(request: Request, label: Label, row: Row, table: Table, heading: set[str],
                    columns: list[int]) -> tuple[tuple[Fit, bool] | None, list[int]]:
    """How the row names the request with the words its heading, its table's title and
    the header of a column read say (shared/tools/rows.py `in_context`), and the columns
    whose header lets it (`Opening balance – IAS 39` is opening balance of financial
    assets under `Financial assets 2018`, not under `Financial liabilities 2018`)."""
    if not label.words and _one_of_joined(request, table.title, row.section):
        return None, columns
    def best(context: frozenset[str]) -> tuple[Fit, bool] | None:
        fits = [(f, own) for name, own in request.names_sharing(label)
                if (f := in_context(name, label, context, row.total))]
        return min(fits, key=lambda f: (not f[1], f[0].extra)) if fits else None

    if not columns:
        return best(frozenset(heading)), columns
    found = {i: best(frozenset(heading | _said_by_header(table.columns[i].header)))
             for i in columns}
    fits = [f for f in found.values() if f is not None]
    if not fits:
        return None, columns
    chosen = min(fits, key=lambda f: (not f[1], f[0].extra))
    return chosen, [i for i in columns if found[i] == chosen]


def _one_of_joined(request: Request, *texts: str | None) -> bool:
    """Whether the request names one of two things a title or heading joins ("monetary
    assets and liabilities"): a row with no label of its own under it totals both (the
    net of assets and liabilities), not the one asked."""
    return any((a in request.own) != (b in request.own)
               for text in texts for a, b in label_words(text or "").joins)


def _said_by_header(header: str | None) -> set[str]:
    """The words a column's header says of its figures, in parentheses too (`Year Ended
    December 31, 2019 (As percentage of net revenues)`: its rows' percentages of net
    revenues)."""
    return set(label_words(header or "").words) | aside_words(header or "")


def _fit_by_header(request: Request, table: Table,
                   columns: list[int]) -> tuple[tuple[Fit, bool] | None, list[int]]:
    """How the headers of `columns` name the request, for a row that is only its period,
    and the columns whose header fits best (`Operating Leases` beside `Finance Leases`
    for "operating leases" in 2021). The header names the item itself: a title or
    heading does not complete it (a row of periods has no label to complete)."""
    found = {}
    for i in columns:
        header = label_words(table.columns[i].header or "")
        fits = [(f, own) for name, own in request.names_sharing(header)
                if header.words and (f := fit(name, header))]
        found[i] = min(fits, key=lambda f: (f[0].rank, not f[1], f[0].extra)) if fits else None
    fits = [f for f in found.values() if f is not None]
    if not fits:
        return None, columns
    chosen = min(fits, key=lambda f: (f[0].rank, not f[1], f[0].extra))
    return chosen, [i for i in columns if found[i] == chosen]


def _columns(request: Request, table: Table, row: Row) -> list[int]:
    """The columns of the period (without one, a "Total" column beside dated ones, else the
    newest); of the kind asked for when the period has columns of several kinds (an
    amount when none is asked for: a "% of total revenue" beside it is derived from it),
    else all of the period's, whose cells then tell they are not of that kind."""
    if request.period:
        return _plain_unless_named(request, table, columns_for(
            table, request.period, request.kind or "money") or columns_for(table, request.period))
    dated = [(_end(c.period), i) for i, c in enumerate(table.columns) if c.period]
    totals = [i for i, c in enumerate(table.columns)
              if not c.period and regex.fullmatch(r"\s*total\s*", c.header or "", regex.I)]
    if dated and len(totals) == 1:  # a schedule by period and its total: the total
        return totals
    if dated:
        newest = max(end for end, _ in dated)
        return [i for end, i in dated if end == newest]
    return [i for i, c in enumerate(row.cells) if c is not None and c.quantity is not None]


_WHEN = regex.compile(rf"\b{_MONTH}|"
                      r"\b(?:years?|ended|ending|months?|quarters?|weeks?|fiscal|fy|as|of|at|"
                      r"first|second|third|fourth|q[1-4]|h[12]|half|restated|reported|revised|"
                      r"previously|audited|unaudited|see|notes?|thousands?|millions?|billions?|"
                      r"usd|eur|gbp|rmb|cny|total)\b", regex.IGNORECASE)


def _counts(header: str | None) -> frozenset[str]:
    """The words of a column's header beyond its period's, its unit's and a restatement's:
    what the column counts ("Net additions (losses) August 31, 2018" -> net, additions;
    "2018 % of Total" -> %; "August 31, 2018", "2018 $'000 Restated" -> none)."""
    text = header or ""
    words = label_words(_WHEN.sub(" ", regex.sub(r"\d+", " ", text))).distinct
    return words | {"%"} if regex.search(r"%|\bper\s*cent", text, regex.I) else words


def _plain_unless_named(request: Request, table: Table, columns: list[int]) -> list[int]:
    """Of a period's columns, in a table that states some period both in a column that
    is that period and nothing else (`August 31, 2019`) and under words that say what it
    counts (`Net additions (losses) August 31, 2019`), those whose header says more only
    when the step says some of it: the net additions of the year to August 31, 2018 are
    not the balance at that date."""
    plain = {c.period for c in table.columns if c.period and not _counts(c.header)}
    if not plain & {c.period for c in table.columns if c.period and _counts(c.header)}:
        return columns
    return [i for i in columns if not (counts := _counts(table.columns[i].header))
            or counts & request.words]


def _end(period: str) -> str:
    return period.rpartition("..")[2]


def _typed(request: Request, table: Table, cell: Cell | None, row: Row) -> Quantity | None:
    """The cell's figure, of the kind asked for; None when it states none. A line item
    the library knows is in units when it is per share and in the table's scale when it
    is not, whatever heading the row sits under; a row whose own label states its scale
    ("Gross profit (in thousands)") is in that scale."""
    if cell is None or cell.quantity is None:
        return None
    q = cell.quantity
    scale = q.scale
    kind = request.kind
    if request.items and q.kind in ("money", "number") and scale_in(row.label) is None:
        per_share = {item.per_share for item in request.items}
        scale = 0 if per_share == {True} else table.scale if per_share == {False} else scale
    if kind in ("money", "number") and q.kind == "percent":
        return None  # a common-size table's "Gross profit 40.0" is no amount of money
    if (kind and kind != q.kind) or scale != q.scale:
        return parse_quantity(cell.text, kind=kind, unit=q.unit or table.unit, scale=scale)
    return q


class Parts(NamedTuple):
    """A line item's cells by term (`_parts_by_term`)."""

    current: list[Option]
    non_current: list[Option]
    whole: list[Option]
    """Rows that state the item's total."""
    total: Quantity
    """The current and non-current parts added."""


def _parts_by_term(request: Request, options: list[Option]) -> Parts | None:
    """The cells that fit, as the current part and the non-current part of one item, and
    the rows that state their total: a step that names neither part ("operating lease
    liabilities", a balance sheet stating "Operating lease liabilities" under "Current
    liabilities:" and "Operating lease liabilities, noncurrent") asks for the item, which
    is the two added, or the row of a note that states that sum. Each part states one
    figure, of one kind and unit, and every other row the sum; None otherwise (`_answer`
    says which cells disagree)."""
    if TERM_SAID.search(request.row) or len(options) < 2:
        return None
    parts: dict[str | None, list[Option]] = {"current": [], "non-current": [], None: []}
    for o in options:
        implied = any(p.table is o.table and implied_rival(o.row, p.row) for p in options)
        parts[term_part(o.row) or ("current" if implied else None)].append(o)
    current, non_current, whole = parts["current"], parts["non-current"], parts[None]
    if not current or not non_current:
        return None
    a, b = current[0].quantity, non_current[0].quantity
    if a.kind not in ("money", "number") or b.kind != a.kind or (
            a.unit and b.unit and a.unit != b.unit) or any(
            not _same(o.quantity, group[0].quantity) for group in (current, non_current)
            for o in group):
        return None
    total = _added(a, b)
    if any(o.part or not _same(o.quantity, total) for o in whole):
        return None
    return Parts(current, non_current, whole, total)


def _added(a: Quantity, b: Quantity) -> Quantity:
    """`a` + `b`, in the coarser scale, written with the places of the finer figure."""
    scale = max(a.scale, b.scale)
    total = (a.absolute() + b.absolute()).scaleb(-scale)
    places = max(0, -min(a.amount.as_tuple().exponent, b.amount.as_tuple().exponent))
    text = f"{total:,.{places}f}"
    return Quantity(kind=a.kind, amount=Decimal(text.replace(",", "")), unit=a.unit or b.unit,
                    scale=scale, text=text)


def _sum_of_parts(step: ExtractStep, request: Request, parts: Parts) -> ToolOutput:
    """The item of `_parts_by_term`'s two parts: a row that states their sum (a lease
    note's total), else the two added, quoting both cells."""
    current, non_current = parts.current[0], parts.non_current[0]
    said = "; ".join(f"{part} part: {_shown(o)}" for part, o in
                     (("current", current), ("non-current", non_current)))
    if parts.whole:
        out = _answer(step, request, parts.whole)
        out.note += f" (the current and non-current parts added: {said})"
        return out
    note = (f"{request.row!r} names neither part by term, and no row states its total: the "
            f"current and non-current parts added ({said})")
    return ToolOutput(value=parts.total.text,
                      confidence="table_row" if current.own and non_current.own
                      else "line_item", document=_on_its_page(current), note=note,
                      quote=f"{quote(current.table, current.row, current.column)} + "
                            f"{quote(non_current.table, non_current.row, non_current.column)}",
                      quantity=parts.total)


def _on_its_page(o: Option) -> Evidence | None:
    """The document of a cell, naming the page its table is on."""
    return o.evidence.model_copy(update={"page": o.table.page}) if o.evidence else None


def _of_the_statements(options: list[Option]) -> list[Option]:
    """Of cells that fit alike but state different figures, those that state the figure
    of a primary financial statement's row (the statement of operations' "Research and
    development" 560,660, beside a reconciliation's "Research and development expenses"
    203,597 that a footnote says excludes stock-based compensation), when the statements
    state one figure: a filing defines its line items there, its notes restate parts of
    them. All of `options` otherwise."""
    stated = [o for o in options if of_a_statement(o.table)]
    if not stated or any(not _same(o.quantity, stated[0].quantity, signed=False)
                         for o in stated):
        return options
    return [o for o in options if _same(o.quantity, stated[0].quantity, signed=False)]


def _answer(step: ExtractStep, request: Request, options: list[Option]) -> ToolOutput:
    figures = list({_shown(o): o for o in options}.values())
    options = _of_the_statements(options)
    first = options[0]
    if any(not _same(o.quantity, first.quantity, signed=False) for o in options):
        shown = "; ".join(_shown(o) for o in figures[:4])
        more = f" and {len(figures) - 4} more" if len(figures) > 4 else ""
        raise ToolError("AMBIGUOUS", f"step {step.id}: row {step.row!r}"
                        f"{period_text(request)} fits cells that state different figures: "
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
    via = "" if chosen.own else f" (the line item {item_names(request)})"
    scale = f"; {SCALE_WORDS[table.scale]}s" if table.scale else ""
    note = (f"row {row.label!r}{via} of {table_name(table)}{scale}, column "
            f"{column_name(table, column)!r}" + (f" (period {table.columns[column].period})"
                                            if table.columns[column].period else ""))
    shown = chosen.row.cells[chosen.column].text
    others = [o for o in figures if o.row.cells[o.column].text != shown]
    if others:
        note += "; also stated as " + "; ".join(_shown(o) for o in others[:3])
    return ToolOutput(value=row.cells[column].text, confidence="table_row" if chosen.own
                      else "line_item", document=_on_its_page(chosen), note=note,
                      quote=quote(table, row, column), quantity=chosen.quantity)


def _shown(o: Option) -> str:
    return f"{where(o.row, o.table)} under {column_name(o.table, o.column)!r}: " \
           f"{o.row.cells[o.column].text}"


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

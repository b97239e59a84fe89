"""Finding the cell a question's line item names in a document's tables, for the
heuristic planner: consumes the item as the question writes it ("total sales", "net
sales in Americas"), the period asked and the document's tables; produces a `Cell`
choice (table, row label as the table writes it, column period) or a `Miss` saying
why none is chosen and which rows came nearest.

A row names the item when every word of its label is among the item's words (stems;
"of", "the", "and", footnote marks and fillers aside) and the item's other words are
said by the row's context — its section ("Cost of revenue" above "Client services"),
the table's title and totals, the column's header — or are fillers ("amount", "value",
"the company's"). Of those rows, the one whose label holds the most of the item's words
wins, then the one whose section adds the fewest words not asked about; rows that tie with
different figures are ambiguous, and so is a label the tables repeat with different
figures (EXTRACT, which reads the cell by label, could not tell them apart). The
column is the one the period names (`columns_for`); without a period, the row's one
figure. Where several columns hold one, the one whose header alone says a word of the
item ("deferred revenue as reported" under `As of February 28, 2019 As reported`, beside
`ASC 606 Adjustments`) is chosen, and the choice is `by_header`: the question's own words,
not the row's label, must then name the cell to EXTRACT. Nothing is guessed: a tie, a
missing column or an empty cell is a Miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex

from shared.search.terms import closed_prefixes, stem, words
from shared.models.table import Cell, Row, Table
from shared.tables.periods import scope_of
from shared.tools.rows import (FILLERS as ROW_FILLERS, NEUTRAL, TERM_SAID, aside_words,
                               by_section, current_part, footnoted, label_words, of_a_part, of_a_statement,
                               of_deferred_taxes, only_deferred_taxes, other_term_cells,
                               other_than_asked, read_after_whole, rows_title, subject_of,
                               word_for_word)

from .metric import When

LINKS = frozenset("a an the of for in on at to and by from with as its our their is are was "
                  "were be been what which that this these those within under among "
                  "arising".split())
"""Words that join a line item's words without naming anything."""
FILLERS = ROW_FILLERS | frozenset(stem(w) for w in """figures level company companies group
firm entity business reported report annual fiscal year years period periods fy line item
items respective respectively during end ended both all""".split())
"""Words a question may add around a line item: which amount (EXTRACT's own fillers), of
whom, when."""
NEAREST = 4
_UNASKED = -1000
"""The rank of a row's heading the question says nothing of: below every other."""
_FOOTNOTE = regex.compile(r"\s*(?:\((?:[a-z]|\d{1,2})\)|\[\d{1,2}\]|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+)\s*$", regex.I)
_NOTE = regex.compile(r"\(\s*(?:see\s+)?notes?\s+[\w.,\s]{1,12}\)|\bnotes?\s+\d+\b", regex.I)
_MARKED = regex.compile(r"^([a-z]{3,})\d$")
"""A word with a footnote number glued to it, as text layers write superscripts: `intake1`."""


@lru_cache(maxsize=8192)
def item_words(text: str) -> frozenset[str]:
    """The stems that name a line item: `Less: Purchases of property (see Note 5) (1)`
    -> `less`, `purchas`, `property`. Cached: a planner asks it of the same labels and
    items for every table and period it weighs."""
    text = closed_prefixes(_NOTE.sub(" ", _FOOTNOTE.sub("", text.replace("’", "'"))))
    return frozenset(stem(_MARKED.sub(r"\1", w)) for w in words(text)
                     if w not in LINKS and w != "s")


@dataclass(frozen=True)
class Choice:
    """One cell a line item names."""

    table: int
    """Index in the document's tables."""
    row: int
    column: int
    label: str
    """The row's label as the table writes it (what EXTRACT's `row` gets)."""
    period: str | None
    """What EXTRACT's `period` gets; None for a table with one column of figures."""
    cell: Cell
    page: int | None
    by_header: bool = False
    """The column is the one whose header says a word of the item no other says."""


@dataclass(frozen=True)
class Miss:
    why: str
    nearest: tuple[str, ...] = ()
    figures: tuple[Cell, ...] = ()
    """The cells of the rows that name the item alike, when they make it ambiguous."""


def choose_cell(item: frozenset[str], when: When | None, tables: list[Table],
                columns_for, kind: str | None = None, text: str = "") -> Choice | Miss:
    """The one cell of `tables` that `item` (its words) names in the column of `when`;
    with `kind` ("percent": the item says "percentage of sales …"), a cell of that kind.
    Of rows that name it alike, the one `text` (the item as written) says word for word
    ("owed by members of Peel": not "Amounts owed to members of Peel")."""
    if not item:
        return Miss("the question names no line item")
    scored: list[tuple[tuple, Choice]] = []
    asked = text or " ".join(item)
    in_parts = False  # a total asked whose parts by term a row states
    taxes = only_deferred_taxes(tables)
    for t, table in enumerate(tables):
        columns = _columns(table, when, columns_for, kind)
        for r, row in enumerate(table.rows):
            if not taxes and of_deferred_taxes(row, table, asked):
                continue  # the deferred tax on the item, as EXTRACT reads it
            if other_than_asked(asked, row):
                in_parts = in_parts or current_part(asked, row)
                continue  # "inventories": not the year's change of them, nor a part
            if text and label_words(row.label).splits(label_words(text)):
                continue  # "Current and non-current term debt": not "non-current term debt"
            label = item_words(row.label)
            # what a label says in parentheses may go unsaid ("net income" of "Net income
            # (loss)", as EXTRACT reads it); a label that says no more there ranks first
            aside = aside_words(row.label) - item
            # "Goodwill, end of the year" for "goodwill at the end of 2018": the label's
            # fillers are what the question's period says
            # "Total revenue" for "revenue": a total's word may go unsaid too, not all a
            # label says but its asides ("Total (loan)" names no item asked)
            unsaid = NEUTRAL - item
            core = label - aside - FILLERS
            if not label - FILLERS or not core - unsaid <= item or core and core <= unsaid:
                continue
            extra = item - label - FILLERS
            if extra - context_words(table, row, columns):
                continue
            section = item_words(row.section or "")
            cells = [(c, row.cells[c]) for c in columns
                     if c < len(row.cells) and row.cells[c] is not None
                     and row.cells[c].quantity is not None
                     and kind in (None, row.cells[c].quantity.kind)]
            by_header = len(cells) > 1
            if by_header:
                cells = _named_by_header(item - label, table, cells)
            if len(cells) != 1:
                continue
            column, cell = cells[0]
            choice = Choice(t, r, column, row.label, when.text if when else None, cell,
                            table.page, by_header)
            # a total the question does not say ("Total revenue" for "revenue") only where
            # no row names the item without it; then the row whose label and heading say
            # most of the item ("Basic" under "Net income per share" over "Net income"
            # under "Numerator" for "basic net income per share"); "Software delivery …
            # revenue": under "Revenue" before under "Cost of revenue"
            # then of labels that fit alike, the column whose period is of the kind asked:
            # "depreciation and amortization in 2022" is the year's (a cash flow
            # statement's), not a deferred tax liability's at December 31, 2022
            period = table.columns[column].period if column < len(table.columns) else None
            # then a percentage the question does not ask for ranks below a figure; then a
            # heading the question says none of ranks below one it says and below none:
            # of two such ("Current year" under "United Kingdom …" and under "Overseas
            # …"), the one with fewer words is no nearer to the question
            percent = (cell.quantity.kind == "percent") == (kind == "percent")
            unasked = bool(section) and not section & (item - label)
            # first of all, a segment's row the question does not name ("Net sales" under
            # "Americas", repeated under each segment's heading) ranks below every other
            # row, an unsaid total of the whole among them, as EXTRACT reads it
            segment = by_section(row, table) and not section <= item
            scored.append(((not segment, -len(label & unsaid), len((label | section) & item),
                            len(label & item), -len(item - label), -len(aside),
                            _kind_fit(when, period), percent,
                            _UNASKED if unasked else -len(section - item - FILLERS),
                            not of_a_part(table, asked)), choice))
    if in_parts:
        # "total deferred revenue" stated as its current part and a non-current part
        # folded into another line: the rows read only after a row of the whole (the
        # deferred tax on deferred revenue, a segment's) are not it either
        scored = [(s, c) for s, c in scored if not read_after_whole(
            tables[c.table].rows[c.row], tables[c.table], asked, False)]
    if not scored:
        return Miss(_why_none(item, when, tables, columns_for), _nearest(item, tables))
    scored.sort(key=lambda s: s[0], reverse=True)
    best_score, best = scored[0]
    rivals = [c for s, c in scored[1:] if (s == best_score or s[:5] == best_score[:5] and _negated(
        _section(best, tables), _section(c, tables), item - item_words(best.label))
        # a footnote qualifies the row it marks ("… expenses (1)": "excludes stock-based
        # compensation"): a row whose label and heading name the item too is its rival
        or s[:3] == best_score[:3] and footnoted(_row(best, tables))
        and not footnoted(_row(c, tables)) and s[-1])
        and _value(c) != _value(best)]
    named = [c for c in [best, *rivals] if word_for_word(c.label, text)]
    if rivals and named and len({_value(c) for c in named}) == 1:
        best, rivals = named[0], []
    stated = [c for c in [best, *rivals] if of_a_statement(tables[c.table])]
    if rivals and stated and len({_value(c) for c in stated}) == 1:
        # a primary statement defines its line items: its figure over notes' rows
        # (EXTRACT reads it so too, naming the others)
        best, rivals = stated[0], []
    if rivals:
        return Miss("several rows name it: " + ", ".join(_shown(c, tables)
                                                         for c in [best, *rivals][:NEAREST]),
                    figures=tuple(c.cell for c in [best, *rivals]))
    if not TERM_SAID.search(asked) and (other := _other_term(best, tables)):
        return Miss(f"several rows name it: {_shown(best, tables)}, and {other!r} beside it: "
                    "the question says neither the current nor the non-current part")
    same_label = _same_label(best, tables, when, columns_for, text)
    if same_label:
        return Miss(f"the tables repeat the row {best.label!r} with other figures "
                    f"({', '.join(same_label)}): reading it by its label would be ambiguous")
    return best


def of_a_day(period: str | None) -> bool:
    """Whether a column's period (a scope) is one day."""
    return period is not None and ".." not in period and len(period) == 10


def _kind_fit(when: When | None, period: str | None) -> int:
    """1 when a column's period is of the kind asked (a day for a day, a span for a span:
    a year, a quarter), else 0."""
    if when is None or not period:
        return 0
    return int(of_a_day(period) == (when.span[0] == when.span[1]))


def _columns(table: Table, when: When | None, columns_for, kind: str | None = None) -> list[int]:
    """The columns of `when` (its amounts before a percent-of-total column beside them,
    as EXTRACT takes them; its percents when `kind` is "percent"); every column without
    a period asked."""
    if when is not None and kind is not None:
        return list(columns_for(table, when.text, kind))
    if when is not None:
        return list(columns_for(table, when.text, "money") or columns_for(table, when.text))
    return list(range(len(table.columns)))


def _named_by_header(words: frozenset[str], table: Table,
                     cells: list[tuple[int, Cell]]) -> list[tuple[int, Cell]]:
    """Of `cells` (column, cell), the one whose column header says the most of `words`
    (the item's words the row's label does not, fillers such as `reported` included)
    that not every header says; all of them when none does or several tie."""
    headers = {c: item_words(table.columns[c].header or "") for c, _ in cells
               if c < len(table.columns)}
    shared = frozenset.intersection(*headers.values()) if headers else frozenset()
    said = {c: len(words & (headers.get(c, frozenset()) - shared)) for c, _ in cells}
    most = max(said.values())
    named = [(c, cell) for c, cell in cells if said[c] == most]
    return named if most and len(named) == 1 else cells


def context_words(table: Table, row: Row, columns) -> frozenset[str]:
    """The words a row says, with those around it that may name what its label leaves
    out: its heading, the table's title, the columns' headers, and the table's totals
    (the rows above "Total operating revenues" are operating revenues)."""
    totals = [r.label for r in table.rows if r.total and r is not row]
    text = " ".join(filter(None, [row.label, row.section, rows_title(table), subject_of(table),
                                  *totals,
                                  *(table.columns[c].header for c in columns
                                    if c < len(table.columns))]))
    return item_words(text)


def _value(choice: Choice):
    return _quantity(choice.cell)


def _quantity(cell: Cell):
    q = cell.quantity
    return (q.amount, q.scale, q.kind) if q else cell.text


def _shown(choice: Choice, tables: list[Table]) -> str:
    page = f" on page {choice.page}" if choice.page else ""
    section = tables[choice.table].rows[choice.row].section
    return f"{choice.label!r}{' under ' + repr(section) if section else ''}{page} " \
           f"({choice.cell.text})"


def _section(choice: Choice, tables: list[Table]) -> str:
    return tables[choice.table].rows[choice.row].section or ""


def _row(choice: Choice, tables: list[Table]) -> Row:
    return tables[choice.table].rows[choice.row]


def _other_term(choice: Choice, tables: list[Table]) -> str | None:
    """The chosen row's other part by term with another figure (shared/tools/rows.py
    `other_term_cells`), as "label (figure)"; None when there is none."""
    table = tables[choice.table]
    return next((f"{other.label} ({cell.text})" for _, other, _, cell in other_term_cells(
        table.rows[choice.row], table, choice.column, tables)
        if _quantity(cell) != _value(choice)), None)


_NON = regex.compile(r"\bnon[\s-]?(?=\w)", regex.I)


def _negated(a: str, b: str, asked: frozenset[str]) -> bool:
    """Whether two headings differ only as "Current liabilities" and "Non-current
    liabilities" do, and the question's words beyond the row's (`asked`) say nothing of
    either: then neither is the one it means (the one with fewer words is not the
    nearer); "current marketable securities" says which."""
    if bool(_NON.search(a)) == bool(_NON.search(b)) or asked & (item_words(a) | item_words(b)):
        return False
    return item_words(_NON.sub("", a)) == item_words(_NON.sub("", b))


def _same_label(best: Choice, tables: list[Table], when: When | None, columns_for,
                text: str = "") -> list[str]:
    """Other rows with the chosen row's label and another figure in the period's column;
    under another heading, when the chosen row has one, they are not the same row (an
    EXTRACT names it with its heading: `Revenue: Software delivery …` beside `Cost of
    revenue: Software delivery …`), nor when `text` says the chosen label word for word
    and not theirs (`Amounts owed by …` beside `Amounts owed to …`), nor, when the chosen
    row is a primary statement's, rows of tables that are not (the statement defines the
    line item)."""
    out = []
    key = item_words(best.label)
    heading = tables[best.table].rows[best.row].section
    named = word_for_word(best.label, text)
    asked = item_words(text or best.label)
    stated = of_a_statement(tables[best.table])
    for t, table in enumerate(tables):
        if stated and not of_a_statement(table):
            continue
        columns = _columns(table, when, columns_for)
        if when is not None and len(columns) > 1 and t != best.table and not best.by_header:
            continue  # the period's segments, which EXTRACT reads after a row of one figure
        for column in columns:
            for r, row in enumerate(table.rows):
                if (t, r) == (best.table, best.row) or item_words(row.label) != key or (
                        heading and item_words(row.section or "") != item_words(heading)) or (
                        named and not word_for_word(row.label, text)):
                    continue
                if read_after_whole(row, table, text, bool(heading) or item_words(
                        row.section or "") <= asked):
                    continue  # a segment's row, which EXTRACT reads after the whole's
                cell = row.cells[column] if column < len(row.cells) else None
                if cell is None or cell.quantity is None:
                    continue
                q = cell.quantity
                if (q.amount, q.scale, q.kind) != _value(best):
                    out.append(f"{cell.text}{' on page ' + str(table.page) if table.page else ''}")
    return out


def _why_none(item: frozenset[str], when: When | None, tables: list[Table], columns_for) -> str:
    if not tables:
        return "the document has no tables"
    if when is not None and not any(columns_for(t, when.text) for t in tables):
        near = _columns_within(when, tables)
        return f"no table of the document has a column for {when.text}" + (
            f" (columns dated within it: {', '.join(near)})" if near else "")
    return "no row of its tables is labelled with the words asked about"


def _columns_within(when: When, tables: list[Table]) -> list[str]:
    """The headers of columns whose period falls within the one asked, which no rule made
    its column (a lone December 31 balance is not surely a year end): what came closest."""
    first, last = when.span
    out: list[str] = []
    for table in tables:
        for column in table.columns:
            scope = scope_of(column.period)
            if scope and first <= scope[0] and scope[1] <= last:
                out.append(f"{column.header!r} ({column.period})")
    return list(dict.fromkeys(out))[:NEAREST]


def _nearest(item: frozenset[str], tables: list[Table]) -> tuple[str, ...]:
    """The rows sharing the most words with the item, as `'label' (page N)`."""
    ranked = []
    for table in tables:
        for row in table.rows:
            shared = len(item & item_words(row.label))
            if shared:
                page = f" (page {table.page})" if table.page else ""
                ranked.append((-shared, row.label, f"{row.label!r}{page}"))
    return tuple(dict.fromkeys(shown for _, _, shown in sorted(ranked)))[:NEAREST]

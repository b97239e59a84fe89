"""The heuristic planner's table path: consumes a question read as a `Metric`
(shared/planners/metric.py), the documents it names and the search backend; produces a plan
that reads each cell with an EXTRACT by row and period and, for arithmetic, a COMPUTE
with the unit asked — or NoAnswer naming the nearest rows and documents.

Each EXTRACT is run on the document's tables while planning, exactly as the plan will
run it (shared/tools/cells/), so a plan never asks for a cell EXTRACT would not
read. Two ways to name a row are tried: the label the question's words pick in the
tables (shared/planners/rows.py) and the question's own words for the item (which EXTRACT
also knows by the domain library's names); when both read a cell it must be the same.
"The average X" with no period, when no row is named so, is the mean of X over every
period of the one table whose row X names a figure in each.

Which document: one the question names whose tables hold the cell. A filing answers
its own period and the earlier periods its tables show: of the documents holding a
cell, official sources come first, then the one whose own period is the cell's, then
the earliest later one (the first report of a figure rather than a later
restatement). Documents that rank alike and state different figures are a
disagreement, and nothing is answered. Each cell may come from its own document (a
three-year average over two annual reports).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import date, timedelta

import regex

from shared.errors import InputError, NoAnswer, ToolError
from shared.models import ComputeStep, ExtractStep, Plan
from shared.search import Document, SearchBackend
from shared.search.dates import parse_scope, spoken_scope
from shared.search.terms import all_words, stem, words
from shared.models.quantity import Quantity
from shared.models.table import Table
from shared.tables.periods import column_periods, one_length
from shared.tools.base import ToolOutput
from shared.tools.cells import Option, read_cells
from shared.tools.cells.request import has_words
from shared.tools.line_items import choices_named, item_called, items_named, line_items

from .metric import (Metric, Term, When, as_losses, at_period_end, average_over_periods,
                     by_formula, by_parts, by_shared_words, change_over_periods,
                     percent_change_of, year_before)
from .quarters import filing_quarter
from .rows import FILLERS, Choice, Miss, choose_cell, context_words, item_words, of_a_day
from .sources import NOTE, PROVISIONAL_RANK, cited, get_step, period_and_date, source_rank

NEAREST = 4
CHANGES = ("change", "decrease", "percent_change", "difference")
SIGNED = CHANGES + ("average", "sum")
"""Metrics whose sign depends on how the figures are signed."""
NEUTRAL = frozenset({"total"})
"""Words a row may lack and still be the one asked for (`Total revenues` is revenues)."""


@dataclass(frozen=True)
class _Found:
    doc: Document
    step: ExtractStep
    """The EXTRACT that reads the cell, as the plan runs it (row, period and all)."""
    read: ToolOutput
    """What that EXTRACT read from the document's tables while planning."""
    label: str
    """The label of the row it read, as the table writes it."""
    signed: bool = False
    """The row states figures of both signs: a negative is the figure's sign."""
    instant: bool = False
    """The cell's column is of a day (a balance "as of"), not of a span ending on it."""


@dataclass(frozen=True)
class _Missed:
    """Why a document answers nothing for a term."""

    why: str
    figures: tuple[Quantity, ...] = ()
    """What it states for the term where it names it in cells that disagree (several
    rows alike, or the row picked and the line item named): the figures a later filing
    may choose among, not add to."""


def table_plan(metric: Metric, docs: list[Document], backend: SearchBackend,
               columns_for) -> Plan:
    """GET → EXTRACT by row (one per cell) → COMPUTE when the metric is arithmetic.
    `docs`: the documents the question names (their titles' words are not the line
    item's). NoAnswer when a cell is not found in exactly one way."""
    docs = [d for d in docs if source_rank(d) != PROVISIONAL_RANK]
    tables = {d.id: backend.tables(d.id) for d in docs}
    with_tables = [d for d in docs if tables[d.id]]
    if not with_tables:
        raise NoAnswer("not found: no document the question names has tables",
                       [f"{d.title!r} ({period_and_date(d)})" for d in docs[:NEAREST]])
    if metric.kind == "latest":  # "X in the most recent year": the newest year stating X
        if (newest := _newest_year(metric.terms[0], with_tables, tables, columns_for)) is None:
            raise NoAnswer("not answered: it asks for the most recent year, and no table of "
                           "the documents named states its line item in a year",
                           [f"{d.title!r} ({period_and_date(d)})" for d in docs[:NEAREST]])
        term = replace(metric.terms[0], when=newest)
        metric = replace(metric, terms=(term,), kind="value", open=False,
                         name=f"{term.item} in {newest.text}")
    if metric.open:  # "the percentage change in X in 2019": the table's two periods
        if (opened := _over_periods(metric, with_tables, tables, columns_for)) is None:
            what = {"sum": "a total", "average": "an average"}.get(
                metric.kind, "a percentage change")
            raise NoAnswer(f"not answered: it asks for {what} but names fewer than two "
                           "periods, and no one table shows its line item in the period "
                           "asked and the one before, or in every period it has",
                           [f"{d.title!r} ({period_and_date(d)})" for d in docs[:NEAREST]])
        metric = opened

    def read(metric: Metric) -> list[_Found]:
        return [_find(n, term, with_tables, tables, columns_for)
                for n, term in enumerate(metric.terms, 1)]

    def first_read(asked: Metric, others) -> tuple[Metric, list[_Found]] | None:
        """The first of `others` whose cells are all read; a loss's row in place of an
        income item (`as_losses`) only when written negative."""
        losses = as_losses(asked, _loss_names_of)
        incomes = as_losses(asked, _income_names_of)
        for other in filter(None, (*others, *losses, *as_losses(asked, _other_loss_names_of),
                                   *incomes)):
            try:
                found = read(other)
            except NoAnswer:
                continue
            if other in losses:
                other, found = _losses_as_income(asked, other, found)
            elif other in incomes:
                _incomes_as_losses(asked, other, found)
            return other, found
        return None

    try:
        found = read(metric)
        if (said := _change_unsaid(metric, found)) is not None:
            raise NoAnswer(said, [f"{f.doc.title!r}: row {f.label!r}, {f.read.value}"
                                  for f in found])
    except NoAnswer as missed:
        # the periods the table has, or the library's formula for an item no row states
        # (its income items read from a loss's row: Palantir's net profit margin)
        if (other := _over_periods(metric, with_tables, tables, columns_for)
                or by_formula(metric, _formula_of)) is not None:
            try:
                metric, found = other, read(other)
            except NoAnswer:
                if (got := first_read(other, [])) is None:
                    raise  # the formula's miss: which of its parts no row states
                metric, found = got
        else:
            # two things the question adds, which no row states together, or two it
            # compares that share their last words: their rows, or the miss of the items
            # as the question names them; the item at a year's end without "at the end";
            # or the row that states the item as a loss ("Net loss" for net income)
            ended = at_period_end(metric)
            if (got := first_read(metric, [by_parts(metric), by_shared_words(metric), ended,
                                           ended and by_formula(ended, _formula_of)])) is None:
                chosen = _which_of(metric, with_tables, tables, columns_for)
                if isinstance(chosen, NoAnswer):
                    raise chosen from None
                if chosen is None or (got := first_read(chosen, [chosen])) is None:
                    raise missed from None
            metric, found = got
    if why := _unclear(metric, found):
        raise NoAnswer(f"not answered: {why}",
                       [f"{f.doc.title!r}: row {f.step.row!r}, {f.read.value}"
                        for f in found][:NEAREST])
    return _plan(metric, found, backend)


_BOTH_WAYS = frozenset({stem("increase"), stem("decrease")})


def _change_unsaid(metric: Metric, found: list[_Found]) -> str | None:
    """Why the row read for "the change in X" is not X's change: its label does not say
    so, only its heading ("Service cost" under a roll-forward's "Change in benefit
    obligation" is the year's service cost, not how much it grew); None when it says
    so, or the metric asks no change."""
    if (m := change_over_periods(metric)) is None:
        return None
    # a word the item says itself ("… observable price changes") is not its change; a
    # label that says both ways ("(Increase) decrease in inventories") signs its figures
    # its own way, which may not be the way asked
    change = item_words(m["word"]) - item_words(m["item"])
    if any(change & (said := item_words(f.label)) and not _BOTH_WAYS <= said for f in found):
        return None
    return (f"not found: no row states {metric.terms[0].item!r} in its own words; the row "
            f"read for it, {found[0].label!r}, does not say {m['word']!r}")


def _which_of(metric: Metric, docs: list[Document], tables: dict[str, list[Table]],
              columns_for) -> Metric | NoAnswer | None:
    """The metric with each term no row states, whose item the library states only as one
    of others ("Apple's EPS": basic or diluted), read as the first of them where every one
    states the same figure (Palantir's basic and diluted net loss per share, $(0.18)
    each); else why it is not answered, naming each one's figure; None when no term is
    such an item, or no part of one is stated at all."""
    terms, chose = list(metric.terms), False
    for n, term in enumerate(metric.terms, 1):
        choices = choices_named(_POSSESSOR.sub("", term.item))
        if not choices:
            continue
        parts = [item for name in choices[0].one_of if (item := item_called(name))]
        found = []
        for part in parts:
            try:
                found.append(_find(n, replace(term, item=part.names[0]), docs, tables,
                                   columns_for))
            except NoAnswer:
                continue
        if len(found) == len(parts) and len({_value(f.read) for f in found}) == 1:
            terms[n - 1], chose = replace(term, item=parts[0].names[0]), True
            continue
        if not found:
            return None  # no part is stated either: the question's own miss says why
        stated = [f"{f.doc.title!r}: row {f.label!r}, {f.read.value}"
                  + (f" (page {f.read.document.page})" if f.read.document
                     and f.read.document.page else "") for f in found]
        kinds = " or ".join(part.names[0] for part in parts)
        neither = "neither" if len(parts) == 2 else "none of them"
        return NoAnswer(f"not answered: reports state {term.item!r} as {kinds}, and the "
                        f"question says {neither}", stated)
    return replace(metric, terms=tuple(terms)) if chose else None


def _items_of(item: str):
    """The domain library's line items `item` names: also the item a company's
    possessive opens ("Patriot Transportation Holding's working capital")."""
    return items_named(item) or items_named(_POSSESSOR.sub("", item))


def _loss_names_of(item: str) -> tuple[str, ...]:
    """The labels of the row that states the line item `item` names as a loss, as the
    domain library gives them (`net loss`, … for "Palantir's net income")."""
    names = {i.loss_names for i in _items_of(item) if i.loss_names}
    return names.pop() if len(names) == 1 else ()


def _income_names_of(item: str) -> tuple[str, ...]:
    """The income whose loss `item` names, as the domain library names it ("net income"
    for "Acme's net loss", "net income attributable to common stockholders" for "… net
    loss attributable to common stockholders"): its row states the loss written negative
    ("Net income (loss)", "Net earnings")."""
    loss = _loss_named(item)
    income = regex.sub(r"\bloss\b", "income", loss)
    names = {income for i in line_items() if loss in i.loss_names and income in i.names}
    return tuple(names)


def _other_loss_names_of(item: str) -> tuple[str, ...]:
    """The domain library's other names of the loss `item` names ("operating loss" for
    "Ondas' loss from operations"), none that narrows it to whom it is attributable."""
    loss = _loss_named(item)
    return tuple(sorted({n for i in line_items() if loss in i.loss_names for n in i.loss_names
                         if n != loss and "attributable" not in n}))


def _loss_named(item: str) -> str:
    """`item` as the domain library writes a loss's name: no possessive, lower case."""
    return " ".join(_POSSESSOR.sub("", item).lower().split())


def _incomes_as_losses(asked: Metric, read: Metric, found: list[_Found]) -> None:
    """NoAnswer unless each cell `read` (the income rows in place of the losses `asked`
    names) is written negative, a loss ("Net income (loss) (1,234)", as a "Net loss" row
    writes it); a positive figure is income, no loss."""
    for term, row, f in zip(asked.terms, read.terms, found):
        if row.item != term.item and not _negative(f):
            raise NoAnswer(f"not found: no row states {term.item!r}"
                           f"{' for ' + term.when.text if term.when else ''}; the row "
                           f"{f.label!r} states {f.read.value}, income rather than a loss; "
                           "nothing is answered rather than a figure of the wrong sign",
                           [f"{f.doc.title!r}: row {f.label!r}, {f.read.value}"])


def _losses_as_income(asked: Metric, read: Metric,
                      found: list[_Found]) -> tuple[Metric, list[_Found]]:
    """`read` (a loss's rows in place of the income items `asked` names) with arithmetic
    on the income: each such cell is `-abs()` of the loss's amount, a signed figure (net
    profit margin: -371,094 / 1,905,871). NoAnswer unless each is written negative: "Net
    loss (371,094)" is net income of -371,094; "Net loss 371,094" may state the loss's
    amount or a figure signed as income, which the row does not tell."""
    expression, signed = read.expression, list(found)
    for n, (term, row, f) in enumerate(zip(asked.terms, read.terms, found), 1):
        if row.item == term.item:
            continue
        if not _negative(f):
            raise NoAnswer(f"not found: no row states {term.item!r}"
                           f"{' for ' + term.when.text if term.when else ''}; the row "
                           f"{f.label!r} states the loss as {f.read.value}, without a sign, "
                           "so whether it is the loss's amount or the income is not told; "
                           "nothing is answered rather than a figure of the wrong sign",
                           [f"{f.doc.title!r}: row {f.label!r}, {f.read.value}"])
        signed[n - 1] = replace(f, signed=True)
        if expression is not None:
            expression = regex.sub(rf"(?<!abs\()\$T{n}\b", f"(-abs($T{n}))", expression)
    return replace(read, expression=expression), signed


def _formula_of(item: str) -> tuple[str, str] | None:
    """The domain library's formula for the line item `item` names, and its kind: also
    of the item a company's possessive opens ("Patriot Transportation Holding's working
    capital")."""
    formulas = {(i.formula, i.kind) for i in _items_of(item) if i.formula}
    return formulas.pop() if len(formulas) == 1 else None


_POSSESSIVE = r"(?:['’]s|(?<=s)['’])\s+"
"""A company's possessive: "Holding's ", "Holdings' "."""
_POSSESSOR = regex.compile(rf"^.*{_POSSESSIVE}")
"""Whose the item is ("Patriot Transportation Holding's ", "Ondas Holdings' "): no word
of its name."""


def _unpossessed(item: str, title: str) -> str:
    """`item` without the company its possessive opens with, when the document's title
    names it ("Ondas Holdings' inventory" of "Ondas Holdings Inc. Form 10-K":
    inventory)."""
    m = _WHOSE.match(item)
    return m["rest"] if m and all_words(m["who"]) <= all_words(title) else item


_WHOSE = regex.compile(rf"^(?P<who>[^'’]+?){_POSSESSIVE}(?P<rest>\S.*)$")




def _over_periods(metric: Metric, docs: list[Document], tables: dict[str, list[Table]],
                  columns_for) -> Metric | None:
    """The periods a metric of one term leaves to the table, when no row is named by the
    term's words as they stand:
    - "the average X" with no period: the average of X over every period of the one
      table whose row X names a figure in each of its periods (TAT-QA's "What is the
      average Cost of sales" of a three-year table is the three years' mean); "the 2019
      average X": of X in 2019 and 2018, read from one table;
    - "the total X across all 3 years": the sum of X over every period of that table,
      which must show as many as the question says;
    - a percentage change of X asked of no period: from the one table's earlier period
      to its later when it shows two; "in 2019": from 2018;
    - "the change in X" asked of no period, read as a line item no row states: as the
      percentage change, the later figure less the earlier ("the decrease in X": the
      earlier less the later).
    None when the question is not of that form, or when no table, or tables with other
    periods, hold such a row, or its periods differ in length (a quarter beside a year),
    or the average is within a year ("average quarterly price")."""
    term = metric.terms[0]
    if len(metric.terms) != 1:
        return None
    if metric.open:
        op, item = metric.kind, term.item
    elif (m := average_over_periods(metric)):
        op, item = "average", m["item"]
    elif (m := change_over_periods(metric)):
        # only of a table of exactly two periods, and only when no row names "change in X":
        # an earlier, broader reading answered held-out questions whose answers are words
        op, item = ("decrease" if m["word"].lower() == "decrease" else "change"), m["item"]
    else:
        return None
    if _WITHIN_YEAR.search(item):
        return None
    year = None
    if term.when is not None and (year := year_before(term.when)) is None:
        return None
    held = set()
    for doc in docs:
        for table in tables[doc.id]:
            whens = _periods_of(table) if year is None else [year, term.when]
            if len(whens) > 1 and all(_states(table, item, w, doc, columns_for)
                                      for w in whens):
                held.add(tuple(whens))
    if len(held) != 1:
        return None
    whens = held.pop()
    if metric.periods is not None and metric.periods != len(whens):
        return None  # "across the 3 year period" of a table of two years
    if not one_length(w.span for w in whens) or (
            op not in ("average", "sum") and len(whens) != 2):
        return None
    terms = tuple(Term(item, w) for w in whens)
    over = f" of {whens[0].text} and {whens[1].text}" if year else ""
    if op in ("average", "sum"):
        refs = " + ".join(f"$T{i}" for i in range(1, len(whens) + 1))
        if op == "sum":
            return Metric(terms, refs, "sum", scale=metric.scale, places=metric.places,
                          name=f"total {item}{over}")
        return Metric(terms, f"({refs}) / {len(whens)}", "average", scale=metric.scale,
                      places=metric.places, name=f"average {item}{over}")
    if op in ("change", "decrease"):
        return Metric(terms, "$T2 - $T1" if op == "change" else "$T1 - $T2", op,
                      scale=metric.scale, places=metric.places,
                      name=f"{op} in {item} from {whens[0].text} to {whens[1].text}")
    return Metric(terms, percent_change_of(metric.places), "percent_change",
                  percent=True, places=metric.places, name=f"percentage change in {item} from "
                  f"{whens[0].text} to {whens[1].text}")


def _newest_year(term: Term, docs: list[Document], tables: dict[str, list[Table]],
                 columns_for) -> When | None:
    """The newest year in which a table of `docs` states `term`'s item: a column of a
    whole (calendar or fiscal) year, or of the day a document's own period ends (a
    balance at its year end); None when none does, or when a year and a day end alike."""
    found = []
    for doc in docs:
        try:
            own_end = parse_scope(doc.period)[1] if doc.period else None
        except InputError:
            own_end = None
        for table in tables[doc.id]:
            found += [w for w in _periods_of(table)
                      if (360 <= (w.span[1] - w.span[0]).days <= 371
                          or w.span[0] == w.span[1] == own_end)
                      and _states(table, term.item, w, doc, columns_for)]
    if not found:
        return None
    newest = [w for w in found if w.span[1] == max(w.span[1] for w in found)]
    return newest[0] if len({w.span for w in newest}) == 1 else None


def _states(table: Table, item: str, when: When, doc: Document, columns_for) -> bool:
    """Whether `table` of `doc` states `item` in `when` in one cell (the words of the
    document's title are no words of its row)."""
    words = item_words(item) - all_words(doc.title)
    return isinstance(choose_cell(words, when, [table], columns_for, text=item), Choice)


_WITHIN_YEAR = regex.compile(r"\b(?:quarterly|monthly|weekly|daily|per\s+(?:quarter|month))\b",
                             regex.I)
"""An average within a year ("the average quarterly low price"), not over two."""


def _periods_of(table: Table) -> list[When]:
    """The periods of `table`'s columns, earliest first."""
    return [When(period, span) for period, span in column_periods(table).items()]


def _find(n: int, term: Term, docs: list[Document], tables: dict[str, list[Table]],
          columns_for) -> _Found:
    """The cell `term` names in the best document holding it."""
    hits, misses = [], []
    for doc in docs:
        found = _read(n, _in_filing_quarter(term, doc, tables[doc.id]), doc, tables[doc.id],
                      columns_for)
        if isinstance(found, _Missed):
            misses.append((doc, found))
        else:
            hits.append(found)
    asked = f"{term.item!r}" + (f" for {term.when.text}" if term.when else "")
    if not hits:
        nearest = [f"{d.title!r} ({period_and_date(d)}): {m.why}" for d, m in misses[:NEAREST]]
        raise NoAnswer(f"not found: no table row of the documents named states {asked}; "
                       "nothing is answered rather than a figure the tables do not support",
                       nearest)
    if term.when is not None and term.when.span[0] == term.when.span[1] \
            and any(f.instant for f in hits):
        # a day asked ("as of September 24, 2022") is a balance: a column of a year ending
        # on it (a cash flow statement's "Inventories", the year's change) answers only
        # when no table has a column of the day itself
        hits = [f for f in hits if f.instant]
    hits.sort(key=lambda f: _doc_rank(f.doc, term))
    best = hits[0]
    for other in hits[1:]:
        if _doc_rank(other.doc, term)[:2] != _doc_rank(best.doc, term)[:2]:
            break
        if _value(other.read) != _value(best.read):
            raise NoAnswer(
                f"not answered: the documents disagree on {asked}: {best.doc.title!r} states "
                f"{best.read.value} and {other.doc.title!r} states {other.read.value}",
                [f"{f.doc.title!r} ({period_and_date(f.doc)}): row {f.step.row!r}, "
                 f"{f.read.value}" for f in (best, other)])
    for doc, missed in misses:
        # the filing about the period states the item in cells that disagree: a later
        # one may tell which, never answer a figure none of them is (Tesla's 10-K for
        # 2020: its balance sheet's and its VIEs' "Total liabilities"; the 2022 10-K's
        # row read for it, 495, was another item)
        if missed.figures and _doc_rank(doc, term)[:2] < _doc_rank(best.doc, term)[:2] \
                and not any(_same_amount(best.read.quantity, q) for q in missed.figures):
            raise NoAnswer(
                f"not answered: {doc.title!r}, about the period asked, names {asked} in "
                f"cells that disagree, and {best.doc.title!r} states {best.read.value}, "
                "none of them",
                [f"{doc.title!r} ({period_and_date(doc)}): {missed.why}",
                 f"{best.doc.title!r} ({period_and_date(best.doc)}): row {best.step.row!r}, "
                 f"{best.read.value}"])
    return best


def _same_amount(a: Quantity | None, b: Quantity | None) -> bool:
    """Whether two figures are one amount, sign aside, each in its own scale."""
    if a is None or b is None or a.amount is None or b.amount is None:
        return False
    return abs(a.absolute()) == abs(b.absolute())


_FISCAL_QUARTER = regex.compile(r"Q(?P<q>[1-4]) FY(?P<y>\d{4})")


def _in_filing_quarter(term: Term, doc: Document, tables: list[Table]) -> Term:
    """`term`, its fiscal quarter ("Q1 FY2023") read as the quarter `doc` covers when
    `doc` is the quarterly filing about that fiscal quarter (Apple's "Q1 2023 Form 10-Q",
    the quarter ended December 31, 2022: its columns are headed by that date, not by the
    fiscal quarter, which a company's own calendar places): as its tables' columns name
    the three months ending on the filing's last day, else as its period. The same
    quarter of the fiscal year before is the columns of the three months ending a year
    earlier, to within a week (Microsoft's "Q1 FY2023" in its 10-Q for Q1 FY2024: the
    column of September 30, 2022 beside September 30, 2023)."""
    m = _FISCAL_QUARTER.fullmatch(term.when.text) if term.when is not None else None
    if m is None or doc.period is None:
        return term
    span = doc.period_range()
    own = filing_quarter(doc.content, span)
    if own == (int(m["q"]), int(m["y"])):
        last, slack = span[1], 0
    elif own == (int(m["q"]), int(m["y"]) + 1):
        last, slack = span[1] - timedelta(days=364), 7
    else:
        return term
    named = Counter(c.period for t in tables for c in t.columns
                    if c.period and _quarter_ending(c.period, last, slack))
    if not named and slack:
        return term
    period = named.most_common(1)[0][0] if named else doc.period
    return Term(term.item, When(period, parse_scope(period)))


def _quarter_ending(period: str, last: date, slack: int = 0) -> bool:
    """Whether a column's `period` is about three months ending on `last` (to within
    `slack` days): "Three Months Ended April 1, 2023", 13 weeks."""
    try:
        first, end = parse_scope(period)
    except InputError:
        return False
    return abs((end - last).days) <= slack and 55 <= (end - first).days <= 100


def _read(n: int, term: Term, doc: Document, tables: list[Table],
          columns_for) -> _Found | _Missed:
    """The EXTRACT of `term` from `doc`, read as the plan will run it; else why not."""
    # the document's title words name the document, not the item ("Rokilor annual
    # report"), unless a column header says them ("As reported")
    headers = all_words(" ".join(c.header for t in tables for c in t.columns))
    title = frozenset(w for w in all_words(doc.title) - headers if not w.isdigit())  # not its year
    # "the percentage of sales represented by gross profit": a percent cell
    kind = "percent" if _PERCENT_ITEM.search(term.item) else "number" if term.counted else None
    item = item_words(term.item) - title
    chosen = choose_cell(item, term.when, tables, columns_for, kind, term.item)
    picked = None if isinstance(chosen, Miss) else _row_text(tables, chosen)
    # a plan's row must have words to match by (shared/tools/cells/request.py): `Total`
    # under its heading is named by the question's own words instead
    by_header = isinstance(chosen, Choice) and chosen.by_header
    # each name EXTRACT is given, with the item's words the row read must say
    names = [(picked, item)] if picked and has_words(picked) and not by_header else []
    keep = item_words(picked) if picked else frozenset()
    owns = [(_without_title(term.item, title, keep), item)]
    if (bare := _unpossessed(term.item, doc.title)) != term.item \
            and (own := _without_title(bare, title, keep)) != owns[0][0]:
        # the company's name, which a column header says too ("Ondas Networks", "Total
        # Palantir's Stockholders' Equity"), is whose the item is: the line item is named
        # without it beside the row the question's words pick, and also without it when
        # no row is labelled with the words asked
        bare_own = (own, item_words(bare) - title)
        owns = [*owns, bare_own] if isinstance(chosen, Miss) else [bare_own]
    # without a period EXTRACT reads a row's newest column: only a row with one figure,
    # which the question's words pick, is read that way; a column a header's own words
    # chose is named by the question's words (EXTRACT reads the header too)
    names += [(own, said) for own, said in owns if own and all(own != n for n, _ in names)
              and (term.when is not None or by_header) and has_words(own)]
    reads, why, figures = [], [], []
    for row, said in names:
        step = ExtractStep(id="E1", operation="EXTRACT", source="$DOC", row=row,
                           period=term.when.text if term.when else None, quantity=kind,
                           output_var=f"$T{n}")
        try:
            out, cells = read_cells(step, [doc.evidence()], lambda _id: tables)
        except ToolError as e:
            why.append(f"row {row!r}: {e.code}")
            continue
        if isinstance(chosen, Choice) and row == picked and _value(out) != _value_of(chosen):
            why.append(f"row {row!r} reads {out.value}, not the cell {chosen.cell.text} the "
                       "question's words pick")
            figures += [chosen.cell.quantity, out.quantity]
            continue
        if isinstance(chosen, Choice) and row != picked and not _same_figure(out, chosen.cell):
            # the line item named otherwise reads another cell than the one the question's
            # words pick, though the row's own label may not be read (a statement of
            # equity's "Net income" in a component's column)
            return _Missed(f"the row the question's words pick ({chosen.cell.text}) and the "
                           f"line item {row!r} ({out.value}) are different cells",
                           (chosen.cell.quantity, out.quantity))
        if isinstance(chosen, Miss) and chosen.figures and _unsettled(out, cells, chosen,
                                                                      kind):
            why.append(f"row {row!r} reads {out.value}, which does not settle which of the "
                       "rows its words name alike")
            continue
        if out.confidence == "table_row" and (left := _unsaid(said, cells)):
            why.append(f"row {row!r} reads {out.value} from a row that does not say "
                       f"{', '.join(sorted(left))}")
            continue
        first = cells[0]
        reads.append((step, out, first.row.label,
                      first.row.both_signs(first.quantity.kind == "percent",
                                           first.table.alike(first.column)),
                      of_a_day(first.table.columns[first.column].period)))
    if not reads:
        found = [chosen.why] if isinstance(chosen, Miss) else []
        nearest = (f"; nearest rows: {', '.join(chosen.nearest)}"
                   if isinstance(chosen, Miss) and chosen.nearest else "")
        if isinstance(chosen, Miss):
            figures += [c.quantity for c in chosen.figures]
        return _Missed("; ".join(found + why) + nearest, tuple(q for q in figures if q))
    if any(_value(out) != _value(reads[0][1]) for _, out, *_ in reads[1:]):
        read = ", ".join(f"{s.row!r} {o.value}" for s, o, *_ in reads)
        return _Missed("the row the question's words pick and the line item they name read "
                       f"different cells: {read}", tuple(o.quantity for _, o, *_ in reads
                                                          if o.quantity))
    return _Found(doc, *reads[0])


def _unsettled(out: ToolOutput, cells: list[Option], chosen: Miss, kind: str | None) -> bool:
    """Whether EXTRACT's looser reading of words that name several rows alike leaves
    them as unsettled as before: it reads one of their figures where they differ (it
    picked one, as the question does not) or their sum (the generated questions of
    bench/cell_sweep.py found it wrong where it was a part that was asked), a percentage
    the question does not ask for where one of them is not, or a row without a label by
    its heading's words ("current": the subtotal under "Overseas current tax expense").
    The same figure on two pages, or another labelled row's figure (a statement's line
    the notes break down), settles it."""
    q = out.quantity
    amounts = {abs(c.quantity.amount) for c in chosen.figures
               if c.quantity is not None and c.quantity.amount is not None}
    read = abs(q.amount) if q is not None and q.amount is not None else None
    if len(amounts) > 1 and (read in amounts or read == sum(amounts)):
        return True
    if kind != "percent" and q is not None and q.kind == "percent" and any(
            c.quantity is not None and c.quantity.kind != "percent" for c in chosen.figures):
        return True
    return not cells[0].row.label.strip() and read not in amounts


def _same_figure(out: ToolOutput, cell) -> bool:
    """Whether EXTRACT read the figure of `cell`, whatever its sign and scale say (a
    deduction "(29,915)" of a reconciliation is the statement's "$29,915")."""
    a, b = out.quantity, cell.quantity
    if a is None or b is None or a.amount is None or b.amount is None:
        return out.value == cell.text
    return abs(a.amount) == abs(b.amount)


_PERCENT_ITEM = regex.compile(r"\bper\s?cent(?:age)?s?\b|%")
"""An item that is a percentage ("the percent of total sales from APAC")."""


def _unsaid(item: frozenset[str], cells: list[Option]) -> frozenset[str]:
    """The item's words that neither a row EXTRACT read nor the words around it say
    (its heading, its table's title and totals, its column's header): a row must say all
    the question asks about ("basic earnings per share (cents per share)" is not the
    share count labelled "Basic earnings per share")."""
    left = None
    for cell in cells:
        unsaid = frozenset(item - context_words(cell.table, cell.row, [cell.column]) - FILLERS
                           - NEUTRAL)
        left = unsaid if left is None or len(unsaid) < len(left) else left
    return item - FILLERS if left is None else left


def _row_text(tables: list[Table], choice: Choice) -> str:
    """The row as an EXTRACT names it: its label, after its heading when it has one
    (`Cost of revenue: Client services`)."""
    row = tables[choice.table].rows[choice.row]
    return f"{row.section.rstrip(': ')}: {row.label}" if row.section else row.label


def _without_title(item: str, title: frozenset[str], keep: frozenset[str] = frozenset()) -> str:
    """The item as a row is named: without the words the document's title says (its
    company, and the "for"/"of" before it) and the fillers at its ends ("amount"), but
    those `keep` holds, the words of the row the question's words pick ("the current
    gross carrying amount" is read in the row "Gross carrying amount")."""
    kept = [w for w in item.split() if not (found := words(w)) or stem(found[0]) not in title]
    while kept and _filler_end(kept[-1], keep):
        kept.pop()
    while kept and _filler_end(kept[0], keep):
        kept.pop(0)
    return " ".join(kept).strip(" ,")


def _filler_end(token: str, keep: frozenset[str] = frozenset()) -> bool:
    """Whether a word at an item's end is one of ENDS ("in-game" is not "in"), and not
    one of the stems of `keep`."""
    found = words(token)
    return len(found) == 1 and found[0] in ENDS and stem(found[0]) not in keep


ENDS = frozenset("for of at by in from to the a an amount amounts value figure total "
                 "'s s".split()) - {"total"}
"""Words an item neither starts nor ends with once its company is gone."""


def _unclear(metric: Metric, found: list[_Found]) -> str | None:
    """Why the arithmetic asked for is not clear on these cells, or None.

    A change, total or average of figures written negative ("(21,387)" for an expense)
    may be of the amounts or of the signed figures, unless their row states both signs
    (net income 542.0 beside (762.3): the sign is the figure's) or the figures are all
    negative and the change a relative one; a percentage change of percentages
    may mean points or a relative change; two line items that read one row are not
    two; a decrease asked of an item that rose has no size. Either way the answer could
    be wrong."""
    quantities = [f.read.quantity for f in found]
    if any(q is None or q.kind == "date" for q in quantities):
        return "a cell it reads is not a figure"
    if metric.kind in SIGNED and any(q.amount < 0 and not f.signed
                                     for q, f in zip(quantities, found)) \
            and not _all_negative(metric, found):
        return ("the figures are written as negatives (in parentheses or with a minus): "
                f"whether the {metric.kind.replace('_', ' ')} is of the amounts or of the "
                "signed figures is unclear")
    if len(found) == 2 and metric.terms[0].item != metric.terms[1].item and \
            len({(f.doc.id, f.label, f.read.value) for f in found}) == 1:
        # "non-vested shares vested … as a percentage of the total non-vested shares":
        # two line items asked, one row read for both, so one of them is misread
        return (f"the two line items it relates ({metric.terms[0].item!r}, "
                f"{metric.terms[1].item!r}) read the same row, {found[0].label!r}")
    kinds = {q.kind for q in quantities}
    scales = {q.scale for q in quantities if q.kind == "money"}
    if len(found) > 1 and 0 in scales and len(scales) > 1:
        return ("one table it reads states its scale (\"in millions\") and another states "
                "none: the amounts cannot be brought to one scale with confidence")
    if metric.kind in ("share", "ratio", "defined") and "percent" in kinds and len(kinds) > 1:
        return ("it relates a percentage to an amount (a common-size table's \"100.0%\" read "
                "as revenue): the cells read are not of one kind")
    if metric.kind == "decrease" and len(found) == 2 \
            and quantities[1].absolute() > quantities[0].absolute():
        # "How much did revenue fall in 2022" of a revenue that grew: no fall to size
        return (f"it asks how much {metric.terms[0].item!r} decreased, and it rose: "
                f"{found[0].read.value} in {metric.terms[0].when.text}, "
                f"{found[1].read.value} in {metric.terms[1].when.text}")
    if metric.kind == "percent_change" and any(q.kind == "percent" for q in quantities):
        return ("the figures are percentages: a percentage change of them may mean points or "
                "a relative change")
    return None


def _all_negative(metric: Metric, found: list[_Found]) -> bool:
    """Whether a percentage change is of figures all written negative: of the amounts or
    of the signed figures it is the same relative change ((21,387) from (28,237) is
    -24.26% either way), which COMPUTE computes."""
    return metric.kind == "percent_change" and all(
        f.read.quantity.amount < 0 for f in found)


def _doc_rank(doc: Document, term: Term) -> tuple:
    """Official first; then the document about the cell's own period (its period ends
    within it: the fiscal 2019 10-K, ended September 30, 2019, is about 2019; the fiscal
    2020 10-K, which began in October 2019, is not); then the earliest later one;
    documents without a period last."""
    period = doc.period_range()
    if term.when is None or period is None:
        relation, distance = (1, 0) if period is not None else (2, 0)
    else:
        first, last = term.when.span
        own = first <= period[1] <= last
        relation = 0 if own else 1
        distance = (period[1] - last).days if period[1] >= last else 10**6
    return (source_rank(doc), relation, distance, doc.title, doc.id)


def _value(out: ToolOutput):
    q = out.quantity
    return (q.amount, q.scale, q.unit) if q is not None else out.value


def _value_of(choice: Choice):
    """The chosen cell's figure as `_value` compares it: its kind is left out, since
    EXTRACT types a cell by its row's words too ("receivable" is money)."""
    q = choice.cell.quantity
    return (q.amount, q.scale, q.unit) if q is not None else choice.cell.text


def _plan(metric: Metric, found: list[_Found], backend: SearchBackend) -> Plan:
    steps, gets = [], {}
    for f in found:
        if f.doc.id not in gets:
            step, _ = get_step(f.doc, backend, step_id=f"E{len(steps) + 1}",
                               var=f"$DOC{len(gets) + 1}")
            gets[f.doc.id] = step
            steps.append(step)
    for f in found:
        steps.append(f.step.model_copy(update={"id": f"E{len(steps) + 1}",
                                               "source": gets[f.doc.id].output_var}))
    expression = metric.expression
    if expression is None and _used(metric, found[0]):
        raise NoAnswer(f"not answered: it asks for the {metric.name}, and the row read, "
                       f"{found[0].label!r}, states cash it provided ({found[0].read.value})")
    if expression is None and (_outflow(found[0]) or _USED.match(metric.name) and _negative(
            found[0])):
        expression = "abs($T1)"
    if metric.kind == "defined" and expression is not None:
        expression = _net_flows_signed(_outflows_subtracted(expression, found), found)
    expression = _in_scale_asked(metric, found, expression)
    if expression is not None:
        steps.append(ComputeStep(id=f"E{len(steps) + 1}", operation="COMPUTE",
                                 expression=expression, output_var="$VALUE"))
    return Plan(domain="finance", steps=steps, answer=_answer(metric, found, expression),
                planner="heuristic")


AMOUNTS = ("value", "change", "decrease", "difference", "average", "sum")
"""Metrics whose result is an amount in the cells' unit, which a scale asked restates."""


def _in_scale_asked(metric: Metric, found: list[_Found], expression: str | None) -> str | None:
    """The expression restated in the scale the question asks ("in USD millions" of a
    table in thousands: `/ 1000`, which COMPUTE reads as the same amount in millions)."""
    scales = {f.read.quantity.scale for f in found if f.read.quantity is not None
              and f.read.quantity.kind in ("money", "number")}
    if metric.scale is None or metric.kind not in AMOUNTS or len(scales) != 1:
        return expression
    shift = metric.scale - scales.pop()
    if shift == 0:
        return expression
    factor = f"{10 ** abs(shift)}"
    return f"({expression or '$T1'}) {'/' if shift > 0 else '*'} {factor}"


OUTFLOW = regex.compile(r"^\s*(?:purchases?|payments?|paid|repurchases?|repayments?|acquisitions?|"
                        r"additions?|capital\s+expenditures?|dividends\s+paid|cash\s+paid)\b"
                        r"|\b(?:paid|repaid|purchased|repurchased)\s*$", regex.I)
"""Row labels that name a payment ("Purchases of …", "Common stock cash dividends paid",
"Common stock repurchased"): a
statement writes the amount as an outflow, "(9,576)"."""


def _outflow(found: _Found) -> bool:
    """Whether the one cell asked for is a payment the table writes as an outflow: the
    question asks its amount ("capital expenditure" is 9,576, not -9,576)."""
    return _negative(found) and bool(OUTFLOW.search(found.label))


def _negative(found: _Found) -> bool:
    return (amount := _amount(found)) is not None and amount < 0


def _amount(found: _Found):
    """The figure the planner read for `found`, None when it read none."""
    q = found.read.quantity
    return None if q is None else q.amount


_USED = regex.compile(r"^cash\s+used\b", regex.I)
"""What a question asks the cash used in or for ("How much cash did Rocket Lab use in
operating activities …"): its amount, which a statement writes as an outflow."""


def _used(metric: Metric, found: _Found) -> bool:
    """Whether the question asks the cash used and the cell read states cash provided: a
    positive figure of a row that says so ("Net cash provided by (used in): Investing
    activities"), so no amount was used. A row of payments states them positive ("Cash
    used to settle the obligation $1,134")."""
    return bool(_USED.match(metric.name)) and (amount := _amount(found)) is not None \
        and amount > 0 and bool(_PROVIDED.search(f"{found.step.row} {found.label}"))


_PROVIDED = regex.compile(r"\bprovided\b", regex.I)


def _outflows_subtracted(expression: str, found: list[_Found]) -> str:
    """A formula the question defines that subtracts, multiplies or divides by a payment
    the table writes as an outflow does so with its amount ("operating cash flow -
    purchase of property and equipment" of `9,382` and `(5,045)` is 4,337; a dividend
    payout ratio, "payments for dividends / net income", of `(15,234)` and `93,736` is
    0.16): `abs()` of each such cell, so COMPUTE knows which is meant. An outflow added
    is left as written (and COMPUTE refuses to guess)."""
    for i, f in enumerate(found, 1):
        if _outflow(f) and regex.search(rf"[-*/][\s(]*\$T{i}\b|\$T{i}\b[\s)]*[*/]",
                                        expression):
            expression = regex.sub(rf"(?<!abs\()\$T{i}\b", f"abs($T{i})", expression)
    return expression


NET_FLOW = regex.compile(r"^\s*(?:net\s+)?cash\s+(?:flows?\s+)?(?:provided|used|generated|"
                         r"from|\(used)\b", regex.I)
"""Row labels that state a net cash flow ("Net cash used in operating activities", "Net
cash provided by (used in) investing activities", "Cash generated from operations"): a
figure written negative is the flow's signed value."""
_USED_WORD = regex.compile(r"\bused\b", regex.I)


def _net_flows_signed(expression: str, found: list[_Found]) -> str:
    """A formula defined over a net cash flow reads it signed: operating cash flow written
    "(98,867)" (Rocket Lab's 2023 net cash used in operating activities) is -98,867, so
    its free cash flow, "operating cash flow - capital expenditure", is -98,867 less the
    capital expenditure (COMPUTE refused to guess). NoAnswer for a row that says only
    "used" and states a figure without a sign: it may be the amount used or a flow signed
    as provided, which the row does not tell."""
    for i, f in enumerate(found, 1):
        if not NET_FLOW.search(f.label) or not regex.search(rf"\$T{i}\b", expression):
            continue
        if _negative(f):
            expression = regex.sub(rf"(?<!abs\()\$T{i}\b", f"(-abs($T{i}))", expression)
        elif _USED_WORD.search(f.label) and not _PROVIDED.search(f.label) \
                and (_amount(f) or 0) > 0:
            raise NoAnswer(f"not answered: the row {f.label!r} states {f.read.value} without a "
                           "sign, so whether it is the cash used or a flow signed as provided "
                           "is not told; nothing is answered rather than a figure of the "
                           "wrong sign", [f"{f.doc.title!r}: row {f.label!r}, {f.read.value}"])
    return expression


def _answer(metric: Metric, found: list[_Found], expression: str | None) -> str:
    """The answer template: the value and unit, what it is, and where each cell is."""
    def where(f: _Found) -> str:
        page = f.read.document.page if f.read.document else None
        period = f", the column for {spoken_scope(f.step.period)}" if f.step.period else ""
        # the row as the table writes it, for a reader to find ("Total sales" where the
        # question and the step say "revenue", the domain library's name for it)
        return (f"row \"{_raw(f.label)}\"{period} of the tables"
                f"{f' on page {page}' if page else ''} in {cited(f.doc.title)} "
                f"({period_and_date(f.doc)})")

    if metric.expression is None:
        when = f" for {spoken_scope(metric.terms[0].when.text)}" if metric.terms[0].when else ""
        if expression is not None and "abs(" in expression:  # an outflow: its amount
            return (f"{{{{ VALUE }}}}: {_raw(metric.name)}{when}, paid out (written "
                    f"{{{{ T1 }}}}, an outflow), from the {where(found[0])}. Confidence: "
                    f"high: one table row and column state it. {NOTE}")
        shown = "VALUE" if expression is not None else "T1"  # restated in the scale asked
        return (f"{{{{ {shown} }}}}: {_raw(metric.name)}{when}, from the {where(found[0])}. "
                f"Confidence: high: one table row and column state it. {NOTE}")
    unit = "%" if metric.percent else _unit_of_percents(metric, found)
    parts = "; ".join(f"{{{{ T{n} }}}} ({_raw(t.item)}"
                      f"{', ' + spoken_scope(t.when.text) if t.when else ''}) from the {where(f)}"
                      for n, (t, f) in enumerate(zip(metric.terms, found), 1))
    # "the change in revenue", but "Apple's free cash flow", "Rocket Lab's working
    # capital", not "the Apple's …"
    whose = _WHOSE.match(metric.name)
    the = "" if whose and all(w[:1].isupper() or w[:1].isdigit() or w == "&"
                              for w in whose["who"].split()) else "the "
    for i, f in enumerate(found, 1):  # a net flow read signed is its item, not "-" it
        if expression and NET_FLOW.search(f.label):
            expression = expression.replace(f"(-abs($T{i}))", f"$T{i}")
    return (f"{{{{ VALUE }}}}{unit}: {the}{_raw(metric.name)}, computed as "
            f"{_raw(_in_words(expression, metric))} from {parts}. {NOTE}")


def _in_words(expression: str | None, metric: Metric) -> str:
    """`expression` as a reader follows it: each cell by its line item (and period, when
    the terms differ in theirs), "round(x, 2)" as "x, rounded to 2 places":
    "operating income / revenue * 100, rounded to 2 places,", not "round(($T1 / $T2 *
    100), 2)"."""
    if expression is None:
        return ""
    periods = {t.when.text if t.when else "" for t in metric.terms}

    def term(m: regex.Match) -> str:
        t = metric.terms[int(m["n"]) - 1]
        return t.item if len(periods) == 1 or not t.when else (
            f"{t.item} ({spoken_scope(t.when.text)})")

    def bare(text: str) -> str:
        text = text.strip()
        return text[1:-1] if _WHOLE_PARENS.fullmatch(text) else text

    text = _CELL_REF.sub(term, expression)
    if rounded := _ROUNDED.fullmatch(text):
        return f"{bare(rounded['x'])}, rounded to {rounded['n']} places,"
    return bare(text)


_CELL_REF = regex.compile(r"(?P<abs>abs\()?\$T(?P<n>\d+)\b(?(abs)\))")
_ROUNDED = regex.compile(r"round\((?P<x>.+),\s*(?P<n>\d+)\)")
_WHOLE_PARENS = regex.compile(r"\((?:[^()]|\((?:[^()])*\))*\)")


def _unit_of_percents(metric: Metric, found: list[_Found]) -> str:
    """The unit of arithmetic over percentages: an average or a total of them is one,
    a change between them is in percentage points; "" for other figures."""
    if not all(f.read.quantity is not None and f.read.quantity.kind == "percent"
               for f in found):
        return ""
    if metric.kind in ("average", "sum"):
        return "%"
    return " percentage points" if metric.kind in CHANGES else ""


def _raw(text: str) -> str:
    """Text from a question or a table, safe inside a template."""
    if any(mark in text for mark in ("{{", "{%", "{#", "}}", "%}", "#}")):
        return f"{{% raw %}}{text}{{% endraw %}}"
    return text

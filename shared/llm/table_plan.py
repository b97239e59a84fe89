"""The heuristic planner's table path: consumes a question read as a `Metric`
(shared/llm/metric.py), the documents it names and the search backend; produces a plan
that reads each cell with an EXTRACT by row and period and, for arithmetic, a COMPUTE
with the unit asked — or NoAnswer naming the nearest rows and documents.

Which document: one the question names whose tables hold the cell (shared/llm/rows.py
chooses the row and column). A filing answers its own period and the earlier periods
its tables show: of the documents holding a cell, official sources come first, then
the one whose own period is the cell's, then the earliest later one (the first report
of a figure rather than a later restatement). Documents that rank alike and state
different figures for the cell are a disagreement, and nothing is answered. Each cell
may come from its own document (a three-year average over two annual reports).
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.errors import NoAnswer
from shared.models import ComputeStep, ExtractStep, Plan
from shared.search import Document, SearchBackend
from shared.search.terms import all_words
from shared.tables.model import Table

from .metric import Metric, Term
from .rows import Choice, Miss, choose_cell, item_words
from .sources import NOTE, PROVISIONAL_RANK, cited, get_step, period_and_date, source_rank

NEAREST = 4


@dataclass(frozen=True)
class _Found:
    doc: Document
    choice: Choice


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
    found = [_find(term, with_tables, tables, columns_for) for term in metric.terms]
    if why := _unclear(metric, found):
        raise NoAnswer(f"not answered: {why}",
                       [f"{f.doc.title!r}: row {f.choice.label!r}, {f.choice.cell.text}"
                        for f in found][:NEAREST])
    return _plan(metric, found, backend)


CHANGES = ("change", "decrease", "percent_change", "difference")


def _unclear(metric: Metric, found: list[_Found]) -> str | None:
    """Why the arithmetic asked for is not clear on these cells, or None.

    A change of figures written negative ("(21,387)" for an expense) may mean the
    change of the amounts or of the signed figures; a percentage change of percentages
    may mean points or a relative change. Either way the answer could be wrong."""
    quantities = [f.choice.cell.quantity for f in found]
    if metric.kind in CHANGES and any(q.amount is not None and q.amount < 0 for q in quantities):
        return ("the figures are written as negatives (in parentheses or with a minus): "
                "whether the change is of the amounts or of the signed figures is unclear")
    if metric.kind == "percent_change" and any(q.kind == "percent" for q in quantities):
        return ("the figures are percentages: a percentage change of them may mean points or "
                "a relative change")
    return None


def _find(term: Term, docs: list[Document], tables: dict[str, list[Table]],
          columns_for) -> _Found:
    """The cell `term` names in the best document holding it."""
    hits, misses = [], []
    for doc in docs:
        item = item_words(term.item) - all_words(doc.title)
        choice = choose_cell(item, term.when, tables[doc.id], columns_for)
        if isinstance(choice, Miss):
            misses.append((doc, choice))
        else:
            hits.append(_Found(doc, choice))
    asked = f"{term.item!r}" + (f" for {term.when.text}" if term.when else "")
    if not hits:
        nearest = [f"{d.title!r} ({period_and_date(d)}): {m.why}"
                   + (f"; nearest rows: {', '.join(m.nearest)}" if m.nearest else "")
                   for d, m in misses[:NEAREST]]
        raise NoAnswer(f"not found: no table row of the documents named states {asked}; "
                       "nothing is answered rather than a figure the tables do not support",
                       nearest)
    hits.sort(key=lambda f: _doc_rank(f.doc, term))
    best = hits[0]
    for other in hits[1:]:
        if _doc_rank(other.doc, term)[:2] != _doc_rank(best.doc, term)[:2]:
            break
        if _value(other.choice) != _value(best.choice):
            raise NoAnswer(
                f"not answered: the documents disagree on {asked}: {best.doc.title!r} states "
                f"{best.choice.cell.text} and {other.doc.title!r} states "
                f"{other.choice.cell.text}",
                [f"{f.doc.title!r} ({period_and_date(f.doc)}): row {f.choice.label!r}, "
                 f"{f.choice.cell.text}" for f in (best, other)])
    return best


def _doc_rank(doc: Document, term: Term) -> tuple:
    """Official first; then the document about the cell's own period; then the earliest
    later one; documents without a period last."""
    period = doc.period_range()
    if term.when is None or period is None:
        relation, distance = (1, 0) if period is not None else (2, 0)
    else:
        first, last = term.when.span
        own = period[0] <= last and first <= period[1]
        relation = 0 if own else 1
        distance = (period[1] - last).days if period[1] >= last else 10**6
    return (source_rank(doc), relation, distance, doc.title, doc.id)


def _value(choice: Choice):
    q = choice.cell.quantity
    return (q.amount, q.scale, q.kind, q.unit) if q else choice.cell.text


def _plan(metric: Metric, found: list[_Found], backend: SearchBackend) -> Plan:
    steps, gets = [], {}
    for f in found:
        if f.doc.id not in gets:
            n = len(gets) + 1
            step, _ = get_step(f.doc, backend, step_id=f"E{len(steps) + 1}", var=f"$DOC{n}")
            gets[f.doc.id] = step
            steps.append(step)
    for n, f in enumerate(found, 1):
        q = f.choice.cell.quantity
        steps.append(ExtractStep(
            id=f"E{len(steps) + 1}", operation="EXTRACT", source=gets[f.doc.id].output_var,
            row=f.choice.label, period=f.choice.period, output_var=f"$T{n}",
            quantity=q.kind if q is not None and q.kind != "date" else None))
    if metric.expression is not None:
        steps.append(ComputeStep(id=f"E{len(steps) + 1}", operation="COMPUTE",
                                 expression=metric.expression, output_var="$VALUE"))
    return Plan(domain="finance", steps=steps, answer=_answer(metric, found),
                planner="heuristic")


def _answer(metric: Metric, found: list[_Found]) -> str:
    """The answer template: the value and unit, what it is, and where each cell is."""
    def where(f: _Found) -> str:
        page = f" on page {f.choice.page}" if f.choice.page else ""
        period = f", column {f.choice.period}" if f.choice.period else ""
        return (f"row \"{_raw(f.choice.label)}\"{period} of the table{page} in "
                f"{cited(f.doc.title)} ({period_and_date(f.doc)})")

    if metric.expression is None:
        f = found[0]
        when = f" for {metric.terms[0].when.text}" if metric.terms[0].when else ""
        return (f"{{{{ T1 }}}}: {_raw(metric.name)}{when}, from the {where(f)}. "
                f"Confidence: high: the row's label holds the words asked about. {NOTE}")
    unit = "%" if metric.percent else ""
    parts = "; ".join(f"{{{{ T{n} }}}} ({_raw(t.item)}"
                      f"{', ' + t.when.text if t.when else ''}) from the {where(f)}"
                      for n, (t, f) in enumerate(zip(metric.terms, found), 1))
    return (f"{{{{ VALUE }}}}{unit}: the {_raw(metric.name)}, computed as "
            f"{_raw(metric.expression)} from {parts}. {NOTE}")


def _raw(text: str) -> str:
    """Text from a question or a table, safe inside a template."""
    if any(mark in text for mark in ("{{", "{%", "{#", "}}", "%}", "#}")):
        return f"{{% raw %}}{text}{{% endraw %}}"
    return text

"""`python -m bench.tables [--tatqa dev.json] [--filings DIR]`: the table reader on real
tables. Consumes TAT-QA's tables and questions (a build file such as dev.json; the
held-out file only when a bench run asks for it) and a folder of PDF filings; prints,
per source, the tables read and where the cells the questions name land.

TAT-QA: every table goes through `table_from_rows`; each question whose answer is one
figure read from the table ("What is the amount of total sales in 2019?" -> "$1,496.5")
and that names one period gives a (row, period, value) triple. The row is the table's
row holding the answer whose label shares most words with the question (the reader's
rows, not the file's); the column is `columns_for(table, period)`. A triple is right
when that column is the one holding the answer, wrong when `columns_for` names one other
column, not found when it names none or several, or the table or row was not read.

Filings: `tables_in_words` on every page of each PDF (pdfplumber's words through
`pdf_lines`), with the time it takes.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

import regex

from shared.search.periods import find_periods
from shared.models.table import Table
from shared.tables.periods import columns_for
from shared.tables.read import pdf_lines, table_from_rows, tables_in_words
from shared.tables.quantities import parse_quantity

_WORD = regex.compile(r"[a-z0-9]+")
_STOP = frozenset("the of in and a an to for what was is were are by from on at as with "
                  "how much many did does during year years fiscal amount value total".split())
_DATE = regex.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?"
                      r"\s+(?:19|20)\d{2}\b", regex.IGNORECASE)


def question_period(question: str) -> str | None:
    """The one period a question names ("in 2019", "as of December 31, 2018"), or None."""
    dates = {m.group() for m in _DATE.finditer(question)}
    if dates:
        return dates.pop() if len(dates) == 1 else None
    years = {m.text for m in find_periods(question)}
    return years.pop() if len(years) == 1 else None


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and not w.isdigit()}


def _amount(text: str) -> Decimal | None:
    q = parse_quantity(text)
    return abs(q.amount) if q is not None and q.amount is not None else None


def locate(table: Table, question: str, answer: str, period: str) -> str:
    """right / wrong / not found (with why) for one triple."""
    want = _amount(answer)
    asked = _words(question)
    holding = [(len(asked & _words(r.label)), i) for i, r in enumerate(table.rows)
               if any(c and c.quantity and c.quantity.amount is not None
                      and abs(c.quantity.amount) == want for c in r.cells)]
    if not holding:
        return "not found: no row holds the answer"
    best = max(holding)[0]
    rows = [i for score, i in holding if score == best]
    if len(rows) > 1 or best == 0:
        return "not found: row not told"
    row = table.rows[rows[0]]
    holds = [j for j, c in enumerate(row.cells) if c and c.quantity and c.quantity.amount
             is not None and abs(c.quantity.amount) == want]
    if all(table.columns[j].period is None for j in holds):
        return "skipped: the answer's column names no period (a change, a row's date)"
    columns = columns_for(table, period)
    if not columns:
        return "not found: no column for the period"
    if len(columns) > 1:
        columns = columns_for(table, period, kind=parse_quantity(answer).kind)
        if len(columns) != 1:
            return "not found: columns ambiguous"
    cell = row.cells[columns[0]]
    if cell and cell.quantity and cell.quantity.amount is not None and abs(
            cell.quantity.amount) == want:
        return "right"
    return "wrong"


def tatqa(path: Path) -> None:
    contexts = json.loads(path.read_text())
    read = 0
    outcomes: Counter[str] = Counter()
    wrong = []
    started = time.perf_counter()
    for context in contexts:
        table = table_from_rows(context["table"]["table"])
        read += table is not None
        for q in context["questions"]:
            answer = q["answer"]
            if q["answer_from"] not in ("table", "table-text") or q["answer_type"] != "span":
                continue
            if len(answer) != 1 or _amount(answer[0]) is None:
                continue
            period = question_period(q["question"])
            if period is None:
                continue
            if table is None:
                outcomes["not found: table not read"] += 1
                continue
            outcome = locate(table, q["question"], answer[0], period)
            outcomes[outcome] += 1
            if outcome == "wrong":
                wrong.append((q["question"], answer[0], period, context["table"]["uid"]))
    took = time.perf_counter() - started
    skipped = sum(n for o, n in outcomes.items() if o.startswith("skipped"))
    total = sum(outcomes.values()) - skipped
    right = outcomes["right"]
    print(f"TAT-QA {path.name}: {read}/{len(contexts)} tables read in {took:.2f} s; "
          f"{total} single-cell questions naming one period: {right} right, "
          f"{outcomes['wrong']} wrong, {total - right - outcomes['wrong']} not found "
          f"({skipped} more skipped)")
    for outcome, n in sorted(outcomes.items()):
        print(f"  {n:4d}  {outcome}")
    for question, answer, period, uid in wrong:
        print(f"  wrong: {question!r} ({period}) -> {answer} [{uid}]")


def filings(folder: Path) -> None:
    import pdfplumber

    for pdf_path in sorted(folder.glob("*.pdf")):
        started = time.perf_counter()
        with pdfplumber.open(pdf_path) as pdf:
            pages = [pdf_lines(p.extract_words()) for p in pdf.pages]
        words_s = time.perf_counter() - started
        started = time.perf_counter()
        tables = [t for number, lines in enumerate(pages, 1)
                  for t in tables_in_words(lines, page=number)]
        read_s = time.perf_counter() - started
        with_periods = sum(1 for t in tables if any(c.period for c in t.columns))
        print(f"{pdf_path.name}: {len(pages)} pages, {len(tables)} tables "
              f"({with_periods} with periods); words {words_s:.1f} s, tables {read_s:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tatqa", type=Path, help="a TAT-QA file (dev.json)")
    parser.add_argument("--filings", type=Path, help="a folder of PDF filings")
    args = parser.parse_args()
    if args.tatqa:
        tatqa(args.tatqa)
    if args.filings:
        filings(args.filings)


if __name__ == "__main__":
    main()

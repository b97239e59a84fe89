"""`python -m bench.cell_sweep [--sets build,held-out] [--forms cell,date,...] [--show N]`:
every figure of the plain TAT-QA tables asked for, and checked against the table itself.

TAT-QA's gold questions ask for a few cells of each table. This asks for all of them
that a question can name plainly: for each table whose header row names its columns by
years (`2019 | 2018`) or by dates (`December 31, 2019`), each row whose label is its own
(not repeated in the table), each of its cells that holds a figure. The question is
written from the row's label and the column's year or date ("What was the cost of
revenue in 2018, according to Cududic's annual report?"), in one of these forms:

- `cell`: "What was the {row} in {year}"; `date`: "… as of {date}" (date headers);
- `phrase`: the same cell in eleven other wordings ("How much was …", "In 2018, what
  was …", "… for fiscal year 2018", "Give me the …", "… in FY2018");
- `change`, `average`, `percent`: the row's change, average and percentage change
  between its two newest years (the answer computed from the two cells);
- `compare`: the same two cells compared, "How much higher was {row} in {newer} than in
  {older}" (or "lower …": the older less the newer, every other row), the answer signed;
- `open`: the change asked of no period, "What was the change in {row}", of a row with
  figures in exactly two years (the table's two, or not found);
- `grew`: the change asked of one year, "How much did the {row} grow in {newer}", of a
  row whose two newest years follow each other (the newer less the older);
- `combined`: the two cells added, "What was the {row} in {newer} and {older} combined";
- `recent`: the newest year's cell, "What was the {row} in the most recent year", of a
  row whose every figure is in a column the header row dates by a year;
- `reported`: each cell, "How much {row} did the company report in {year}";
- `fell`: how much a row fell in one year, "How much did the {row} fall in {newer}", of
  a row whose newer figure of two years that follow each other is the smaller (the
  older less the newer);
- `bare`: `grew` of a total named without its "Total" ("Total revenue": "How much did
  the revenue grow in 2019"), of a table with no other row of that name;
- `ratio`: the newer year's cell over the older's, the item named once, "What was the
  ratio of the {row} in {newer} to {older}", of a row whose older figure is not zero.

The heuristic planner plans each question against a SQLite store of the set's documents
and the real tools run the plan in this process. An answer is right when its amount is
the cell's (or the figure computed from the cells, to 0.01), wrong when it is another,
not found when the planner or a step says so. What the table says is the truth here, so
a wrong answer is a reading of the wrong row or column, a scale or a sign; a ratio row
("… as a % of revenues 14%") that the planner computes from the rows it divides (14.24)
is counted wrong, though it is the same figure unrounded.

`--show N` prints N wrong answers of the build set; the held-out set's answers are
tallied only, never shown (bench/data/tatqa/README.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

import regex

from shared.config import Settings
from shared.errors import ChordalError
from shared.ingest import load_jsonl
from shared.journey.steps import failure_result, tool_result
from shared.planners.heuristic import heuristic_plan
from shared.search import open_backend
from shared.tables.quantities import parse_quantity
from shared.tools.registry import run_tool

DATA = Path(__file__).parent / "data" / "tatqa"
FORMS = ("cell", "date", "phrase", "reported", "change", "compare", "open", "grew",
         "combined", "recent", "average", "percent", "bare", "fell", "ratio")
_YEAR = regex.compile(r"(?:19|20)\d{2}")
_TOTAL = regex.compile(r"(?i)total\s+(?P<rest>\S.*)")
_MARK = regex.compile(r"\s*(?:\(\w\)|\*+)")
"""A footnote mark after a label ("Other assets(1)")."""
_DATE = regex.compile(r"(?i)(?:as\s+(?:of|at)\s+)?(?P<d>[a-z]+\.?\s+\d{1,2},\s+(?:19|20)\d{2}"
                      r"|\d{1,2}\s+[a-z]+\s+(?:19|20)\d{2})")
_PHRASES = ("How much was the {n} in {y}", "What is the value of {n} for {y}",
            "What were the {n} for the year {y}", "What was the amount of {n} in {y}",
            "In {y}, what was the {n}", "What is the {n} for fiscal year {y}",
            "What was the company's {n} in {y}", "Give me the {n} for {y}",
            "Tell me the {n} in {y}", "What was the {n} in FY{y}", "What were the {n} during {y}")


class Asked(NamedTuple):
    doc: str
    question: str
    truth: Decimal
    """The cell's amount, or the figure the form computes from two cells."""


def _columns(rows: list[list[str]], form: str) -> tuple[int, dict[int, str]] | None:
    """The header row and its columns' years (or dates, for `date`) among the first four
    rows: a row naming two or more, each once."""
    for i, row in enumerate(rows[:4]):
        found = {}
        for j, text in enumerate(row[1:], 1):
            text = text.strip()
            if form == "date" and (m := _DATE.fullmatch(text)):
                found[j] = m["d"]
            elif form != "date" and _YEAR.fullmatch(text):
                found[j] = text
        if len(found) >= 2 and len(set(found.values())) == len(found):
            return i, found
    return None


def questions(corpus: Path, form: str) -> Iterator[Asked]:
    """The questions of `form` about the plain tables of `corpus` (the module's rules)."""
    for line in corpus.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        for table in doc.get("tables") or []:
            rows = [[str(c or "") for c in r] for r in table["rows"]]
            header = _columns(rows, form)
            if header is None:
                continue
            at, columns = header
            labels = [r[0].strip() for r in rows[at + 1:] if r and r[0].strip()]
            company = doc["title"].split()[0]
            source = f", according to {company}'s annual report?"
            for row in rows[at + 1:]:
                label = row[0].strip() if row else ""
                if not label or labels.count(label) > 1 or len(label) > 60:
                    continue
                if form == "bare":
                    bare = _TOTAL.fullmatch(label)
                    if bare is None or _MARK.sub("", bare["rest"]).lower() in {
                            _MARK.sub("", x).lower() for x in labels}:
                        continue
                    label = bare["rest"]
                name = label if label[:2].isupper() else label[0].lower() + label[1:]
                figures = {}
                for j, when in columns.items():
                    text = row[j].strip() if j < len(row) else ""
                    q = parse_quantity(text) if text else None
                    if q is not None and q.amount is not None:
                        figures[when] = q.amount
                if form == "recent" and any(
                        j not in columns and (q := parse_quantity(text.strip())) is not None
                        and q.amount is not None for j, text in enumerate(row[1:], 1)):
                    continue  # a figure in a column the header row does not date: newer?
                yield from _asked(doc["id"], form, name, figures, source)


def _asked(doc: str, form: str, name: str, figures: dict[str, Decimal],
           source: str) -> Iterator[Asked]:
    if form in ("cell", "date", "phrase", "reported"):
        for n, (when, amount) in enumerate(figures.items()):
            if form == "cell":
                text = f"What was the {name} in {when}"
            elif form == "reported":
                text = f"How much {name} did the company report in {when}"
            elif form == "date":
                text = f"What was the {name} as of {when}"
            else:
                phrase = _PHRASES[(zlib.crc32(name.encode()) + n) % len(_PHRASES)]
                text = phrase.format(n=name, y=when)
            yield Asked(doc, text + source, amount)
        return
    if len(figures) < 2:
        return
    a, b = sorted(figures)[-2:]
    x, y = figures[a], figures[b]
    if form == "change":
        yield Asked(doc, f"What was the change in {name} between {a} and {b}{source}", y - x)
    elif form == "compare" and zlib.crc32(name.encode()) % 2:
        yield Asked(doc, f"How much lower was the {name} in {a} than in {b}{source}", y - x)
    elif form == "compare":
        yield Asked(doc, f"How much higher was the {name} in {b} than in {a}{source}", y - x)
    elif form == "open" and len(figures) == 2:
        yield Asked(doc, f"What was the change in {name}{source}", y - x)
    elif form in ("grew", "bare") and int(b) == int(a) + 1:
        yield Asked(doc, f"How much did the {name} grow in {b}{source}", y - x)
    elif form == "fell" and int(b) == int(a) + 1 and y < x:
        yield Asked(doc, f"How much did the {name} fall in {b}{source}", x - y)
    elif form == "combined":
        yield Asked(doc, f"What was the {name} in {b} and {a} combined{source}", x + y)
    elif form == "recent":
        yield Asked(doc, f"What was the {name} in the most recent year{source}", y)
    elif form == "average":
        yield Asked(doc, f"What was the average {name} in {a} and {b}{source}", (x + y) / 2)
    elif form == "ratio" and x:
        yield Asked(doc, f"What was the ratio of the {name} in {b} to {a}{source}", y / x)
    elif form == "percent" and x:
        yield Asked(doc, f"What was the percentage change in {name} between {a} and {b}"
                    f"{source}", (y - x) / x * 100)


def answer(question: str, backend) -> Decimal | str:
    """The amount the heuristic plan's last step reads or computes; else why not (a str)."""
    try:
        plan = heuristic_plan(question, backend)
    except ChordalError as e:
        return str(e).splitlines()[-1]
    results = {}
    for step in plan.steps:
        base = dict(action_id=f"q:{step.id}", step_id=step.id, operation=step.operation)
        inputs = {v: results[v] for v in step.references() if v in results}
        try:
            results[step.var] = tool_result(base, run_tool(step, inputs, backend),
                                            time.perf_counter())
        except ChordalError as e:
            results[step.var] = failure_result(base, e, time.perf_counter())
    last = results[plan.steps[-1].var]
    if last.status != "ok":
        return last.error_message or "no figure"
    # a ratio of a count to an amount is a plain number: its value is the figure
    quantity = last.quantity or parse_quantity(last.value or "")
    if quantity is None or quantity.amount is None:
        return "no figure"
    return quantity.amount


def judge(form: str, got: Decimal | str, truth: Decimal) -> str:
    if isinstance(got, str):
        return "not found"
    if form in ("cell", "date", "phrase", "reported", "recent"):  # as written or an outflow
        return "right" if abs(got) == abs(truth) else "wrong"
    return "right" if abs(got - truth) <= max(Decimal("0.006"), abs(truth) / 10000) else "wrong"


def sweep(name: str, forms: list[str], show: int) -> dict[str, Counter]:
    corpus = DATA / name / "corpus.jsonl"
    out: dict[str, Counter] = {}
    with tempfile.TemporaryDirectory() as home:
        backend = open_backend(Settings(search_db=Path(home) / "search.db"))
        try:
            backend.add(load_jsonl(corpus))
            for form in forms:
                tally: Counter = Counter()
                for asked in questions(corpus, form):
                    got = answer(asked.question, backend)
                    verdict = judge(form, got, asked.truth)
                    tally[verdict] += 1
                    if verdict == "wrong" and name == "build" and show > 0:
                        show -= 1
                        print(f"  wrong: {asked.question} -> {got} (the table: {asked.truth})")
                out[form] = tally
        finally:
            backend.close()
    return out


def sweeps(names: tuple[str, ...] = ("build", "held-out")) -> dict[str, dict[str, dict]]:
    """Every form of every set, as `make bench` records them: set -> form -> tally."""
    return {name: {form: dict(t) for form, t in sweep(name, list(FORMS), 0).items()}
            for name in names}


def line(name: str, form: str, tally: dict) -> str:
    total = sum(tally.values())
    if not total:
        return f"{name:8} {form:8} no questions"
    right, wrong = tally.get("right", 0), tally.get("wrong", 0)
    return (f"{name:8} {form:8} right {right:5}  wrong {wrong:3}  not found "
            f"{tally.get('not found', 0):4}  of {total}  ({right / total:.1%} right, "
            f"{wrong / total:.2%} wrong)")


def table(results: dict[str, dict[str, dict]]) -> list[str]:
    """The markdown table of `sweeps` for bench/results/results.md."""
    out = ["### Every plain cell of the TAT-QA tables (bench/cell_sweep.py)", "",
           "| set | form | right | wrong | not found | of |", "|---|---|---|---|---|---|"]
    for name, forms in results.items():
        for form, t in forms.items():
            out.append(f"| {name} | {form} | {t.get('right', 0)} | {t.get('wrong', 0)} | "
                       f"{t.get('not found', 0)} | {sum(t.values())} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cell_sweep",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="build,held-out", help="build, held-out or both")
    parser.add_argument("--forms", default=",".join(FORMS), help=", ".join(FORMS))
    parser.add_argument("--show", type=int, default=0, help="wrong answers to print (build)")
    args = parser.parse_args()
    forms = [f for f in args.forms.split(",") if f]
    if unknown := set(forms) - set(FORMS):
        parser.error(f"--forms: unknown {', '.join(sorted(unknown))}; use {', '.join(FORMS)}")
    for name in [s for s in args.sets.split(",") if s]:
        if not (DATA / name / "corpus.jsonl").exists():
            parser.error(f"--sets: no set {name!r}; use build, held-out")
        for form, tally in sweep(name, forms, args.show).items():
            print(line(name, form, tally))


if __name__ == "__main__":
    main()

"""Judging answers against known ones: consumes accuracy cases (a JSONL file of questions,
optional plans, and the value and document expected — or that the system must abstain)
and the RunRecords the system produced for them; produces one Verdict per case —
`correct`, `wrong` or `abstained` — and the score table the benchmark reports.

A case line:
    {"id": "P01", "kind": "plan", "question": "…", "plan": {…},
     "expect": {"var": "M", "value": "11.2", "doc": "hm-ar-2024"}}
    {"id": "Q07", "kind": "question", "question": "…", "expect": {"abstain": true, "reason": "…"}}

The value checked is the plan's `expect.var` (a question case: the heuristic plan's
EXTRACT). It counts as obtained when its step ended `ok` with a value from a document
(not a fallback); it is right when it states the same figure as `expect.value` (the
number, its scale and whether it is a percentage; units and currency words around it
may differ: "0.61 million" is "0.61 million TEU"; `expect.accept` may list other
spellings of it, such as "$23.35 billion" for "23.35") and came from `expect.doc`. A case that
must abstain is right when no value was obtained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

import regex

from shared.errors import InputError
from shared.models import Plan, Query, RunRecord
from shared.tools.entities import read_date

Outcome = Literal["correct", "wrong", "abstained"]

_FIGURE = regex.compile(
    r"(?<![\d.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?"
    r"(?P<scale>thousand|million|billion|trillion|bn|mn|亿|万)?\s?(?P<pct>%|per\s?cent|percent)?",
    regex.I)
_SCALES = {"thousand": 3, "million": 6, "mn": 6, "billion": 9, "bn": 9, "trillion": 12,
           "亿": 8, "万": 4}


@dataclass(frozen=True)
class Case:
    id: str
    kind: Literal["plan", "question"]
    question: str
    expect: dict
    plan: dict | None = None

    @property
    def abstain(self) -> bool:
        return bool(self.expect.get("abstain"))

    def query(self, deadline_s: float = 120.0) -> Query:
        plan = Plan.model_validate(self.plan) if self.plan else None
        return Query(question=self.question, plan=plan, deadline_s=deadline_s)


@dataclass(frozen=True)
class Verdict:
    case: Case
    outcome: Outcome
    got: str | None
    """The value obtained, if any."""
    doc: str | None
    """The id of the document it came from."""
    detail: str
    """Why: the mismatch, or what the system said instead of a value."""


def load_cases(path: str | Path) -> list[Case]:
    """Every case in the JSONL file at `path`; InputError naming the line of a bad one."""
    cases = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            case = Case(id=raw["id"], kind=raw["kind"], question=raw["question"],
                        expect=raw["expect"], plan=raw.get("plan"))
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"{path} line {number}: not a case ({e}); give id, kind, "
                             "question, expect and, for a plan case, plan") from None
        if case.kind not in ("plan", "question") or (case.kind == "plan") != bool(case.plan):
            raise InputError(f"{path} line {number}: kind must be 'plan' (with a plan) or "
                             "'question' (without one)")
        cases.append(case)
    return cases


def figure(text: str) -> tuple[Decimal, bool] | None:
    """The first figure `text` states, as (value with its scale applied, is a percentage)."""
    m = _FIGURE.search(text or "")
    if m is None:
        return None
    value = Decimal(m["num"].replace(",", ""))
    if m["scale"]:
        value = value.scaleb(_SCALES[m["scale"].lower()])
    return value.normalize(), bool(m["pct"])


def same_value(got: str, expected: str) -> bool:
    """Whether `got` states the figure (or date) `expected` states."""
    if (day := read_date(expected)) is not None:
        return read_date(got) == day
    a, b = figure(got), figure(expected)
    if a is None or b is None:
        if len(got.split()) >= 4:  # a sentence answer: it must say the expected words
            return bool(regex.search(rf"(?<!\w){regex.escape(expected.strip())}(?!\w)", got,
                                     regex.I))
        return got.strip().casefold() == expected.strip().casefold()
    return a == b and (len(got) < 80 or expected in got)  # a sentence must hold the value


def obtained(case: Case, record: RunRecord | None) -> tuple[str | None, str | None, str]:
    """(value, document id, what happened) for the value `case` checks."""
    if record is None:
        return None, None, "no record"
    if record.plan is None:
        reason = record.error or (record.answer.missing[0] if record.answer and
                                  record.answer.missing else record.status)
        return None, None, f"no plan: {reason}"
    var = case.expect.get("var") or next(
        (s.var for s in reversed(record.plan.steps) if s.operation == "EXTRACT"),
        record.plan.steps[-1].var)
    step_id = record.plan.producers().get(var)
    result = next((s for s in record.steps if s.step_id == step_id), None)
    if result is None:
        return None, None, f"${var} has no result ({record.status}: {record.error or ''})"
    if result.status != "ok":
        root = next((s for s in record.steps if s.status != "ok"), result)
        return None, None, f"{root.step_id} {root.error_code}: {root.error_message}"
    if result.confidence == "fallback" or result.value in (None, ""):
        return None, None, f"${var} fell back to {result.value!r}"
    doc = result.document.doc_id if result.document else None
    return str(result.value), doc, "ok"


def judge(case: Case, record: RunRecord | None) -> Verdict:
    """The verdict on what `record` says for `case`."""
    got, doc, what = obtained(case, record)
    if case.abstain:
        if got is None:
            return Verdict(case, "correct", None, None, f"abstained: {what}")
        return Verdict(case, "wrong", got, doc, f"answered {got!r} from {doc}; expected to "
                                                f"abstain ({case.expect.get('reason', '')})")
    if got is None:
        return Verdict(case, "abstained", None, None, what)
    expected, expected_doc = str(case.expect["value"]), case.expect.get("doc")
    if not any(same_value(got, e) for e in [expected, *case.expect.get("accept", [])]):
        return Verdict(case, "wrong", got, doc, f"{got!r} from {doc}; expected {expected!r} "
                                                f"from {expected_doc}")
    if expected_doc and doc != expected_doc:
        return Verdict(case, "wrong", got, doc, f"the right figure from the wrong document: "
                                                f"{doc}, expected {expected_doc}")
    return Verdict(case, "correct", got, doc, "ok")


def score(verdicts: list[Verdict]) -> dict[str, dict[str, int]]:
    """Per kind (`plan`, `question`): cases; answerable cases right, wrong, abstained;
    must-abstain cases abstained, wrong."""
    table: dict[str, dict[str, int]] = {}
    for v in verdicts:
        row = table.setdefault(v.case.kind, {
            "cases": 0, "answered_right": 0, "answered_wrong": 0, "missed": 0,
            "abstain_cases": 0, "abstained_right": 0, "abstain_wrong": 0})
        row["cases"] += 1
        if v.case.abstain:
            row["abstain_cases"] += 1
            row["abstained_right" if v.outcome == "correct" else "abstain_wrong"] += 1
        else:
            row[{"correct": "answered_right", "wrong": "answered_wrong",
                 "abstained": "missed"}[v.outcome]] += 1
    return table

"""Judging Chordal's answers against gold ones (TAT-QA's, and the figures read off real
filings): consumes a case (its set, gold answer and scale) and the RunRecord the system
produced, produces a `Verdict` — `right`, `wrong` or `not found` — with why.

The rule:
- The answer is the value of the plan's last step (the COMPUTE, or the one EXTRACT),
  obtained when that step ended `ok` and the answer is complete; an abstention, a
  failed step or an incomplete answer is `not found`.
- The gold figure: a number (arithmetic), or the figure a span states (`$1,496.5`,
  `(0.4)` is -0.4, `$(9.8) million`, `18.3%`).
- Scale: the gold's (`thousand`, `million`, `billion`; a scale word in its text wins) and
  Chordal's (its value's quantity: the table's "in thousands", converted by COMPUTE).
  When both state one the figures are compared in the gold's scale (9,819 thousand is
  9.8 million); when either states none they are compared as written (TAT-QA's scale is
  often its paragraph's, which the table does not state), and the verdict says so.
- A percentage (gold scale `percent`, or `%` in its text) must be answered as one: a
  percent quantity, or the answer printing `%` (or "percentage points", for a change
  between percentages) right after the value; 12.5 is 12.5%.
- Rounding: Chordal's figure, rounded half up to the gold's decimal places, is the gold's.
- Sign: it must match ((0.4) is not 0.4).
- A question whose answer is words (the non-figure set): right only when the answer
  holds every gold span and states no figure; answered with a figure is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import regex

from shared.models import RunRecord, StepResult
from shared.tables.quantities import SCALES, parse_quantity

GOLD_SCALES = {"": None, "thousand": 3, "million": 6, "billion": 9, "percent": None}
_SCALE_WORD = regex.compile(r"\b(thousand|million|billion|trillion)s?\b", regex.I)


@dataclass(frozen=True)
class Verdict:
    id: str
    set: str
    outcome: str
    """`right`, `wrong` or `not found`."""
    got: str | None
    detail: str


def judge(case: dict, record: RunRecord | None) -> Verdict:
    """The verdict on what `record` answered for `case`."""
    gold = case["gold"]
    result, why = answered(record)
    if result is None:
        return Verdict(case["id"], case["set"], "not found", None, why)
    value = str(result.value)
    if case["set"].startswith("non-figure"):
        spans = gold["answer"] if isinstance(gold["answer"], list) else [gold["answer"]]
        if figure(value) is not None or result.quantity is not None:
            return Verdict(case["id"], case["set"], "wrong", value,
                           "answered a question whose answer is words with a figure")
        held = all(_normal(s) in _normal(record.answer.text) for s in spans)
        return Verdict(case["id"], case["set"], "right" if held else "wrong", value,
                       "the answer holds the gold words" if held else
                       f"the answer does not hold {spans!r}")
    ok, detail = same_figure(gold, result, record)
    return Verdict(case["id"], case["set"], "right" if ok else "wrong", value, detail)


def answered(record: RunRecord | None) -> tuple[StepResult | None, str]:
    """The last step's result when the record is a complete answer; else why not."""
    if record is None:
        return None, "no record"
    if record.status != "done":
        return None, f"failed: {record.error}"
    if record.plan is None or record.answer is None or not record.answer.complete:
        missing = record.answer.missing if record.answer else []
        return None, (missing[0] if missing else record.error or "no answer")
    last = record.plan.steps[-1]
    result = next((s for s in record.steps if s.step_id == last.id), None)
    if result is None or result.status != "ok" or result.confidence == "fallback":
        return None, f"{last.id}: {result.error_code if result else 'no result'}"
    return result, "ok"


_BRACKETED = regex.compile(r"^([$€£]?)\s*\(\s*([$€£]?)\s*([\d.,]+)\s*\)\s*"
                          r"(thousand|million|billion)?$", regex.I)


def figure(text: str):
    """The figure `text` states, as a Quantity (accountants' `$(9.8) million` too)."""
    text = str(text).replace("−", "-").strip()
    if m := _BRACKETED.match(text):
        text = f"({m[1] or m[2]}{m[3]}{' ' + m[4] if m[4] else ''})"
    return parse_quantity(text)


def same_figure(gold: dict, result: StepResult, record: RunRecord) -> tuple[bool, str]:
    """Whether `result` states the gold figure, by the rule above, and how it compared."""
    answer = gold["answer"][0] if isinstance(gold["answer"], list) else gold["answer"]
    text = str(answer)
    wanted = figure(text) if isinstance(answer, str) else None
    amount = wanted.amount if wanted is not None else _decimal(text)
    if amount is None:
        return False, f"the gold {text!r} states no figure"
    gold_percent = gold.get("scale") == "percent" or "%" in text
    gold_scale = (SCALES[m.group(1).lower()] if (m := _SCALE_WORD.search(text))
                  else GOLD_SCALES.get(gold.get("scale", ""), None))
    got = result.quantity or figure(str(result.value))
    got_amount = got.amount if got is not None and got.amount is not None else _decimal(
        str(result.value))
    if got_amount is None:
        return False, f"the answer {result.value!r} states no figure"
    got_percent = (got is not None and got.kind == "percent") or _prints_percent(record)
    if gold_percent != got_percent:
        return False, ("the gold is a percentage and the answer is not" if gold_percent
                       else "the answer is a percentage and the gold is not")
    got_scale = got.scale if got is not None and got.kind != "percent" and got.scale else None
    note = ""
    if gold_scale is not None and got_scale is not None:
        got_amount = got_amount.scaleb(got_scale - gold_scale)
    elif gold_scale != got_scale:
        note = " (compared as written: one side states no scale)"
    places = _places(text)
    rounded = got_amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if rounded != amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):
        return False, f"{result.value} is {rounded}, the gold {text} is {amount}{note}"
    return True, f"{result.value} rounds to the gold {text}{note}"


def _prints_percent(record: RunRecord) -> bool:
    """Whether the answer template prints `%` right after the last step's value."""
    var = record.plan.steps[-1].var
    return bool(regex.search(r"\{\{\s*" + regex.escape(var) + r"\s*\}\}\s*(?:%|percent"
                             r"(?:age points)?\b)", record.plan.answer or ""))


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(str(text).replace(",", "").strip())
    except InvalidOperation:
        return None


def _places(text: str) -> int:
    """Decimal places the gold is written with (`-22.22` -> 2, `1,496.5` -> 1)."""
    m = regex.search(r"\.(\d+)", text)
    return len(m.group(1)) if m else 0


def _normal(text: str) -> str:
    return " ".join(regex.sub(r"[^\w%$.]+", " ", str(text).lower()).split()).strip(" .")

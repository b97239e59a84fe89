"""The citation check: consumes a rendered Answer and its plan, produces the numbers of
the answer text that came from step values but carry no `[n]` footnote marker.

A number needs no marker when the plan itself states it (the answer template, a
pattern, an expression, a fallback, a temporal scope, a source title), when it belongs
to a cited document's title or date, to a gap sentence, to the period of a GET/SEARCH
step, or to the question. Every other number came from a value and must be cited.
A value equal to a number the plan states cannot be told apart from it and passes.
"""

from __future__ import annotations

from shared.models import Answer, Plan
from shared.search.periods import year_in

from .cited import MARKER, NUMBER
from .period import describe, step_period


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, (list, tuple)) else []


def _stated(plan: Plan, answer: Answer, question: str) -> set[str]:
    """Every number the plan, the question, the gaps and the cited documents state."""
    texts = [plan.answer or "", question, *answer.missing]
    for step in plan.steps:
        texts += [t for v in step.model_dump().values() for t in _strings(v)]
        if step.operation in ("GET", "SEARCH") and (found := step_period(step, None)):
            texts.append(describe([found]))
    for f in answer.footnotes:
        texts += [f.evidence.title, f.evidence.date or "", f.evidence.period or ""]
        if found := year_in(f.evidence.title):
            texts.append(describe([found]))
    return {n for t in texts for n in NUMBER.findall(t)}


def uncited_numbers(answer: Answer, plan: Plan, question: str = "") -> list[str]:
    """Numbers in `answer.text` that came from values yet carry no `[n]` marker."""
    stated = _stated(plan, answer, question)
    text = answer.text
    return [m.group() for m in NUMBER.finditer(text)
            if not MARKER.match(text, m.end()) and m.group() not in stated]

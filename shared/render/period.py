"""Periods and tense: consumes a plan, its step results and today's date, produces the
period a value speaks for ("Q3 2023") and the verb a sentence about it takes.

A value's period comes from the GET/SEARCH steps its chain starts at: their
`temporal_scope`, else a year or quarter named in their source (or query), else the
period of the document they fetched (given in the corpus or read from its title). The tense is "was" when the whole
period lies before today, "will be" when it starts after today, and "is" otherwise —
also when no period is known.
"""

from __future__ import annotations

import re
from datetime import date

from shared.errors import InputError
from shared.models import Plan, StepResult
from shared.search.dates import DateRange, format_scope, parse_scope, spoken_scope
from shared.search.periods import year_in

from .chain import fetching

PAST, PRESENT, FUTURE = "was", "is", "will be"


def step_period(step, result: StepResult | None) -> DateRange | None:
    """The period one GET or SEARCH step fetched for; None when it names none."""
    scope = getattr(step, "temporal_scope", None)
    if scope:
        try:
            return parse_scope(scope)
        except InputError:
            pass
    named = year_in(getattr(step, "source", None) or getattr(step, "query", "") or "")
    if named is None and result is not None and result.document is not None:
        doc = result.document
        if doc.period:
            try:
                return parse_scope(doc.period)
            except InputError:
                pass
        named = year_in(doc.title)
    return named


def periods(plan: Plan, results: dict[str, StepResult]) -> dict[str, list[DateRange]]:
    """Step id -> the distinct periods of the GET/SEARCH steps its value rests on."""
    steps = {s.id: s for s in plan.steps}
    own = {sid: step_period(s, results.get(sid)) for sid, s in steps.items()
           if s.operation in ("GET", "SEARCH")}
    out: dict[str, list[DateRange]] = {}
    for s in plan.steps:
        found = [own[sid] for sid in fetching(plan, results, s.id) if own.get(sid)]
        out[s.id] = sorted(set(found))
    return out


def tense(ranges: list[DateRange], today: date) -> str:
    """"was", "is" or "will be" for a value about `ranges` said on `today`."""
    if not ranges:
        return PRESENT
    if max(end for _, end in ranges) < today:
        return PAST
    if min(start for start, _ in ranges) > today:
        return FUTURE
    return PRESENT


def describe(ranges: list[DateRange]) -> str:
    """The periods as a reader says them: "Q3 2023", "Q2 2023 and Q3 2023", "" if none."""
    return " and ".join(_spoken(format_scope(r)) for r in ranges)


def _spoken(scope: str) -> str:
    """A quarter, half or month as `spoken_scope` says it ("Q3 2023", "June 2019"); a day
    or span as written, its ".." read " to "."""
    if re.fullmatch(r"\d{4}-(?:[QH][1-4]|\d{2})", scope):
        return spoken_scope(scope)
    return scope.replace("..", " to ")

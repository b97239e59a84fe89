"""Quarters a question names without their own year, for the metric reader: consumes the
question's text and the spans the period finder found in it, produces each such quarter
with the year it takes, and the text of a year that only says which year they are of.

- "between the third and fourth quarter", no year anywhere: quarters of no year (EXTRACT
  reads them as the newest year's);
- "In 2019, … between the third quarter and fourth quarter", "… in the fiscal year 2019"
  with the year named once and no other period: the quarters of that year (fiscal when
  the year is), and the year's own words ("In 2019,") are no period of their own;
- "between the second and first quarter in the fiscal year 2019": a quarter ordinal joined
  to a quarter the finder read with its year is of that year.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from shared.search.dates import DateRange, parse_scope
from shared.search.periods import part_of
from shared.tables.periods import QUARTER_ORDINALS

_ORDINAL = "|".join(QUARTER_ORDINALS)
_NO_YEAR_QUARTERS = regex.compile(
    rf"\b(?P<a>(?P<oa>{_ORDINAL})(?:\s+quarter)?)"
    rf"(?:\s*(?:,|and|&|to|through|-)\s*(?:the\s+)?(?P<b>{_ORDINAL}))?"
    r"\s+quarters?\b", regex.I)
_JOINED_BEFORE = regex.compile(rf"\b(?P<a>(?P<o>{_ORDINAL})(?:\s+quarter)?)\s*(?:and|&|to|through|-)\s*"
                               r"(?:the\s+)?$", regex.I)
"""A quarter ordinal joined to the quarter after it ("the second and " first quarter …)."""
_YEAR_WORDS = regex.compile(r"(?:,\s*)?(?:\b(?:in|for|during|of)\s+(?:the\s+)?"
                            r"(?:fiscal\s+(?:year\s+)?|year\s+)?)?$", regex.I)
"""What says "in this year" before a year that only places the question's quarters."""


@dataclass(frozen=True)
class Quarter:
    start: int
    end: int
    quarter: int
    year: int | None
    """None: a quarter of no year."""
    fiscal: bool = False


def quarters_named(text: str, spans: list[tuple[int, int, DateRange, bool]]
                   ) -> tuple[list[Quarter], list[tuple[int, int]]]:
    """The quarters `text` names without a year of their own, given the periods found in
    it (`spans`: start, end, period, named as fiscal), and the text ranges of a year that
    only places them (to drop)."""
    taken = [(a, b) for a, b, _, _ in spans]
    bare = [q for q in _bare(text) if not any(q.start < y and x < q.end for x, y in taken)]
    if not spans:
        return bare, []
    joined = []
    for a, _, period, fiscal in spans:
        part = part_of(period)
        if part and part[0] == "quarter" and (m := _JOINED_BEFORE.search(text[:a])):
            joined.append(Quarter(m.start("a"), m.end("a"), QUARTER_ORDINALS[m["o"].lower()],
                                  period[0].year, fiscal))
    if joined:
        return joined, []
    if len(spans) != 1 or not bare or (part_of(spans[0][2]) or ("", 0))[0] != "year":
        return [], []
    a, b, period, fiscal = spans[0]
    lead = _YEAR_WORDS.search(text[:a])
    end = b + len(regex.match(r"\s*,?", text[b:]).group())
    return ([Quarter(q.start, q.end, q.quarter, period[0].year, fiscal) for q in bare],
            [(lead.start() if lead else a, end)])


def quarter_span(quarter: int, year: int | None) -> DateRange:
    """The calendar span of `quarter` in `year` (year 1 for a quarter of no year, which
    only orders it among the question's quarters)."""
    return parse_scope(f"{year or 1:04d}-Q{quarter}")


def _bare(text: str) -> list[Quarter]:
    found = []
    for m in _NO_YEAR_QUARTERS.finditer(text):
        if m["b"]:
            found += [Quarter(m.start("a"), m.end("a"), QUARTER_ORDINALS[m["oa"].lower()], None),
                      Quarter(m.start("b"), m.end(), QUARTER_ORDINALS[m["b"].lower()], None)]
        else:
            found.append(Quarter(m.start(), m.end(), QUARTER_ORDINALS[m["oa"].lower()], None))
    return found

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
from datetime import date, timedelta

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


_OWN_QUARTER = regex.compile(
    rf"\b(?P<o>{_ORDINAL})\s+quarter\s+of\s+fiscal\s+(?:year\s+)?(?P<y>(?:19|20)\d{{2}})\b"
    r"|\bQ(?P<q>[1-4])\s+(?:FY\s?)?(?P<y>(?:19|20)\d{2})\s+Form\s+10-Q\b", regex.I)
"""How a quarterly filing names a fiscal quarter: "the first quarter of fiscal year 2024"
(Microsoft, NVIDIA), "Q1 2023 Form 10-Q" (Apple's page footers)."""
MIN_MENTIONS = 3


def filing_quarter(content: str, period: DateRange | None) -> tuple[int, int] | None:
    """The fiscal quarter (quarter, fiscal year) a quarterly filing is about: of the
    fiscal quarters its text names that can end on its period's last day (a fiscal year
    is named by the calendar year it ends in: Q1 of fiscal 2024 ending September 30,
    2023 ends its year in 2024), the one it names most, when that is most of them and at
    least MIN_MENTIONS times (Apple's 10-Q for the quarter ended December 31, 2022 calls
    itself "Q1 2023 Form 10-Q" on every page; Microsoft's for September 30, 2022 names
    "the first quarter of fiscal year 2022" too, a year earlier). None for a document
    whose period is not a quarter (a 10-K's "fourth quarter of fiscal 2023" is one of its
    parts), or that says too little."""
    if period is None or not 80 <= (period[1] - period[0]).days <= 100:
        return None
    counts: dict[tuple[int, int], int] = {}
    for m in _OWN_QUARTER.finditer(content):
        quarter = int(m["q"]) if m["q"] else QUARTER_ORDINALS[m["o"].lower()]
        if _ends_year(period[1] + timedelta(days=91 * (4 - quarter)), int(m["y"])):
            counts[quarter, int(m["y"])] = counts.get((quarter, int(m["y"])), 0) + 1
    if not counts:
        return None
    best, n = max(counts.items(), key=lambda kv: kv[1])
    return best if n >= MIN_MENTIONS and 2 * n > sum(counts.values()) else None


def _ends_year(end: date, year: int) -> bool:
    """Whether a fiscal year ending about `end` is fiscal `year` (a week's slack either
    way: 52- and 53-week years end on a weekday near a month's end)."""
    return year in {end.year, (end - timedelta(days=7)).year, (end + timedelta(days=7)).year}

"""Date scopes: consumes the text of a `temporal_scope` or a document's `period`
(`2023-Q3`, `FY2023`, `2023-07-01..2023-09-30`), produces an inclusive `(first, last)`
pair of `datetime.date`, and back. Periods named in free text (titles, sources,
questions) are read by `shared.search.periods`.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from shared.errors import InputError

ACCEPTED_FORMS = "2023, FY2023, 2023-Q3, 2023-H1, 2023-07, 2023-07-01, 2023-07-01..2023-09-30"
"""The scope forms `parse_scope` accepts, as error messages list them."""

DateRange = tuple[date, date]

def year_range(year: int) -> DateRange:
    return date(year, 1, 1), date(year, 12, 31)


def quarter_range(year: int, quarter: int) -> DateRange:
    first = 3 * quarter - 2
    return date(year, first, 1), _month_end(year, first + 2)


def half_range(year: int, half: int) -> DateRange:
    return (date(year, 1, 1), date(year, 6, 30)) if half == 1 else (date(year, 7, 1), date(year, 12, 31))


def month_range(year: int, month: int) -> DateRange:
    return date(year, month, 1), _month_end(year, month)


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _parse_one(text: str) -> DateRange | None:
    try:
        return _parse_form(text)
    except ValueError:  # year 0000, 2023-02-30: well-formed text naming no real date
        return None


def _parse_form(text: str) -> DateRange | None:
    if m := re.fullmatch(r"(?:FY\s?)?(\d{4})", text, re.I):
        return year_range(int(m[1]))
    if m := re.fullmatch(r"(\d{4})-Q([1-4])", text, re.I):
        return quarter_range(int(m[1]), int(m[2]))
    if m := re.fullmatch(r"(\d{4})-H([12])", text, re.I):
        return half_range(int(m[1]), int(m[2]))
    if m := re.fullmatch(r"(\d{4})-(\d{2})", text):
        return date(int(m[1]), int(m[2]), 1), _month_end(int(m[1]), int(m[2]))
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        day = date.fromisoformat(text)
        return day, day
    return None


def parse_scope(scope: str) -> DateRange:
    """The inclusive date range a temporal scope names; InputError when it names none."""
    text = scope.strip() if isinstance(scope, str) else ""
    if ".." in text:
        left, _, right = text.partition("..")
        start, end = _parse_one(left.strip()), _parse_one(right.strip())
        if start and end and start[0] <= end[1]:
            return start[0], end[1]
        if start and end:
            raise InputError(f"date scope {scope!r} ends before it starts; write the earlier date first")
    elif found := _parse_one(text):
        return found
    raise InputError(f"date scope {scope!r} is not a date scope; use one of: {ACCEPTED_FORMS}")


def spoken_scope(scope: str) -> str:
    """A scope as a reader says it: `2023-Q1` is "Q1 2023", `2019-H2` "H2 2019",
    `2019-06` "June 2019", `2019-12-31` "December 31, 2019", and a span of three, six,
    nine or twelve months (to within a week: 13 weeks) "the three months ended April 1,
    2023" or "the year ended September 28, 2019", any other span "January 5, 2019 to
    March 3, 2019". A year, a fiscal period or anything else stays as written."""
    text = scope.strip() if isinstance(scope, str) else ""
    if not _SPOKEN.fullmatch(text):
        return scope
    try:
        start, end = parse_scope(text)
    except InputError:
        return scope
    if m := re.fullmatch(r"(\d{4})-([QH][1-4])", text):
        return f"{m[2]} {m[1]}"
    if start == end:
        return _day_words(end)
    if re.fullmatch(r"\d{4}-\d{2}", text):
        return f"{calendar.month_name[end.month]} {end.year}"
    days = (end - start).days + 1
    for n, words in ((3, "three months"), (6, "six months"), (9, "nine months"),
                     (12, "year")):
        if abs(days - n * 30.44) <= 7:
            return f"the {words} ended {_day_words(end)}"
    return f"{_day_words(start)} to {_day_words(end)}"


_SPOKEN = re.compile(r"\d{4}-(?:Q[1-4]|H[12]|\d{2}(?:-\d{2})?)"
                     r"|\d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}")


def _day_words(day: date) -> str:
    return f"{calendar.month_name[day.month]} {day.day}, {day.year}"


def format_scope(scope: DateRange) -> str:
    """The shortest scope text that `parse_scope` turns back into `scope`."""
    start, end = scope
    if start == end:
        return start.isoformat()
    if start.year == end.year:
        y = start.year
        if scope == year_range(y):
            return str(y)
        for h in (1, 2):
            if scope == half_range(y, h):
                return f"{y}-H{h}"
        for q in (1, 2, 3, 4):
            if scope == quarter_range(y, q):
                return f"{y}-Q{q}"
        if start.month == end.month and start.day == 1 and end == _month_end(y, end.month):
            return f"{y}-{start.month:02d}"
    return f"{start.isoformat()}..{end.isoformat()}"

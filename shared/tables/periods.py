"""Periods of table columns: consumes a column's header text ("Three Months Ended
September 30, 2019", "Years ended September 30 2019", "December 31, 2018", "Fiscal
2019", "Q3 2019") and a period a caller asks for ("FY2018", "2018", "fiscal 2018",
"FY18", "2019-Q3", "Q3 2019", "Q3 FY2019", "December 31, 2018", "2018-12-31",
"2018-10-01..2019-09-30"), produces the column's period as a scope
(shared/search/dates.py: `2019`, `2019-Q3`, `2018-10-01..2019-09-30`, `2018-12-31`) and
the columns of a table a requested period names.

A fiscal year is named by the year it ends in: "Years ended September 30" over "2019"
is 2018-10-01..2019-09-30, which "FY2019", "fiscal 2019", "FY19" and "2019" name; a
year that ends in the first week of January (a 52/53-week year) is named by the year
before. A balance-sheet date names a year only in a table whose dates are year ends (the
same day of the year in different years). A quarter written as a scope ("2019-Q3") or
with a calendar year ("Q3 2019") is the calendar quarter; one marked fiscal ("Q3 FY2019",
"FY2019-Q3") is the quarter of the fiscal year, read from the table's own year or
year-to-date columns, and names nothing in a table that does not show when its year
starts. A header naming two periods ("2019 vs. 2018", "Change 2019-2018") names none.
"""

from __future__ import annotations

from datetime import date, timedelta

import regex

from shared.errors import InputError
from shared.search.dates import DateRange, format_scope, parse_scope
from shared.search.periods import find_periods

from .model import Table

_F = regex.IGNORECASE | regex.VERSION1
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DATE = regex.compile(
    rf"(?<!\d)(?<y>(?:19|20)\d{{2}})-(?<mo>\d{{2}})-(?<d>\d{{2}})(?!\d)"
    rf"|\b(?<mn>{_MONTH})\.?\s+(?<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?<y>(?:19|20)\d{{2}})(?!\d)"
    rf"|(?<!\d)(?<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?<mn>{_MONTH})\.?,?\s+(?<y>(?:19|20)\d{{2}})(?!\d)",
    _F)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_PLURAL = regex.compile(r"\b(year|month|week)s\b", _F)
_WEEKS = regex.compile(r"\b(?:52|53|fifty[\s-]two|fifty[\s-]three)[\s-]+weeks?\s+(?:ended|ending)\b",
                       _F)
_COMPARE = regex.compile(r"\b(?:vs\.?|versus|change|compared|increase|decrease|variance)\b", _F)
_FISCAL = regex.compile(r"\bFY|\bfiscal\b", _F)
_FISCAL_QUARTER = regex.compile(
    r"(?:\bQ(?<q>[1-4])|\b(?<o>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter)"
    r"\s*(?:of\s+)?,?\s*(?:FY\s*'?|fiscal\s+(?:year\s+)?)(?<y>\d{4}|\d{2})\b"
    r"|\bFY\s*'?(?<y>\d{4}|\d{2})\s*[-\s]\s*Q(?<q>[1-4])\b", _F)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4}


def period_of(header: str) -> str | None:
    """The period a column header names, as a scope; None when it names none or more
    than one (a change column)."""
    text = _WEEKS.sub("year ended", _PLURAL.sub(r"\1", " ".join((header or "").split())))
    if not text or _COMPARE.search(text):
        return None
    dates = {_day(m) for m in _DATE.finditer(text)} - {None}
    mentions = {m.period for m in find_periods(text)}
    spans = {p for p in mentions if p[0] != p[1]}
    if len(spans) == 1 and len(dates) <= 1:
        span = spans.pop()
        if not dates or span[1] in dates or _near(span[1], next(iter(dates))):
            return format_scope(span)
        return None
    if not spans and len(dates) == 1:
        return dates.pop().isoformat()
    return None


def _day(m: regex.Match) -> date | None:
    try:
        month = int(m["mo"]) if m["mo"] else _MONTHS.index(m["mn"][:3].lower()) + 1
        return date(int(m["y"]), month, int(m["d"]))
    except ValueError:
        return None


def _near(a: date, b: date, days: int = 7) -> bool:
    return abs((a - b).days) <= days


def columns_for(table: Table, period: str, kind: str | None = None) -> list[int]:
    """The indexes of `table`'s columns that `period` names, in table order: none when no
    column is of that period (or the period is not one `period_of` or a scope can
    read), more than one when several are (a "Three months" and a "Nine months" column
    ending on the date asked): the caller reports that as ambiguous. With `kind`
    (`money`, `number`, `percent`), columns whose figures are of another kind (a
    percent column beside an amount column for the same year) are left out."""
    spans = [_scope(c.period) for c in table.columns]
    wanted = _request(period, spans)
    if wanted is None:
        return []
    found = [i for i, span in enumerate(spans) if span and _names(wanted, span, spans)]
    if kind is not None:
        found = [i for i in found if _column_kind(table, i) in _COMPATIBLE.get(kind, {kind})]
    return found


_COMPATIBLE = {"money": {"money", "number", None}, "number": {"money", "number", None},
               "percent": {"percent"}}


def _column_kind(table: Table, index: int) -> str | None:
    kinds = [c.quantity.kind for r in table.rows if (c := r.cells[index]) and c.quantity
             and not (c.quantity.amount == 0 and c.text.strip("—–-− ") == "")]
    if not kinds:
        return None
    return max(set(kinds), key=kinds.count)


def _scope(period: str | None) -> DateRange | None:
    if not period:
        return None
    try:
        return parse_scope(period)
    except InputError:
        return None


# A request: ("year", Y) | ("date", d) | ("span", (a, b)) | ("fiscal-quarter", (Y, q))
Request = tuple[str, object]


def _request(text: str, spans: list[DateRange | None]) -> Request | None:
    text = " ".join((text or "").split())
    if not text:
        return None
    if m := _FISCAL_QUARTER.search(text):
        q = int(m["q"]) if m["q"] else _ORDINALS[m["o"].lower()]
        year = int(m["y"]) if len(m["y"]) == 4 else 2000 + int(m["y"])
        return _fiscal_quarter(year, q, spans)
    if ".." in text or regex.fullmatch(r"(?:FY\s?)?\d{4}(?:-Q[1-4]|-H[12]|-\d{2}){0,2}", text, _F):
        try:
            span = parse_scope(regex.sub(r"^FY\s?", "", text, flags=_F))
        except InputError:
            return None
        if span[0] == span[1]:
            return "date", span[0]
        if span == (date(span[0].year, 1, 1), date(span[0].year, 12, 31)):
            return "year", span[0].year
        return "span", span
    found = period_of(text)
    if found is None:
        return None
    span = parse_scope(found)
    if span[0] == span[1]:
        return "date", span[0]
    if span == (date(span[0].year, 1, 1), date(span[0].year, 12, 31)):
        return "year", span[0].year
    return "span", span


def _fiscal_quarter(year: int, quarter: int, spans: list[DateRange | None]) -> Request | None:
    """The quarter of the fiscal year ending in `year`, from the month the table's year
    or year-to-date columns start in; None when the table shows none."""
    starts = {s[0].month for s in spans if s and s[0] != s[1] and s[0].day == 1
              and _months(s) in (6, 9, 12)}
    if len(starts) != 1:
        return None
    first_month = starts.pop()
    start = _add_months(date(year if first_month == 1 else year - 1, first_month, 1),
                        3 * (quarter - 1))
    return "span", (start, _add_months(start, 3) - timedelta(days=1))


def _add_months(day: date, months: int) -> date:
    """The first of the month `months` after `day`'s (`day` is a first of a month)."""
    index = day.month - 1 + months
    return date(day.year + index // 12, index % 12 + 1, 1)


def _months(span: DateRange) -> int:
    """The whole months a span covers, to the nearest (13 weeks: 3; 52 weeks: 12)."""
    return round(((span[1] - span[0]).days + 1) / 30.44)


def _names(wanted: Request, span: DateRange, spans: list[DateRange | None]) -> bool:
    kind, value = wanted
    instant = span[0] == span[1]
    if kind == "date":
        return _near(span[1], value, 0) if instant else span[1] == value
    if kind == "span":
        a, b = value
        return not instant and _near(span[0], a) and _near(span[1], b)
    year = value
    if instant:
        return span[0].year == year and _year_ends(spans)
    if span == (date(year, 1, 1), date(year, 12, 31)):
        return True
    return _months(span) == 12 and _year_named(span[1]) == year


def _year_named(end: date) -> int:
    """The fiscal year a year ending on `end` is named by: the year it ends in, or the
    year before for a 52/53-week year ending in the first week of January."""
    return end.year - 1 if end.month == 1 and end.day <= 7 else end.year


def _year_ends(spans: list[DateRange | None]) -> bool:
    """Whether the table's dates are year ends: two or more, one day of the year, in
    different years, or the ends of its own fiscal-year columns."""
    instants = [s[0] for s in spans if s and s[0] == s[1]]
    year_ends = {s[1] for s in spans if s and s[0] != s[1] and _months(s) == 12}
    if instants and all(d in year_ends for d in instants):
        return True
    days = {(d.month, d.day) for d in instants}
    return len(instants) >= 2 and len(days) == 1 and len({d.year for d in instants}) == len(
        instants)

"""Periods named in free text: consumes a title, a GET source or a question, produces the
periods it names (`Q3 2024`, `2024 Q3`, `3Q24`, `Q2 of FY2023`, `third quarter of 2024`, `H1 2024`,
`first half of 2024`, `FY2024`, `fiscal 2024`, `March 2024`, `Week 48 2023`,
`2024年第三季度`, `2024年上半年`, `2024年3月`, `2024年`, a bare year) with where each
mention sits, so the rest of the text can be read without them.

A period is an inclusive `(first, last)` pair of dates (`DateRange`, as
`shared.search.dates` parses scopes). Fiscal years are read as calendar years (a
company whose fiscal year differs gives `period` as a date range in its corpus).
Calendar dates (`2024-10-29`, `29 October 2024`, `October 29, 2024`) are not periods
(`find_dates` reads them): they are masked first, so their year is not read as one
either; nor is a year that is part of an identifier (`Rule 2023-17`, `Notice 2024-03`,
`v2024.1`, `lot 12023`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from datetime import date, timedelta

import regex

from .dates import DateRange, half_range, month_range, quarter_range, year_range

_Y4 = r"(?:19|20)\d{2}"
_Y = rf"(?:{_Y4}|'\s?\d{{2}})"          # 2024 or '24 (only where a Q/H/FY mark says it is a year)
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
        "last": 4}  # of a year's quarters (_LAST_QUARTER)
_ORD_RE = r"(?:first|second|third|fourth|1st|2nd|3rd|4th)"
_LAST_QUARTER = r"last(?=[\s-]+quarter\s+of\s+(?:the\s+)?(?:fiscal(?:\s+year)?\s+|FY\s*)?\d)"
"""`last quarter of 2019`: a year's fourth quarter (not the quarter before another)."""
_CN_NUM = {"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
             r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_NO_LEFT = r"(?<![\w./-])"
_NO_RIGHT = r"(?![\w/-]|\.\d)"
_F = regex.IGNORECASE | regex.VERSION1

# Calendar dates: masked before periods are read (a date is a day, not a period).
_DATES = regex.compile(
    rf"\b{_Y4}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_RE}\.?,?\s+{_Y4}\b"
    rf"|\b{_MONTH_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_Y4}\b|{_Y4}年\d{{1,2}}月\d{{1,2}}日", _F)

_DATE_IN = (rf"(?<d>{_Y4}-\d{{2}}-\d{{2}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_RE}\.?,?\s+{_Y4}"
            rf"|{_MONTH_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_Y4})")
_MONTH_END = rf"(?<me>{_MONTH_RE}\.?,?\s+{_Y4})(?!\d)"
_END_IN = rf"(?:{_DATE_IN}|{_MONTH_END})"
_SPANS = regex.compile(
    rf"\b(?:the\s+)?(?:first\s+)?(?<n>three|six|nine|twelve|3|6|9|12)[\s-]+months?\s+"
    rf"(?:ended|ending|to|through)\s+{_END_IN}"
    rf"|\b(?<n>half)[\s-]+year\s+(?:ended|ending|to)\s+{_END_IN}"
    rf"|\b(?<!half[\s-])(?:fiscal\s+|financial\s+)?(?<n>year)\s+(?:ended|ending|to)\s+{_END_IN}"
    rf"|\b(?:(?:fiscal\s+)?{_ORD_RE}[\s-]+)?(?<n>quarter)\s+(?:ended|ending)\s+{_END_IN}"
    rf"|\b(?<n>52|53)[\s-]+weeks?\s+(?:ended|ending|to)\s+{_DATE_IN}"
    rf"|\b{_MONTH_END}\s+(?<n>quarter|half[\s-]year|half)\b"
    rf"|\b(?:the\s+)?first\s+(?<n>nine|six|three)\s+months\s+of\s+(?<y>{_Y4})(?!\d)", _F)
"""Spans ending at a date or a month's end: "nine months ended September 30, 2024", "year
ended 31 March 2025", "the year ended June 2019", "the half-year ended 31 December 2019"
(six months, not the year), "the quarter ended March 31, 2023" and "the fourth quarter
ended December 31, 2019" (its three months, whatever its ordinal), "the
December 2019 quarter", "the 52 weeks ended 29 June 2019", "the first nine months of
2024"."""
_SEASON = regex.compile(rf"{_NO_LEFT}(?<y>{_Y4})\s?[-/–]\s?(?<y2>\d{{2}}|{_Y4}){_NO_RIGHT}")
"""A season or split fiscal year: 2023-24, 2023/24, 2023–2024 (July to June)."""
_MONTH_COUNT = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "year": 12, "quarter": 3,
                "half": 6}

# (kind, pattern); earlier kinds win an overlap. Named groups: y (year), q, h, m, w.
_PATTERNS: list[tuple[str, regex.Pattern]] = [
    ("quarter", regex.compile(rf"(?<y>{_Y4})\s*年\s*(?:第\s*)?(?<q>[一二三四1-4])\s*季(?:度)?", _F)),
    ("quarter", regex.compile(rf"(?<y>{_Y4})\s*年\s*Q(?<q>[1-4])", _F)),
    ("half", regex.compile(rf"(?<y>{_Y4})\s*年\s*(?<h>上|下)半年(?:度)?", _F)),
    ("half", regex.compile(rf"(?<y>{_Y4})\s*年\s*(?:半年度|中期)", _F)),
    ("month", regex.compile(rf"(?<y>{_Y4})\s*年\s*(?<m>1[0-2]|0?[1-9])\s*月", _F)),
    ("year", regex.compile(rf"(?<y>{_Y4})\s*(?:年年度|财年|財年|财政年度|年度|年)", _F)),
    ("quarter", regex.compile(
        rf"{_NO_LEFT}Q(?<q>[1-4])\s*[,-]?\s*(?:of\s+(?:the\s+)?)?(?:(?:FY|fiscal(?:\s+year)?)\s*'?"
        rf"(?<y>{_Y4}|\d{{2}})|(?<y>{_Y}))"
        rf"{_NO_RIGHT}", _F)),
    ("quarter", regex.compile(rf"{_NO_LEFT}(?<y>{_Y4})\s*-?\s*Q(?<q>[1-4]){_NO_RIGHT}", _F)),
    ("quarter", regex.compile(rf"{_NO_LEFT}Q(?<q>[1-4])\s+(?:and|&)\s+(?:full[\s-]year|FY|fiscal\s+"
                              rf"year|year)\s+(?=(?<y>{_Y4}))", _F)),
    ("quarter", regex.compile(rf"{_NO_LEFT}(?<q>[1-4])Q\s*(?<y>{_Y4}|\d{{2}}){_NO_RIGHT}", _F)),
    ("quarter", regex.compile(
        rf"\b(?:fiscal\s+)?(?<q>{_ORD_RE}|{_LAST_QUARTER})[\s-]+quarter"
        rf"(?:\s+(?:of|for|in|ended))?\s+"
        rf"(?:(?:the\s+)?fiscal(?:\s+year)?\s+|FY\s*)?(?<y>{_Y4}){_NO_RIGHT}", _F)),
    ("half", regex.compile(
        rf"{_NO_LEFT}H(?<h>[12])\s*[,-]?\s*(?:FY\s*'?(?<y>{_Y4}|\d{{2}})|(?<y>{_Y})){_NO_RIGHT}", _F)),
    ("half", regex.compile(rf"{_NO_LEFT}(?<y>{_Y4})\s*-?\s*H(?<h>[12]){_NO_RIGHT}", _F)),
    ("half", regex.compile(rf"{_NO_LEFT}(?<h>[12])H\s*(?<y>{_Y4}|\d{{2}}){_NO_RIGHT}", _F)),
    ("half", regex.compile(
        rf"\b(?<h>first|second|1st|2nd)[\s-]+half(?:\s+(?:of|for|in))?\s+(?:fiscal\s+)?"
        rf"(?<y>{_Y4}){_NO_RIGHT}", _F)),
    ("week", regex.compile(rf"\bweek\s+(?<w>[1-9]|[1-4]\d|5[0-3])(?:\s*,?\s*(?:of\s+)?)(?<y>{_Y4}){_NO_RIGHT}", _F)),
    ("week", regex.compile(rf"{_NO_LEFT}(?<y>{_Y4})-?W(?<w>0[1-9]|[1-4]\d|5[0-3]){_NO_RIGHT}", _F)),
    ("month", regex.compile(rf"(?<!\d\s?)\b(?<m>{_MONTH_RE})\.?,?\s+(?<y>{_Y4}){_NO_RIGHT}", _F)),
    ("year", regex.compile(
        rf"{_NO_LEFT}(?:FY\s*'?|fiscal(?:\s+year)?\s+|financial\s+year\s+)(?<y>{_Y4}|\d{{2}})"
        rf"{_NO_RIGHT}", _F)),
    ("year", regex.compile(rf"{_NO_LEFT}(?<y>{_Y4})\s+(?:fiscal|financial)\s+year\b", _F)),
    ("year", regex.compile(rf"\bcalendar\s+(?:year\s+)?(?<y>{_Y4}){_NO_RIGHT}", _F)),
    ("year", regex.compile(rf"{_NO_LEFT}(?<y>{_Y4}){_NO_RIGHT}", _F)),
]


@dataclass(frozen=True)
class Mention:
    """One period named in a text."""

    period: DateRange
    start: int
    end: int
    text: str


def _year(text: str) -> int:
    digits = "".join(c for c in text if c.isdigit())
    return int(digits) if len(digits) == 4 else 2000 + int(digits)


def _week_range(year: int, week: int) -> DateRange | None:
    try:
        first = date.fromisocalendar(year, week, 1)
    except ValueError:  # week 53 of a year that has 52
        return None
    return first, first + timedelta(days=6)


def _period(kind: str, m: regex.Match) -> DateRange | None:
    year = _year(m["y"])
    if kind == "quarter":
        q = m["q"].lower()
        return quarter_range(year, _ORD.get(q) or _CN_NUM.get(q) or int(q))
    if kind == "half":
        h = (m.groupdict().get("h") or "1").lower()
        return half_range(year, 1 if h in ("1", "first", "1st", "上") else 2)
    if kind == "month":
        month = m["m"]
        number = int(month) if month.isdigit() else _MONTHS.index(month[:3].lower()) + 1
        return month_range(year, number)
    if kind == "week":
        return _week_range(year, int(m["w"]))
    return year_range(year)


def find_periods(text: str) -> list[Mention]:
    """Every period `text` names, in order of position; the most specific form wins
    where two overlap ("Q3 2024" is a quarter, not also the year 2024)."""
    if not isinstance(text, str) or not text:
        return []
    return list(_find_periods(text))


def _day(text: str) -> date | None:
    parts = regex.findall(r"[a-z]+|\d+", text.lower())
    try:
        if parts[0].isdigit() and len(parts[0]) == 4:
            return date(int(parts[0]), int(parts[1]), int(parts[2]))
        month = next(p for p in parts if p.isalpha() and p[:3] in _MONTHS)
        day, year = (int(p) for p in parts if p.isdigit())
        return date(year, _MONTHS.index(month[:3]) + 1, day)
    except (ValueError, StopIteration, IndexError):
        return None


def _span(m: regex.Match) -> DateRange | None:
    n = m["n"].lower()
    if n.startswith("half"):
        n = "half"
    months = _MONTH_COUNT.get(n) or int(n)
    if m["y"]:  # the first nine months of 2024
        year = int(m["y"])
        return date(year, 1, 1), month_range(year, months)[1]
    end = _day(m["d"]) if m["d"] else _month_end(m["me"])
    if end is None:
        return None
    if n in ("52", "53"):  # a year of weeks
        return end - timedelta(weeks=int(n)) + timedelta(days=1), end
    # a period of weeks ends within a week of a month's end: "three months ended April 1,
    # 2023" (13 weeks from January 1) is January to March and a day, not February to April
    last = end - timedelta(days=end.day) if m["d"] and end.day <= 7 else end
    first_month = last.month - months + 1
    year = last.year + (first_month - 1) // 12 if first_month > 0 else last.year - 1
    first_month = (first_month - 1) % 12 + 1
    return date(year, first_month, 1), end


def _month_end(text: str) -> date | None:
    """The last day of a month written with its year (`June 2019`)."""
    month, year = regex.findall(r"[a-z]+|\d+", text.lower())[:2]
    return month_range(int(year), _MONTHS.index(month[:3]) + 1)[1]


def _season(m: regex.Match) -> DateRange | None:
    first, second = int(m["y"]), m["y2"]
    last = int(second) if len(second) == 4 else (first // 100) * 100 + int(second)
    if last != first + 1:
        return None  # 2023-17 is a rule's number, not a season
    return date(first, 7, 1), date(last, 6, 30)


@lru_cache(maxsize=16384)  # titles and sources recur in every GET and plan: read once
def _find_periods(text: str) -> tuple[Mention, ...]:
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for pattern, read in ((_SPANS, _span), (_SEASON, _season)):
        for m in pattern.finditer(text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            if (period := read(m)) is not None:
                found.append(Mention(period, m.start(), m.end(), m.group()))
                taken.append(m.span())
    taken += [m.span() for m in _DATES.finditer(text)]
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text, overlapped=False):
            start, end = m.span()
            if any(start < b and a < end for a, b in taken):
                continue
            period = _period(kind, m)
            if period is not None:
                found.append(Mention(period, start, end, m.group()))
                taken.append((start, end))
    return tuple(sorted(found, key=lambda x: x.start))


def find_dates(text: str) -> list[tuple[date, int, int]]:
    """The calendar days `text` names (`December 31, 2019`, `31 March 2019`,
    `2019-09-30`, `12/31/2019` when the order of its day and month shows: what a balance
    sheet's column is about), each with where it sits."""
    found = []
    for m in _DATES.finditer(text):
        if (day := _day(m.group())) is not None:
            found.append((day, m.start(), m.end()))
    for m in NUMERIC_DATE.finditer(text):
        if (iso := iso_date(m)) != m.group():
            found.append((date.fromisoformat(iso), m.start(), m.end()))
    return sorted(found, key=lambda f: f[1])


NUMERIC_DATE = regex.compile(
    r"(?<![\d/.-])(?<a>\d{1,2})(?<s>[/.])(?<b>\d{1,2})(?P=s)(?<y>(?:19|20)\d{2}|\d{2})"
    r"(?![\d/.-])")
"""A date in figures: `12/31/2019`, `31/12/19`, `30.06.2019` (`iso_date` reads it)."""


def full_year(y: str) -> str:
    return y if len(y) == 4 else f"20{y}"


def iso_date(m: regex.Match) -> str:
    """A date written in figures (`12/31/2019`, `31/12/19`) as `2019-12-31` when its
    order shows (a part above 12, or the two the same); as written otherwise (`03/04/2019`
    is March 4 or April 3)."""
    a, b = int(m["a"]), int(m["b"])
    month, day = (b, a) if a > 12 else (a, b) if b > 12 or a == b else (0, 0)
    try:
        return date(int(full_year(m["y"])), month, day).isoformat()
    except ValueError:
        return m[0]


def named_periods(text: str) -> list[DateRange]:
    """The distinct periods `text` names, in order of first mention."""
    return list(dict.fromkeys(m.period for m in find_periods(text)))


def named_period(text: str) -> DateRange | None:
    """The one period `text` is about: the period it names, or the span of all it names
    ("2022 versus 2023" spans both); None when it names none."""
    periods = named_periods(text)
    if not periods:
        return None
    return min(p[0] for p in periods), max(p[1] for p in periods)


def year_in(text: str) -> DateRange | None:
    """The period `text` names, as one range: `named_period` (the name older callers use)."""
    return named_period(text)


def without_periods(text: str) -> str:
    """`text` with every period mention replaced by a space (what is left names the thing)."""
    out, last = [], 0
    for m in find_periods(text):
        out.append(text[last:m.start])
        out.append(" ")
        last = m.end
    out.append(text[last:])
    return "".join(out)


_PARTIAL = [
    ("quarter", regex.compile(r"(?<![\w-])Q(?<n>[1-4])(?![\w-])|\b(?<n>first|second|third|"
                              r"fourth|1st|2nd|3rd|4th)[\s-]+quarter\b|第(?<n>[一二三四1-4])季度", _F)),
    ("half", regex.compile(r"(?<![\w-])H(?<n>[12])(?![\w-])|\b(?<n>first|second|1st|2nd)[\s-]+"
                           r"half\b|(?<n>上|下)半年", _F)),
    ("year", regex.compile(r"\b(?:full[\s-]year|for\s+the\s+(?:full\s+)?year|whole[\s-]year)\b", _F)),
    ("ytd", regex.compile(r"\b(?:nine|six)[\s-]months?\b|\byear[\s-]to[\s-]date\b|\bYTD\b|"
                          r"\b9M\b|前三季度|1-9月", _F)),
    ("prior", regex.compile(r"\b(?:last|previous|prior|preceding)\s+(?:year|season|quarter|"
                            r"month|period|fiscal\s+year)\b|\ba\s+year\s+(?:earlier|ago|before)\b|"
                            r"\byear[\s-]ago\b|上年|去年|上一年", _F)),
    ("month", regex.compile(r"\b(?<n>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|June?|"
                            r"July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|"
                            r"Dec(?:ember)?|(?<=\b(?:in|of|from|to|since|than|for)\s)May)\b")),
]


@dataclass(frozen=True)
class Part:
    """A quarter, half or month named without its year ("in the first quarter", "Q1",
    "in May"), a span ("full-year", "nine-month", "year-to-date"), or a relative period
    ("last season", "a year earlier", kind `prior`): what a sentence about a figure often
    says of a neighbouring period."""

    kind: str
    number: int
    start: int
    end: int


def find_partial_periods(text: str) -> list[Part]:
    """Quarters, halves and months `text` names without a year (spans that are part of
    a full period mention, "Q3 2024", are left out)."""
    taken = [(m.start, m.end) for m in find_periods(text)]
    found = []
    for kind, pattern in _PARTIAL:
        for m in pattern.finditer(text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            n = (m.groupdict().get("n") or "0").lower()
            number = (_ORD.get(n) or _CN_NUM.get(n) or {"上": 1, "下": 2}.get(n)
                      or (int(n) if n.isdigit() else _MONTHS.index(n[:3]) + 1))
            found.append(Part(kind, number, m.start(), m.end()))
    return found


def part_of(period: DateRange) -> tuple[str, int] | None:
    """("quarter", 3) for Q3 of a year, ("half", 1), ("month", 7), ("year", 0); None for
    any other span."""
    first, last = period
    if first.year != last.year or first.day != 1:
        return None
    months = last.month - first.month + 1
    if (first.month, last.month, last.day) == (1, 12, 31):
        return "year", 0
    kind = {1: "month", 3: "quarter", 6: "half"}.get(months)
    if kind is None or (last + timedelta(days=1)).day != 1:
        return None
    return kind, {"month": first.month, "quarter": (first.month + 2) // 3,
                  "half": (first.month + 5) // 6}[kind]

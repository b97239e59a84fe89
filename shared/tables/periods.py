"""Periods of table columns: consumes a column's header text ("Three Months Ended
September 30, 2019", "Years ended September 30 2019", "December 31, 2018", "Fiscal
2019", "Q3 2019") and a period a caller asks for ("FY2018", "2018", "fiscal 2018",
"FY18", "2019-Q3", "Q3 2019", "Q3 FY2019", "December 31, 2018", "2018-12-31",
"2018-10-01..2019-09-30"), produces the column's period as a scope
(shared/search/dates.py: `2019`, `2019-Q3`, `2018-10-01..2019-09-30`, `2018-12-31`) and
the columns of a table a requested period names.

A fiscal year is named by the year it ends in: "Years ended September 30" over "2019"
is 2018-10-01..2019-09-30, which "FY2019", "fiscal 2019", "FY19" and "2019" name; a
year that ends in January or the first week of February is named either way by
companies, so only a bare year names it (the calendar year it ends in), and only the
newest such year of a table that does not name its fiscal years itself; "FY2019" or
"fiscal 2019" names it never. A header naming one fiscal year over two calendar years
("2018/2019") is named by the fiscal year it ends in. A balance-sheet date names a
year only in a table whose dates are year ends (a year apart, to within a week, the
other years' maybe given by its title: "as of December 31, 2019 and 2018" over a table
of the one date); a January 1 beside them is an opening balance and names none. A
quarter written as a scope ("2019-Q3") or with a calendar year ("Q3 2019") is the
calendar quarter; one marked fiscal ("Q3 FY2019", "FY2019-Q3") is the column whose
header names that quarter ("Fiscal 2019 Third Quarter", or `Third 2019` in a quarterly
results table), or else the quarter of the fiscal year read from the table's own year or
year-to-date columns, and names nothing in a table that shows neither. A header's year
may be set in spaced digits ("2 0 1 8") or as a short fiscal year ("F19"). Of a period's
columns, a request's other words pick those whose headers hold them ("December 31, 2019
Fair Value" beside "… Carrying Amount"); words that pick none leave them all. A header
naming two periods ("2019 vs. 2018", "Change 2019-2018"), two spans, a range of years
("2021-2022") or a year with words that make it something else ("First" over "2015")
names none.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

import regex

from shared.errors import InputError
from shared.search.dates import DateRange, format_scope, parse_scope
from shared.search.periods import NUMERIC_DATE, find_periods, full_year, iso_date
from shared.search.terms import stem, stems, words

from shared.models.table import Table

_F = regex.IGNORECASE | regex.VERSION1
QUARTER_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
                    "4th": 4}
_ORDINAL = "|".join(QUARTER_ORDINALS)
"""A quarter's ordinal, as a regex alternation."""
MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DATE = regex.compile(
    rf"(?<!\d)(?<y>(?:19|20)\d{{2}})-(?<mo>\d{{2}})-(?<d>\d{{2}})(?!\d)"
    rf"|\b(?<mn>{MONTH})\.?\s+(?<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?<y>(?:19|20)\d{{2}})(?!\d)"
    rf"|(?<!\d)(?<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?<mn>{MONTH})\.?,?\s+"
    rf"(?<y>(?:19|20)\d{{2}})(?!\d)",
    _F)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_PLURAL = regex.compile(r"\b(year|month|week|quarter)s\b", _F)
_WEEKS = [(regex.compile(rf"\b(?:{n})[\s-]+weeks?\b", _F), months) for n, months in (
    ("13|thirteen", "three months"), (r"26|twenty[\s-]six", "six months"),
    (r"39|thirty[\s-]nine", "nine months"), (r"52|53|fifty[\s-]two|fifty[\s-]three", "year"))]
_QUARTER_ENDED = regex.compile(r"\bquarter\s+(?=ended|ending)", _F)
MARK = r"(?:\((?:[a-z]|\d{1,2})\)|\[\d{1,2}\]|\*+|[†‡§]+|[¹²³⁴⁵⁶⁷⁸⁹⁰]+)"
"""A footnote mark after a header or label: `(1)`, `(a)`, `[2]`, `*`, `†`, `¹`."""
_MARKS = regex.compile(rf"\s*{MARK}(?=\s|$)", _F)
COMPARE = regex.compile(r"\b(?:vs\.?|versus|change|compared|increase|decrease|variance|"
                        r"growth)\b", _F)
"""Words of a column comparing periods ("% Change", "2019 vs. 2018"): of no one period."""
_QUALIFIERS = regex.compile(
    rf"\b(?:{_ORDINAL}|quarter|half|months?|weeks?|ended|ending|"
    r"through|to[\s-]date|ytd|Q[1-4]|H[12]|[1-4]Q|average)\b", _F)
_YEARS = regex.compile(r"(?<![\w-])(?:19|20)\d{2}\s?[-–/]\s?(?:(?:19|20)\d{2}|\d{2})(?![\w-])")
_SPAN_WORDS = regex.compile(
    r"\b(?:year|month|week|quarter|period)\s+(?:ended|ending)\b|\bYTD\b"
    r"|\byear[\s-]to[\s-]date\b", _F)
_YEAR_ENDED = regex.compile(r"\b(?:fiscal\s+)?years?\s+end(?:ed|ing)\b", _F)
_CONTEXT = regex.compile(
    rf"\b(?:(?:fiscal\s+)?years?|(?:three|six|nine|twelve|3|6|9|12)[\s-]+months?|quarters?|"
    rf"(?:13|26|39|52|53)[\s-]+weeks)\s+end(?:ed|ing)\s+{MONTH}\.?\s+\d{{1,2}}\b"
    rf"|\b(?:as\s+(?:of|at)|at)\s+{MONTH}\.?\s+\d{{1,2}}\b", _F)
_MONTH_DAY = regex.compile(rf"\b(?P<month>{MONTH})\.?\s+(?P<day>\d{{1,2}})\b(?!\s*%)", _F)
_MONTH_NAMED = regex.compile(rf"\b{MONTH}\b|\d{{4}}-\d{{2}}-\d{{2}}", _F)
_FISCAL = regex.compile(r"\bFY|\bfiscal\b", _F)
_SPACED_YEAR = regex.compile(
    r"(?<!\d)(?<!(?:^|\s)\d\s)([12]) ([09]) (\d) (\d)(?!\d)(?!\s\d(?:\s|$))")
"""A year set in spaced digits (`2 0 1 8`), as some reports letter their headers."""
_SHORT_FISCAL = regex.compile(r"\bF(\d{2})\b")
"""`F19`: fiscal 2019, as some annual reports write it."""
_SPLIT_YEAR = regex.compile(r"(?<![\w/-])((?:19|20)\d{2})\s?/\s?((?:19|20)?\d{2})(?![\w/-])")
"""`2018/2019`, `2018/19`: one fiscal year over two calendar years, when they follow."""
_FISCAL_NAMED = regex.compile(r"\bFY\s?'?\d{2}|\bfiscal\s+(?:year\s+)?(?:19|20)\d{2}\b"
                              r"|\bF\d{2}\b", _F)
"""A year named as the company's own fiscal year (`Fiscal 2019`, `FY19`, `F19`)."""
_HEADER_QUARTER = regex.compile(
    rf"\bfiscal\s+(?:year\s+)?(?<y>(?:19|20)\d{{2}})\s+(?<o>{_ORDINAL})"
    r"\s+quarter\b", _F)
"""A fiscal quarter a header names year first (`Fiscal 2019 Third Quarter`)."""
_FISCAL_QUARTER = regex.compile(
    rf"(?:\bQ(?<q>[1-4])|\b(?<o>{_ORDINAL})\s+quarter)"
    r"\s*(?:of\s+)?,?\s*(?:FY\s*'?|fiscal\s+(?:year\s+)?)(?<y>\d{4}|\d{2})\b"
    r"|\bFY\s*'?(?<y>\d{4}|\d{2})\s*[-\s]\s*Q(?<q>[1-4])\b", _F)
_PERIOD_WORD = regex.compile(
    rf"{MONTH}|\d+|fy\d*|q[1-4]|h[12]|f\d{{2}}|fiscal|years?|months?|weeks?|quarters?|half|ended|"
    r"ending|end|as|of|at|for|in|on|the|to|and|date|ytd|three|six|nine|twelve|first|second|"
    r"third|fourth|1st|2nd|3rd|4th|through|period", _F)
"""A word of a period as a request writes it: what is left names one of its columns."""


_BARE_QUARTER = regex.compile(r"^\s*Q([1-4])\s*$", _F)
"""A quarter asked with no year ("Q3"): of the newest year the table shows."""
_ORDINAL_HEADER = regex.compile(
    rf"^\s*(?:(?P<o>{_ORDINAL})(?:\s+quarter)?|Q(?P<q>[1-4]))\s*"
    rf"{MARK}?\s*$", _F)
"""A header that names a quarter and nothing else (`Third`, `Fourth Quarter`, `Q2`): its
year is the heading of the rows (a table of quarters under "2019" and "2018")."""


def bare_quarter(period: str | None) -> int | None:
    """The quarter a period asked with no year names ("Q3": 3), else None."""
    m = _BARE_QUARTER.match(period or "")
    return int(m[1]) if m else None


def year_quarter(period: str | None) -> tuple[int, int, bool] | None:
    """(year, quarter, fiscal) of a quarter asked with its year: "2019-Q3" (a calendar
    quarter) or "Q3 FY2019" (the company's own); None for anything else."""
    if m := _YEAR_QUARTER.match(period or ""):
        return int(m["y"]), int(m["q"]), False
    if named := _fiscal_quarter_named(period or ""):
        return *named, True
    return None


def fiscal_named(text: str | None) -> bool:
    """Whether `text` names a year as the company's own fiscal year (`Fiscal 2019`)."""
    return bool(_FISCAL_NAMED.search(text or ""))


_YEAR_QUARTER = regex.compile(r"^\s*(?P<y>(?:19|20)\d{2})-Q(?P<q>[1-4])\s*$", _F)


def header_quarter(header: str) -> int | None:
    """The quarter a header names by itself (`Third`, `Q3`, `Qtr 3`), else None."""
    m = _ORDINAL_HEADER.match(_normal(header))
    if not m:
        return None
    return int(m["q"]) if m["q"] else QUARTER_ORDINALS[m["o"].lower()]


YEAR_CELL = regex.compile(
    rf"(?:FY\s*)?(?:19|20)\d{{2}}\s*{MARK}?", _F)
"""A header cell that is a year (`2019`, `2011(c)`, `FY2019`, `2018*`): not a figure."""


def period_context(text: str) -> str:
    """The span or date a table's title or notes give its columns, without a year
    ("Years ended September 30", "As of September 30"): what a column headed by a bare
    year is of. Empty when the text gives none, or more than one, or names dates of
    more than one day of the year: "as of September 28, 2024 and September 30, 2023"
    (a fiscal year ending on the last Saturday of September; March 31 beside December
    31) dates one column each, and which is not told."""
    found = {" ".join(m.group().lower().split()) for m in _CONTEXT.finditer(text or "")}
    days = {(m.group("month")[:3].lower(), int(m.group("day")))
            for m in _MONTH_DAY.finditer(text or "")}
    return found.pop() if len(found) == 1 and len(days) <= 1 else ""


def period_of(header: str, context: str = "") -> str | None:
    """The period a column header names, as a scope; None when it names none or more
    than one (a change column), or names a year with words that make it something else
    ("First" over "2015": a quarter of a fiscal year the header does not say).
    `context` (from `period_context`) is what a header that is a bare year is of."""
    text = _normal(header)
    if context and not _MONTH_NAMED.search(text) and not _QUALIFIERS.search(text):
        text = f"{context} {text}"
    text = _QUARTER_ENDED.sub("three months ", _PLURAL.sub(r"\1", _MARKS.sub("", text)))
    text = regex.sub(r"\b(year|month)-(ended|ending)\b", r"\1 \2", text, flags=_F)
    for pattern, months in _WEEKS:
        text = pattern.sub(months, text)
    if not text or COMPARE.search(text) or len(_SPAN_WORDS.findall(text)) > 1:
        return None  # "Three months ended Six months ended March 31": which one is not told
    if _YEARS.search(text) and not _FISCAL.search(text):
        return None  # "2021-2022" over payments due: two years, not a fiscal year
    dates = {_day(m) for m in _DATE.finditer(text)} - {None}
    mentions = find_periods(text)
    spans = {m.period for m in mentions if m.period[0] != m.period[1]}
    if len(spans) != 1 or len(dates) > 1:
        return dates.pop().isoformat() if not spans and len(dates) == 1 and not (
            _QUALIFIERS.search(text)) else None
    span = spans.pop()
    spanning = [m for m in mentions if m.period == span]
    if dates:  # a span ending on the date the header names ("Years ended September 30, 2019")
        day = dates.pop()
        if not _near(span[1], day):
            return None
        if _YEAR_ENDED.search(spanning[0].text):
            span = (_year_before(day), day)
        return format_scope(span)
    if len(spanning) == 1 and (not _QUALIFIERS.search(text) or _YEAR_ENDED.search(text)) or (
            _quarter_like(span)):
        return format_scope(span)
    return None


def _normal(text: str | None) -> str:
    """A header with its spacing joined, short fiscal years written out (`F19`:
    `FY2019`) and a quarter written the way dates are read (`Qtr 4 2019`, `Quarter 4
    2019`, `2019 Fourth Quarter`: `Q4 2019`, `Fourth quarter 2019`)."""
    text = _SPACED_YEAR.sub(r"\1\2\3\4", " ".join((text or "").split()))
    text = _DOTTED_ISO.sub(r"\g<y>-\g<mo>-\g<d>", NUMERIC_DATE.sub(iso_date, text))
    text = _MONTH_YEAR.sub(lambda m: f"{m['mn']} {full_year(m['y'])}", _DAY_MONTH_YEAR.sub(
        lambda m: f"{m['d']} {m['mn']} {full_year(m['y'])}", text))
    text = _QTR.sub("quarter", _SHORT_FISCAL.sub(r"FY20\1", text))
    text = _QUARTER_NUMBER.sub(r"Q\1", text)
    return _YEAR_THEN_QUARTER.sub(r"\g<o> quarter \g<y>", text)


_DOTTED_ISO = regex.compile(r"(?<![\d.])(?<y>(?:19|20)\d{2})\.(?<mo>\d{2})\.(?<d>\d{2})(?![\d.])")
_DAY_MONTH_YEAR = regex.compile(
    rf"(?<![\w-])(?<d>\d{{1,2}})[-\s](?<mn>{MONTH})[-\s](?<y>(?:19|20)?\d{{2}})(?![\w-])", _F)
_MONTH_YEAR = regex.compile(rf"(?<![\w-])(?<mn>{MONTH})-(?<y>(?:19|20)?\d{{2}})(?![\w-])", _F)
"""Dates as spreadsheets write them: `31-Dec-19`, `31 Dec 19`, `Dec-19` (a month)."""


_QTR = regex.compile(r"\bqtr\b\.?", _F)
_QUARTER_NUMBER = regex.compile(r"\bquarter\s+([1-4])\b(?![.,]?\d)", _F)
_YEAR_THEN_QUARTER = regex.compile(
    rf"(?<![\w-])(?<!fiscal\s)(?<!fiscal\syear\s)(?<y>(?:19|20)\d{{2}})\s+(?<o>{_ORDINAL})"
    r"\s+quarter\b", _F)
"""A quarter a header names after its year (`2019 Fourth Quarter`); not a fiscal one
(`Fiscal 2019 Third Quarter`, read by `_HEADER_QUARTER`)."""


def _split_year(header: str) -> int | None:
    """The year a header naming one fiscal year over two calendar years (`2018/2019`,
    `2018/19`) ends in; None for any other header. Its months are not told, so it is
    a fiscal year asked by name, not a span of dates."""
    text = _MARKS.sub("", _normal(header))
    found = list(_SPLIT_YEAR.finditer(text))
    if len(found) != 1 or COMPARE.search(text) or _QUALIFIERS.search(text) or regex.search(
            r"(?<!\d)(?:19|20)\d{2}(?!\d)", text[:found[0].start()] + text[found[0].end():]):
        return None
    first, second = int(found[0][1]), int(found[0][2][-2:])
    return first + 1 if (first + 1) % 100 == second else None


def _year_before(day: date) -> date:
    """The day after the same day a year earlier: a year ending on `day` starts on it."""
    try:
        return date(day.year - 1, day.month, day.day) + timedelta(days=1)
    except ValueError:  # 29 February
        return date(day.year - 1, 3, 1)


def _quarter_like(span: DateRange) -> bool:
    """Whether a span with no date named is a quarter or half a header names itself
    ("Q3 2019", "Third Quarter 2019", "H1 2019")."""
    return span[0].year == span[1].year and _months(span) in (3, 6)


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
    spans = [scope_of(c.period) for c in table.columns]
    if named := _header_quarters(table, period):
        found = named
    else:
        wanted = _request(period, spans)
        if wanted is None:
            return []
        company_named = any(fiscal_named(c.header) for c in table.columns) or fiscal_named(
            table.title)
        dated = spans + _titled_days(table, spans)
        found = [i for i, span in enumerate(spans)
                 if span and _names(wanted, span, dated, company_named)
                 or not span and _split_year_names(wanted, table.columns[i].header)]
        if not found and wanted[0] == "date":
            found = _dated_by_title(table, wanted[1], spans)
    found = _picked_by_words(table, found, period)
    if kind is not None:
        found = [i for i in found if _column_kind(table, i) in _COMPATIBLE.get(kind, {kind})]
    return found


_AND_YEARS = regex.compile(r"\G(?:\s*(?:,|and|&)\s*(?<y>(?:19|20)\d{2})(?!\d))+", _F)
"""The years a title adds to a date ("December 31, 2019 and 2018")."""


def _titled_days(table: Table, spans: list[DateRange | None]) -> list[DateRange]:
    """The days in other years that the table's title or lead-in gives its one balance
    date ("… as of December 31, 2019 and 2018" over columns all dated December 31, 2019,
    the year before in a table of its own): with them its date is a year end, as the
    dates of a table showing both are; none when the columns have other dates or spans."""
    days = {s[0] for s in spans if s}
    if len(days) != 1 or any(s and s[0] != s[1] for s in spans):
        return []
    day = next(iter(days))
    return [(d, d) for d in sorted(_days_said(table, other_years=True))
            if (d.month, d.day) == (day.month, day.day) and d != day]


def _days_said(table: Table, other_years: bool = False) -> set[date]:
    """The days the table's title or lead-in names; with `other_years`, also a date's day
    in the years written after it ("December 31, 2019 and 2018")."""
    said = " ".join(filter(None, (table.title, table.lead_in)))
    found: set[date] = set()
    for m in _DATE.finditer(said):
        if (first := _day(m)) is None:
            continue
        found.add(first)
        if other_years and (more := _AND_YEARS.match(said, m.end())):
            found |= {d for y in more.captures("y") if (d := _same_day(first, int(y)))}
    return found


def _same_day(day: date, year: int) -> date | None:
    try:
        return day.replace(year=year)
    except ValueError:
        return None  # February 29 in a year without it


def _dated_by_title(table: Table, day: date, spans: list[DateRange | None]) -> list[int]:
    """The bare year column of `day`'s year when the table's title or lead-in dates its
    columns on that day ("… as of September 26, 2020 and September 28, 2019" over "2020"
    and "2019": each year's balance on its own day, which the headers leave out); none
    otherwise."""
    if day not in _days_said(table):
        return []
    year = (date(day.year, 1, 1), date(day.year, 12, 31))
    found = [i for i, span in enumerate(spans) if span == year]
    return found if len(found) == 1 else []


def _picked_by_words(table: Table, found: list[int], period: str) -> list[int]:
    """Of a period's columns, those whose headers hold the request's other words
    ("December 31, 2019 Fair Value" of "Carrying Amount" and "Fair Value" under
    "December 31, 2019"); all of them when the words pick none."""
    asked = {stem(w) for w in words(_normal(period)) if not _PERIOD_WORD.fullmatch(w)}
    if len(found) < 2 or not asked:
        return found
    return [i for i in found if asked <= stems(table.columns[i].header)] or found


def _split_year_names(wanted: Request, header: str) -> bool:
    """Whether a fiscal year asked by name ("FY2019"), or as a question writes a year
    over two (`2018/2019` is read as 2018-07-01..2019-06-30), is the one a header names
    over two calendar years."""
    end = _split_year(header)
    if end is None:
        return False
    kind, value = wanted
    return kind == "fiscal-year" and value == end or kind == "span" and value == (
        date(end - 1, 7, 1), date(end, 6, 30))


def _header_quarters(table: Table, period: str) -> list[int]:
    """The columns whose headers name the fiscal quarter asked (`Fiscal 2019 Third
    Quarter` for "Q3 FY2019", or for "Q3" in a table whose newest such year is 2019):
    the company's own quarter, which no dates place."""
    named = [(i, _fiscal_quarter_named(c.header) or _ordinal_year(c.header))
             for i, c in enumerate(table.columns) if not COMPARE.search(c.header)]
    if (quarter := bare_quarter(period)) is not None:  # "Q3": the newest year's
        years = [q[0] for _, q in named if q is not None]
        asked = (max(years), quarter) if years else None
    else:
        asked = _fiscal_quarter_named(period)
    if asked is None:
        return []
    return [i for i, q in named if q == asked]


_ORDINAL_YEAR = regex.compile(
    rf"^\s*(?<o>{_ORDINAL})(?:\s+quarter)?\s*{MARK}?\s+"
    rf"(?:fiscal\s+)?(?<y>(?:19|20)\d{{2}})\s*{MARK}?\s*$", _F)
"""A header that is a quarter's ordinal over its year (`Fourth 2019`, a filing's
quarterly results): the company's own quarter of that fiscal year."""


def _ordinal_year(header: str) -> tuple[int, int] | None:
    """(year, quarter) of a header `_ORDINAL_YEAR` reads, else None."""
    m = _ORDINAL_YEAR.match(" ".join((header or "").split()))
    return (int(m["y"]), QUARTER_ORDINALS[m["o"].lower()]) if m else None


def _fiscal_quarter_named(text: str) -> tuple[int, int] | None:
    """(year, quarter) of the one fiscal quarter `text` names, either order; None when
    it names none or two."""
    text = " ".join((text or "").split())
    named = set()
    for m in [*_FISCAL_QUARTER.finditer(text), *_HEADER_QUARTER.finditer(text)]:
        quarter = m.groupdict().get("q")
        named.add((int(m["y"]) if len(m["y"]) == 4 else 2000 + int(m["y"]),
                   int(quarter) if quarter else QUARTER_ORDINALS[m["o"].lower()]))
    return named.pop() if len(named) == 1 else None


_COMPATIBLE = {"money": {"money", "number", None}, "number": {"money", "number", None},
               "percent": {"percent"}}


def _column_kind(table: Table, index: int) -> str | None:
    kinds = [c.quantity.kind for r in table.rows if (c := r.cells[index]) and c.quantity
             and not (c.quantity.amount == 0 and c.text.strip("—–-− ") == "")]
    counts = Counter(kinds).most_common(2)
    if not counts or len(counts) == 2 and counts[0][1] == counts[1][1]:
        return None  # as many cells of two kinds: the column's kind is not told
    return counts[0][0]


def column_periods(table: Table) -> dict[str, DateRange]:
    """The periods `table`'s columns name, each once with its span, earliest first."""
    spans = {}
    for column in table.columns:
        if column.period and column.period not in spans and (span := scope_of(column.period)):
            spans[column.period] = span
    return dict(sorted(spans.items(), key=lambda p: p[1]))


def one_length(spans) -> bool:
    """Whether the spans (`DateRange`s) are all as many months long (27-day units: a
    52/53-week year is a year), not a quarter beside a year."""
    return len({(last - first).days // 27 for first, last in spans}) <= 1


def scope_of(period: str | None) -> DateRange | None:
    """The dates a column's period spans; None when it has none or it is not one."""
    if not period:
        return None
    try:
        return parse_scope(period)
    except InputError:
        return None


# A request: ("year", Y) | ("fiscal-year", Y) (named `FY2019`, `fiscal 2019`) | ("date", d)
# | ("span", (a, b))
Request = tuple[str, object]


def _request(text: str, spans: list[DateRange | None]) -> Request | None:
    text = " ".join((text or "").split())
    if not text:
        return None
    if m := _FISCAL_QUARTER.search(text):
        q = int(m["q"]) if m["q"] else QUARTER_ORDINALS[m["o"].lower()]
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
            return _year(text, span[0].year)
        return "span", span
    found = period_of(text)
    if found is None:
        return None
    span = parse_scope(found)
    if span[0] == span[1]:
        return "date", span[0]
    if span == (date(span[0].year, 1, 1), date(span[0].year, 12, 31)):
        return _year(text, span[0].year)
    return "span", span


def _year(text: str, year: int) -> Request:
    return ("fiscal-year" if _FISCAL.search(_normal(text)) else "year"), year


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


def _quarterly(day: date, spans: list[DateRange | None]) -> bool:
    """Whether a column dated `day` is one of quarters: another column is dated the end
    of the quarter before or after it (a balance sheet's "September 30, 2019 | December
    31, 2018" is not)."""
    return any(s and s[0] == s[1] and s[0] != day and 80 <= abs((s[0] - day).days) <= 100
               for s in spans)


def _months(span: DateRange) -> int:
    """The whole months a span covers, to the nearest (13 weeks: 3; 52 weeks: 12)."""
    return round(((span[1] - span[0]).days + 1) / 30.44)


def _names(wanted: Request, span: DateRange, spans: list[DateRange | None],
           company_named: bool = False) -> bool:
    kind, value = wanted
    instant = span[0] == span[1]
    if kind == "date":
        return _near(span[1], value, 0) if instant else span[1] == value
    if kind == "span":
        a, b = value
        if instant:
            # a month asked ("as at June 2019") of a balance dated at its end ("30 June
            # 2019", a 52-week year's "June 29, 2019")
            if _months(value) == 3 and _near(span[0], b) and _quarterly(span[0], spans):
                # a quarter asked of a table of quarters dated by their last days
                # ("Sept. 30, 2019 | June 30, 2019 | …"): the one ending with it
                return True
            return _months(value) == 1 and a <= span[0] <= b and _near(span[0], b)
        # a fiscal year asked by its end ("the fiscal year ended September 25, 2021") is
        # also the bare year a filing's own tables name it by ("2021"): the year it ends
        # in (a year ending in January is named either way, so by none)
        if _near(span[0], a) and _near(span[1], b):
            return True
        calendar_year = span == (date(span[0].year, 1, 1), date(span[0].year, 12, 31))
        return calendar_year and _months(value) == 12 and _year_named(b) == span[0].year
    year = value
    # a bare year names a year ending in January by the calendar year it ends in, unless
    # the table names its years itself ("Fiscal 2019" may be the year ended February 1,
    # 2020) or shows the year ending the January after, which readers call by that year
    # too (TAT-QA asks "2019" of the year ended January 31, 2020 beside February 1, 2019)
    calendar = kind == "year" and not company_named and not any(
        s and s[1].year == year + 1 and _january_end(s[1]) for s in spans)
    if instant:
        return _year_named(span[0], calendar) == year and _year_ends(spans)
    if span == (date(year, 1, 1), date(year, 12, 31)):
        return True
    return _months(span) == 12 and _year_named(span[1], calendar) == year


def _year_named(end: date, calendar: bool = False) -> int | None:
    """The fiscal year a year ending on `end` is named by: the year it ends in. A year
    ending in January or the first week of February is named either way by companies
    (the year ended January 31, 2020 is "fiscal 2020" to some, "fiscal 2019" to others):
    by the calendar year it ends in when `calendar` (a bare year asked of the table's
    newest such year: "2020" for the year ended January 3, 2020, as TAT-QA's readers
    write it), else by none. January 1 names none: a balance on it opens the year (as
    restated), and a 52/53-week year ending on it is all but the year before."""
    if (end.month, end.day) == (1, 1):
        return None
    if _january_end(end):
        return end.year if calendar else None
    return end.year


def _january_end(end: date) -> bool:
    """A year ending in January or the first week of February: named either way."""
    return end.month == 1 or (end.month == 2 and end.day <= 7)


def _year_ends(spans: list[DateRange | None]) -> bool:
    """Whether the table's dates are year ends: the ends of its own fiscal-year columns
    or of the years before them ("2019 | December 31, 2018" of a calendar-year company),
    or two or more in different years a year apart (to within a week: 52/53-week years
    end on different days). An opening balance on January 1 beside them is set aside."""
    instants = sorted({s[0] for s in spans if s and s[0] == s[1]
                       and (s[0].month, s[0].day) != (1, 1)})
    year_ends = {s[1] for s in spans if s and s[0] != s[1] and _months(s) == 12}
    if instants and all(d in year_ends or any(_years_apart(d, e) for e in year_ends)
                        for d in instants):
        return True  # a fiscal year's end, or the end of one the table's years before it
    return len(instants) >= 2 and all(_years_apart(a, b) for a, b in zip(instants, instants[1:]))


def _years_apart(a: date, b: date) -> bool:
    """Whether `b` is a whole number of years after `a`, to within a week and a day
    (a 53-week year ends a week after the 52-week year before it)."""
    days = (b - a).days
    years = round(days / 365.25)
    return years >= 1 and abs(days - years * 365.25) <= 8

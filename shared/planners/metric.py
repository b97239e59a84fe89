"""Reading a figure question as arithmetic over table cells, for the heuristic planner:
consumes a question, produces a `Metric` — the cells it needs (a line item and a period
each), the COMPUTE expression over them and the unit asked — or a `Refusal` saying why
the question is not read (the planner then abstains rather than guess).

Forms read (periods are the ones the question names; a change is the later period minus
the earlier whichever order the question names them, a decrease the earlier minus the
later, the difference between two periods their distance, always positive — "the
difference in X between 2018 and 2019"; "the difference between X in 2018 and 2019",
which TAT-QA answers both as a distance and as a change, is not read):
- a line item in a period: "What was the net sales in Americas in 2018?", "What is the
  FY2018 capital expenditure amount (in USD millions) for 3M?";
- the change, increase, decrease or difference in X from P1 to P2, and its percentage;
  a percentage change in X in one year or none is left `open`: the table planner reads
  it from that year and the one before, or from a table of two periods; a change (or
  increase) in X in no period or one year is the line item "change in X", which, when no
  row states it, the table planner reads from a table of two periods, or from that year
  and the one before (`change_over_periods`); "how much did X grow in 2022" is its change;
- the average of X for P1 and P2 (or "2017-2019", "from 2017 to 2019": every year); the
  average quarterly X in a year (its four quarters);
- quarters named without their own year ("In 2019, … between the third quarter and fourth
  quarter"): of the one year the question names (quarters.py);
- the total or sum of X in P1 and P2; a total or average over years the question counts
  without naming them ("across all 3 years") is left `open`, to the table's periods;
- X as a percentage of Y in P; the ratio of X to Y in P; the difference between X and Y
  (between the low and high X: the high less the low, a range's spread);
  the sum of X and Y; "the total (or average) X of A and B", "A and B as a percentage
  of Y" where no row states "A and B": the rows of A and B added (`by_parts`); "the
  difference between the domestic and international discount rates", "domestic" naming
  no row: "domestic discount rates" (`by_shared_words`);
- a metric the question defines: "… is defined as: FY2019 revenue / (average PP&E between
  FY2018 and FY2019)": each operand a line item with its own period, or the question's.
The unit asked: "in USD millions", "in terms of $M" (the answer's scale), "as a percentage", "rounded to
two decimal places". Percentages and ratios are rounded to two places unless the
question says otherwise.
"""

from __future__ import annotations

from calendar import month_name
from dataclasses import dataclass, field, replace
from datetime import date

import regex

from shared.search.dates import DateRange, format_scope, parse_scope
from shared.search.periods import NUMERIC_DATE, find_dates, find_periods, iso_date, part_of

from shared.tables.periods import MONTH
from shared.tools.line_items import items_named

from .quarters import quarter_span, quarters_named
from .question import ABBREVIATED, asked_part, falls_due

SCALE_ASKED = {"thousand": 3, "thousands": 3, "million": 6, "millions": 6, "billion": 9,
               "billions": 9, "k": 3, "m": 6, "mn": 6, "mm": 6, "b": 9, "bn": 9}
"""Scales a question asks its answer in: "in millions", "in terms of $M", "(in $bn)"."""
PLACES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "no": 0}
DEFAULT_PLACES = 2
"""Decimal places of a percentage or ratio the question does not round itself."""


@dataclass(frozen=True)
class When:
    """A period as a table's column names it."""

    text: str
    """As EXTRACT's `period` takes it: `2019`, `FY2019`, `2019-12-31`, `2019-Q3`."""
    span: DateRange
    fiscal: bool = False
    """Named as a fiscal period (`FY2019`, `fiscal 2019`, `Q2 of FY2023`)."""


@dataclass(frozen=True)
class Term:
    """One cell: a line item as the question writes it, in one period."""

    item: str
    when: When | None
    counted: bool = False
    """The question asks how many ("How many shares were granted …"): a count, never an
    amount of money or a percentage."""


@dataclass(frozen=True)
class Metric:
    terms: tuple[Term, ...]
    expression: str | None
    """COMPUTE over `$T1`… (the terms in order); None: the one term is the answer."""
    kind: str
    """`value`, `change`, `decrease`, `percent_change`, `average`, `sum`, `share`,
    `ratio`, `difference`, `defined`, or `latest` (a value of the most recent year, which
    the table planner finds: `open`)."""
    percent: bool = False
    """The result is a percentage (the expression multiplies by 100)."""
    scale: int | None = None
    """The scale the question asks the answer in (`in USD millions`: 6)."""
    places: int | None = None
    """Decimal places the answer is rounded to."""
    name: str = ""
    """What the question asks for, in its words ("percentage change in revenue")."""
    open: bool = False
    """A percentage change asked of one period or none ("in 2019", "the percentage change
    in total emissions"), or a total or average over years the question does not name
    ("across all 3 years"), or a value of "the most recent year": its one term names the
    item (and the later period); the periods are the table's, which the table planner
    reads (table_plan.py)."""
    periods: int | None = None
    """How many periods the question says it is over ("across the 3 year period": 3),
    when it says so in words rather than naming them."""


@dataclass(frozen=True)
class Refusal:
    why: str


def percent_change_of(places: int) -> str:
    """COMPUTE's percentage change from `$T1` to `$T2`, rounded to `places`."""
    return f"round(($T2 - $T1) / $T1 * 100, {places})"


def year_before(when: When) -> When | None:
    """The year before `when` when it is a whole year ("2019", "FY2019"): "the 2019
    average X" is the mean of X at the 2019 and 2018 columns, as a year's average balance
    is of its opening and closing ones. None for any other period."""
    first, last = when.span
    if not regex.fullmatch(r"(?:FY\s?)?\d{4}", when.text, regex.I) or (first.month, first.day,
            last.month, last.day) != (1, 1, 12, 31) or first.year != last.year:
        return None
    before = str(first.year - 1)
    return When(regex.sub(r"\d{4}", before, when.text), parse_scope(before), when.fiscal)


def change_over_periods(metric: Metric) -> regex.Match | None:
    """"The change in X" asked of no period or of one whole year, read as a line item: the
    match of CHANGE_OF (`item`: X), as X may change from a table's earlier period to its
    later (TAT-QA's "What was the change in closing cash" of a table of 2019 and 2018), or
    from the year before to the year asked ("the increase in Palantir's total revenue in
    2022": from 2021)."""
    if metric.kind != "value" or len(metric.terms) != 1:
        return None
    when = metric.terms[0].when
    if when is not None and year_before(when) is None:
        return None
    return CHANGE_OF.match(metric.terms[0].item)


CHANGE_OF = regex.compile(r"^(?:the\s+)?(?P<word>change|increase|decrease)\s+in\s+"
                          r"(?:the\s+)?(?P<item>\S.*)$", regex.I)
"""A line item asked as its change ("the change in the amount for Ireland"), or as its
decrease (`word`: the earlier figure less the later)."""


AVERAGE_OF = regex.compile(r"^(?:the\s+)?(?:average|mean)\s+(?:(?:annual|yearly)\s+)?(?:of\s+)?"
                           r"(?:the\s+)?(?P<item>\S.*)$", regex.I)
"""A line item asked as its average ("the average of Other revenues")."""


def average_over_periods(metric: Metric) -> regex.Match | None:
    """"The average X", read as a line item: the match of AVERAGE_OF (`item`: X), as X
    may be averaged over periods (TAT-QA's "What is the average Cost of sales" of a
    three-year table is the three years' mean; "the 2019 average X" of 2019 and 2018)."""
    if metric.kind != "value" or len(metric.terms) != 1:
        return None
    return AVERAGE_OF.match(metric.terms[0].item)


_YEAR_RANGE = regex.compile(r"\b((?:19|20)\d{2})\s*[-–]\s*((?:19|20)\d{2})\b")
_UNIT = regex.compile(
    r"\(?\s*\b(?:in|expressed\s+in|stated\s+in|in\s+terms\s+of)\s+"
    r"(?:(?:usd|us\$|\$|dollars?|us\s+dollars?)\s*)?"
    r"(?:(?P<scale>thousands?|millions?|billions?)|(?<=\$\s?)(?P<scale>[kmb]n?|mm)\b)"
    r"(?:\s+of\s+(?:us\s+)?dollars)?\s*\)?", regex.I)
_ROUND = regex.compile(r"\b(?:round(?:ed)?|rounding)\s+(?:\w+\s+){0,3}?to\s+(?:the\s+)?(?:nearest\s+)?"
                       r"(?P<n>\d|zero|one|two|three|four|no)\s+decimal(?:\s+places?|s)?", regex.I)
_PLACEHOLDER = regex.compile(r"@(\d+)")
_SENTENCE = regex.compile(rf"(?<=[.?!]){ABBREVIATED}\s+(?=[A-Z])")
_BY_WHAT_PERCENT = regex.compile(
    r"\b(?:by\s+)?what\s+(?:percentage|percent|%)\s+(?:did|does|has|have|was|were|is)\s+(?:the\s+)?"
    r"(?P<x>.+?)\s+(?:increase|grow|grew|rise|rose|decrease|decline|fall|fell|drop|change)(?:d|s)?"
    r"(?:\s+by)?\b", regex.I)
_HOW_MUCH_GREW = regex.compile(
    r"^\s*(?:by\s+)?how\s+much\s+(?:did|does|do|has|have)\s+(?:the\s+)?(?P<x>\w.*?)\s+"
    r"(?:grow|grown|increase|increased|rise|risen|change|changed|(?P<down>fall|fallen|"
    r"decrease|decreased|decline|declined|drop|dropped))(?:\s+by)?\b", regex.I)
"""How much a line item grew ("How much did Palantir's revenue grow in 2022?"): its
change, the later figure less the earlier (a fall is negative); how much it fell: its
decrease, the earlier figure less the later, as a decrease between two years named is
(a rise is negative); "by what percentage" is the percentage change
(`_BY_WHAT_PERCENT`)."""
_HOW_MUCH_MORE = regex.compile(
    r"^\s*(?:by\s+)?how\s+much\s+(?P<dir>higher|more|greater|larger|bigger|lower|less|"
    r"smaller)\s+(?:was|were|is|are)\s+(?:the\s+)?(?P<x>\w.*?)\s+(?:{IN}\s+(?:the\s+)?)?@(?P<a>\d+)"
    r"\s*,?\s+than\s+(?:{IN}\s+(?:the\s+)?)?@(?P<b>\d+)".replace(
        "{IN}", r"(?:in|for|during|as\s+(?:of|at)|at)"), regex.I)
"""A comparative ("How much higher were net sales in 2019 than in 2018"): the one period's
figure less the other's, the sign saying which way."""
_UP = frozenset("higher more greater larger bigger".split())
_VERSUS = regex.compile(r"@\d+\s*,?\s+(?:vs\.?|versus|compared\s+(?:to|with)|against)\s+"
                       r"(?:the\s+)?(?:(?:fiscal\s+)?years?\s+)?@\d+", regex.I)
"""Two periods set against each other: "in 2019 vs 2018", "2019 compared to 2018"."""
_SHORT_FISCAL = regex.compile(r"\bF(\d{2})\b")
"""`F19`: fiscal 2019, as some annual reports write it."""
_MONTH_DAY = rf"{MONTH}\.?\s+\d{{1,2}}"
_SHARED_YEAR = regex.compile(
    rf"\b(?P<a>{_MONTH_DAY})(?!\s*,?\s*\d)(?P<join>\s+(?:and|to|through|-|–)\s+)"
    rf"(?P<b>{_MONTH_DAY},?\s+(?P<y>(?:19|20)\d{{2}}))\b", regex.I)
"""Two days of one year, the year written once ("June 30 and December 31, 2019")."""
_SHARED_QUARTER = regex.compile(
    r"\b(?P<q>Q[1-4])\s+(?P<a>(?:19|20)\d{2})(?P<join>\s+(?:and|to|vs\.?|versus)\s+)"
    r"(?P<b>(?:19|20)\d{2})\b(?!\s*[-–]?\s*Q[1-4])", regex.I)
"""Two years of one quarter, the quarter written once ("in Q4 2019 and 2018")."""
_FISCAL_FIRST = regex.compile(r"\bfiscal\s+((?:19|20)\d{2})\s+(first|second|third|fourth)\s+quarter\b",
                              regex.I)
"""`fiscal 2019 third quarter`: the third quarter of fiscal 2019."""
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_LEAD = regex.compile(
    r"^\s*(?:(?:in|for|during|as\s+(?:of|at)|at)\s+(?:the\s+)?@\d+\s*,\s*)?(?:(?:what|how\s+much)\s+(?:is|was|were|are|did|does|has|had)\s+|by\s+how\s+much\s+"
    r"(?:did|does|has|had|was|were|is)\s+|how\s+much\s+|what\s+|(?:please\s+)?(?:give|tell|show|"
    r"find|provide|state|report|get)\s+(?:me\s+|us\s+)?)(?:the\s+)?", regex.I)
"""A question's opening: "What was the", "How much is", "Give me the", "Tell me the"."""
_HOW_MANY_HAD = regex.compile(r"^\s*how\s+many\s+(?P<x>\w[\w\s-]*?)\s+(?:did|does|do|has|had)\s+"
                           r"[^?]+?\s+(?:have|employ)\b", regex.I)
"""A count of what a company has ("How many employees did Patriot Transportation Holding
have in fiscal 2019?"): the number of them, whoever has them."""
_HOW_MANY_WERE = regex.compile(
    r"^\s*how\s+many\s+(?P<x>\w[\w\s-]*?)\s+(?:were|was|are|is|have\s+been|has\s+been|"
    r"had\s+been)\s+(?P<v>\w+ed|sold|held|paid|made|bought|built|grown|given|taken|spent|"
    r"written|outstanding|in\s+issue|on\s+issue)\b", regex.I)
"""A count of what was done or stands ("How many shares were granted in 2019", "How many
options were outstanding at …"): the number of them, the verb the line item's word
("Shares granted", "Outstanding at …")."""
_NUMBER_OF = regex.compile(r"^\s*what\s+(?:is|was|were|are)\s+the\s+(?:total\s+)?number\s+of\b",
                           regex.I)
_HOW_MUCH_HAD = regex.compile(r"^\s*how\s+much\s+(?P<x>\w[^?]*?)\s+(?:did|does|do|has|have|had)\s+"
                           r"[^?]+?\s+(?:have|hold|held|carry|earn|earned|generate|generated|"
                           r"report|reported|record|recorded|post|posted|incur|incurred)"
                           r"(?:\s+(?:outstanding|on\s+hand))?\b", regex.I)
"""An amount of something a company had, earned or reported ("How much commercial paper
did Apple have outstanding as of …", "How much cash and cash equivalents did Rocket Lab
have …", "How much revenue did Ondas generate in 2021", "How much total sales did the
company report in 2019"): the item, whoever had it."""
_HOW_MUCH_IN = regex.compile(r"^\s*how\s+much\s+(?:did|does|do|has|have|had)\s+[^?]+?\s+"
                          r"(?:earn|earned|generate|generated|make|made|report|reported|"
                          r"record|recorded)\s+in\s+(?!@\d)", regex.I)
"""An amount a company earned in a line item ("How much did Apple earn in net income for
the fiscal year ended …"): that item, whoever earned it."""
_HOW_MUCH_PAID = regex.compile(r"^\s*how\s+much(?P<cash>\s+cash)?\s+(?:did|does|do|has|have|had)\s+[^?]+?\s+"
                            r"(?:pay|paid|(?P<spend>spend|spent))\s+(?:in|on|for|as)\s+", regex.I)
"""What a company paid ("How much did Apple pay in dividends and dividend equivalents …",
"How much cash did Palantir pay for income taxes …"):
the payments of it, whoever paid them ("Payments for dividends …", "… dividends paid");
but what a company spent on a line item the domain library knows is that item ("How
much did Apple spend on research and development": its expenses; "on capital
expenditure")."""
_SPENT_ON = regex.compile(r"^(?P<thing>.+?)(?:\s+(?:in|during|for|of|over|at)\b.*|\s*@\d.*|\s*\?)?$")
"""The thing spent on, before its period ("research and development in @0?")."""
_HOW_MUCH_CASH = regex.compile(r"^\s*how\s+much\s+cash\s+(?:did|does|do|has|have|had)\s+[^?]+?\s+"
                            r"(?:(?P<made>generate|generated|provide|provided|produce|produced)"
                            r"\s+(?:from|by|in|through)|(?:use|used)\s+(?:(?P<to>to)|in|for|on))\s+"
                            r"(?:its\s+|their\s+)?", regex.I)
"""The cash a company's activities gave or took ("How much cash did Apple generate from
operating activities …": the cash generated by them; "How much cash did Apple use to
repurchase its common stock …": the cash used to repurchase common stock)."""
_DEFINED = regex.compile(r"\b(?:is\s+|are\s+)?(?:defined|calculated|computed|measured)\s+as\s*:?\s*",
                         regex.I)
_PCT_CHANGE = regex.compile(
    r"(?:\bpercent(?:age)?|%)\s*(?:change|increase|decrease|growth|decline|movement|variance)"
    r"|\bchange\s*\(\s*%\s*\)|\(\s*%\s*\)\s*change"
    r"(?:\s*/\s*\(?\s*(?:increase|decrease)\s*\)?)?|\bgrowth\s+rate\b"
    r"|\b(?:year[\s-]over[\s-]year|yoy)\s+(?:change|growth)\b", regex.I)
_INCREASE_DECREASE = regex.compile(r"\bincrease\s*/\s*\(?\s*decrease\s*\)?|\bincrease\s+or\s+"
                                   r"\(?decrease\)?", regex.I)
_VARIANCE = regex.compile(r"\bvariance\b", regex.I)
_AVERAGE = regex.compile(r"(?<!weighted[\s-])\b(?:average|mean)\b(?:\s+(?:annual|yearly)\b)?",
                         regex.I)
"""An average; "the average annual X" over years is of X itself."""
_TOTAL_CHANGE = regex.compile(r"\b(?:total|combined|sum\s+of(?:\s+the)?)\s+(?:net\s+)?"
                              r"(?:change|increase|decrease)s?\s+in\b", regex.I)
_SPAN_OF = regex.compile(r"\b(?:between|from)\s+@\d", regex.I)
_OPS = [
    ("percent_change", _PCT_CHANGE),
    ("change", regex.compile(r"\b(?:change|movement|variation|variance\s+in\s+(?:dollars|"
                             r"amount)|net\s+change)\b", regex.I)),
    ("increase", regex.compile(r"\b(?:increase|growth|rise|grow|grew|rose|increased)\b", regex.I)),
    ("decrease", regex.compile(r"\b(?:decrease|decline|fall|drop|reduction|decreased|declined|"
                               r"fell|dropped)\b", regex.I)),
    ("difference", regex.compile(r"\bdifference\b", regex.I)),
    ("average", _AVERAGE),
    ("sum", regex.compile(r"\b(?:sum|combined|total|aggregate|altogether|in\s+total)\b", regex.I)),
]
_SHARE = regex.compile(
    r"^(?:the\s+)?(?:(?:value|proportion|percentage|share)\s+of\s+(?:the\s+)?)?(?P<x>.+?)\s+"
    r"(?:as\s+a|as\s+the|expressed\s+as\s+a)\s+"
    r"(?P<unit>percentage|percent|proportion|%|share|ratio|fraction)\s+of\s+(?P<y>.+)$"
    r"|^(?:the\s+)?(?P<unit>percentage|proportion|share)(?:\s+of)?(?:\s+constitution)?(?:\s+of)?\s+"
    r"(?P<x>.+?)\s+(?:in|out\s+of|among|within)\s+(?P<y>(?:the\s+)?total\b.+)$"
    r"|^(?:the\s+)?(?P<unit>percentage|proportion)\s+constitution\s+of\s+(?P<x>.+?)\s+in\s+"
    r"(?P<y>.+)$"
    r"|^(?:the\s+)?(?P<unit>proportion)\s+of\s+(?P<x>.+?)\s+over\s+(?P<y>.+)$"
    r"|^(?:the\s+)?(?P<unit>percentage|proportion|share|fraction)\s+of\s+(?P<y>.+?)\s+"
    r"(?:is|are|was|were)\s+(?:made\s+up|comprised|composed)\s+of\s+(?P<x>.+)$"
    # asked with a verb, the period after it: "what share of total net sales came from
    # Ceramic Components in 2019", "what proportion of revenue did Apple account for in 2019"
    r"|^(?:the\s+)?(?P<unit>percentage|percent|proportion|share|fraction|portion)\s+of\s+"
    r"(?:the\s+)?(?P<y>.+?)\s+(?:(?:came|comes|come|was|were|is|are)\s+(?:from|generated\s+by|"
    r"attributable\s+to)\s+(?P<x>.+?)|(?:did|does|do)\s+(?P<x>.+?)\s+(?:account\s+for|represent|"
    r"make\s+up|contribute|constitute|comprise|generate))(?P<tail>(?:\s+(?:in|for|during|as\s+of|"
    r"at)\s+(?:the\s+)?@\d+)?)\s*$", regex.I)
_SUM_OF = regex.compile(r"^(?:the\s+)?sum\s+of\s+(?!all\b)(?P<x>.+?)\s+and\s+(?P<y>.+)$", regex.I)
"""The sum of two line items ("the sum of net bookings and in-game net bookings")."""
_RATIO = regex.compile(r"^(?:the\s+)?ratio\s+(?:of|between)\s+(?P<x>.+?)\s+(?:to|over|against)\s+"
                       r"(?P<y>.+)$", regex.I)
_BETWEEN = regex.compile(r"^(?:the\s+)?difference\s+between\s+(?P<x>.+?)\s+and\s+(?P<y>.+)$", regex.I)
_BETWEEN_IN = regex.compile(r"^(?:the\s+)?difference\s+in\s+(?:the\s+)?(?P<m>.+?)\s+between\s+"
                            r"(?:the\s+)?(?P<x>.+?)\s+and\s+(?:the\s+)?(?P<y>.+)$", regex.I)
""""the difference in net sales between APAC and EMEA": APAC's net sales less EMEA's."""
_END = {"high": "high", "highest": "high", "max": "high", "maximum": "high",
        "low": "low", "lowest": "low", "min": "low", "minimum": "low"}
_SPREAD = regex.compile(
    rf"^(?:the\s+)?difference\s+(?:between|in)\s+(?:the\s+)?(?P<a>{'|'.join(_END)})\s+(?:and|&)\s+"
    rf"(?:the\s+)?(?P<b>{'|'.join(_END)})\s+(?P<rest>.+)$", regex.I)
"""The difference between the two ends of a range ("the low and high price")."""
_QUARTERLY = regex.compile(r"\b(?:average|mean)\s+quarterly\b", regex.I)
_UNCLEAR = regex.compile(r"\bpercent(?:age)?\s+difference\b|\bnet\s+difference\b|\bCAGR\b|"
                         r"\bcompound(?:ed)?\s+(?:annual\s+)?growth\b", regex.I)
"""Arithmetic named in words that mean different formulas to different readers."""
_IN_PERCENT = regex.compile(r"\(\s*in\s+percent(?:age)?\s*\)|\bin\s+percent(?:age)?\b(?!\s*of\b)"
                          r"|,\s*in\s+percent(?:age)?\s*,", regex.I)
"""The answer asked as a percentage ("(in percentage)"); not "the change in percentage
of sales …", whose item is the percentage."""
_PERIOD_PHRASE = regex.compile(
    r"(?:,?\s*\b(?:in|for|from|between|during|over|across|of|at|as\s+(?:of|at)|on|by|to|and|through|"
    r"until|till|versus|vs\.?|compared\s+(?:to|with)|the\s+periods?|the|both|years?|fiscal(?:\s+years?)?|"
    r"fys?|ended|ending|year[\s-]end|the\s+years?\s+ended|quarters?\s+end(?:ed|ing))\s*)*,?\s*"
    r"(?:@\d+)"
    r"(?:\s*(?:,|and|&|to|-|–|through|versus|vs\.?)\s*@\d+)*(?:\s+(?:year[\s-]end|fiscal\s+year))?",
    regex.I)
_SPAN_WORDS = regex.compile(r"\b(?:for|over|in|during|across)\s+(?:the\s+|all\s+|both\s+)?(?:\d|two|three|four|"
                           r"five)?[\s-]*(?:years?|fys?|periods?)(?:\s+period)?\b", regex.I)
"""How a question says "over these years" ("for the 3 years", "over the three year period")."""
_OVER_YEARS = regex.compile(r"\b(?:for|over|in|during|across)\s+(?:the\s+|all\s+(?:the\s+)?|both\s+)?"
                            r"(?:(?:\d|two|three|four|five)[\s-]*(?:years?|fys?)(?:\s+period)?"
                            r"|years|fys|periods)\b", regex.I)
"""A span of years said rather than named ("across all 3 years", "in both years"), not
one year ("for year 2019")."""
_FILLER_START = regex.compile(r"^(?:the\s+)?(?:(?:amount|value|level|figure|balance|number)\s+of\s+"
                              r"|company'?s\s+|group'?s\s+|firm'?s\s+)+(?:the\s+)?", regex.I)
_TOTAL_OF_FILLER = regex.compile(r"^(?:the\s+)?total\s+(?:amount|value|level|figure|balance|number)"
                                 r"\s+of\b", regex.I)
"""A total asked through a filler ("the total value of X"): its "total" adds up, the
filler goes (`_FILLER_START`)."""
_FILLER_END = regex.compile(r"(?<!\bas)\s+(?:recorded|reported|figures?)"
                            r"(?=(?:\s+(?:by|of|in|for|at|during))?\s*$)", regex.I)
"""A verb or noun after the item that names no line item ("the revenue reported for
2019", "the revenue figure"); "as reported" names a column of restated tables, and
"recognized" may name a row ("deferred revenue recognized" is not the balance)."""
_OP_PHRASE = regex.compile(r"^(?:in|of|for|on|to|by|between)\s+(?:the\s+)?", regex.I)
_SUM_AFTER = regex.compile(r"\s+(?:altogether|in\s+total|combined(?=\s*$))\b", regex.I)
"""How a question says "added up" after the item ("gross profit altogether", "… in 2019
and 2018 combined"; not the "combined" of a "combined ratio")."""
_COMBINED = regex.compile(r"\s+combined\s*$", regex.I)
"""The last word that adds up what comes before it ("X in 2019 and 2018 combined"): a
"total" before the item is then the label's own. "In total" and "altogether" keep their
reading: "the total gross profit altogether" is the sum of gross profit."""
_ENDING = regex.compile(r"[\s?.!,;:]+$")
_SOURCE = regex.compile(r",?\s*\b(?:according\s+to|(?:as\s+)?(?:reported|stated|shown|disclosed|"
                        r"presented)\s+(?:in|by)\s+(?:the|its|their|(?-i:[A-Z])\w*)\b|based\s+on\s+(?:the|its)\s+"
                        r"(?:annual|quarterly)\s+report)[^?]*", regex.I)
"""Where the question says its answer is to come from: the document, not the item."""


@dataclass
class _Masked:
    text: str
    whens: list[When] = field(default_factory=list)


def _when(text: str, span: DateRange) -> When:
    fiscal = bool(regex.search(r"\bFY|\bfiscal|\bfinancial\s+year", text, regex.I))
    first, last = span
    if first.year == last.year and (first.month, first.day, last.month, last.day) == (1, 1, 12, 31):
        return When(f"FY{first.year}" if fiscal else str(first.year), span, fiscal)
    if fiscal and (part := part_of(span)) and part[0] == "quarter":
        # the quarter of the fiscal year, which only the table's own years place
        return When(f"Q{part[1]} FY{first.year}", span, fiscal)
    return When(format_scope(span), span, fiscal)


def _quarter(quarter: int, year: int | None, fiscal: bool = False) -> When:
    """A quarter the question names without its own year: of the year it takes (fiscal
    when that year is), or of none (`Q3`: EXTRACT reads it as the newest year's)."""
    span = quarter_span(quarter, year)
    if year is None:
        return When(f"Q{quarter}", span)
    return When(f"Q{quarter} FY{year}" if fiscal else f"{year}-Q{quarter}", span, fiscal)


def mask(text: str) -> _Masked:
    """`text` with every period and date it names replaced by `@n`, `n` indexing
    `whens`; a year range (`2017-2019`) becomes its first and last year."""
    text = _YEAR_RANGE.sub(r"\1 to \2", text)
    text = _SHARED_YEAR.sub(r"\g<a>, \g<y>\g<join>\g<b>", text)
    text = _SHARED_QUARTER.sub(r"\g<q> \g<a>\g<join>\g<q> \g<b>", text)
    text = _SHORT_FISCAL.sub(r"FY\1", text)
    text = _FISCAL_FIRST.sub(lambda m: f"Q{ORDINALS[m[2].lower()]} FY{m[1]}", text)
    spans = [(m.start, m.end, _when(m.text, m.period)) for m in find_periods(text)]
    taken = [(a, b) for a, b, _ in spans]
    for day, a, b in find_dates(text):
        if not any(a < y and x < b for x, y in taken):
            spans.append((a, b, When(day.isoformat(), (day, day))))
    spans = [s for s in spans if not falls_due(text, s[0])]
    # "between the third and fourth quarter", "In 2019, … the third quarter"
    quarters, dropped = quarters_named(text, [(a, b, w.span, w.fiscal) for a, b, w in spans])
    spans = [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in dropped)]
    spans += [(q.start, q.end, _quarter(q.quarter, q.year, q.fiscal)) for q in quarters]
    out, last, whens = [], 0, []
    for a, b, when in sorted(spans + [(a, b, None) for a, b in dropped], key=lambda s: s[0]):
        out.append(text[last:a])
        if when is not None:
            out.append(f"@{len(whens)}")
            whens.append(when)
        last = b
    out.append(text[last:])
    return _Masked("".join(out), whens)


def _without_source(text: str) -> str:
    """`text` (masked) without the clause that says where its answer is to come from; a
    period that clause names ("… as reported in its Form 10-K for fiscal 2019") stays, at
    the end, when the rest of the question names none."""
    found = _SOURCE.search(text)
    if found is None:
        return text
    rest = text[:found.start()] + text[found.end():]
    if (kept := _PLACEHOLDER.findall(found.group())) and not _PLACEHOLDER.search(rest):
        rest = f"{_ENDING.sub('', rest)} {' '.join(f'@{k}' for k in kept)}"
    return rest


def read_metric(question: str) -> Metric | Refusal:
    """What `question` asks for as cells and arithmetic; a Refusal when it is not one
    of the forms this reader knows."""
    text = asked_part(question)
    definition = next((p for p in _SENTENCE.split(question) if _DEFINED.search(p)), None)
    if definition and not _DEFINED.search(text):  # "… the FY2019 current ratio? It is defined as: …"
        text = f"{text} {definition}"
    scale = places = None
    if m := _UNIT.search(text):
        scale = SCALE_ASKED[m["scale"].lower()]
        text = text[:m.start()] + " " + text[m.end():]
    if unclear := next((m for m in NUMERIC_DATE.finditer(text) if iso_date(m) == m.group()
                        and 0 < int(m["a"]) <= 12 and 0 < int(m["b"]) <= 12), None):
        a, b = int(unclear["a"]), int(unclear["b"])
        return Refusal(f"it dates {unclear.group()!r} in figures whose order of day and month "
                       f"does not show ({month_name[a]} {b} or {a} {month_name[b]}); write "
                       "the month's name")
    if m := _UNCLEAR.search(text):
        return Refusal(f"it asks for a {m.group().lower()}, which can be computed more than "
                       "one way")
    if m := _ROUND.search(question):
        places = int(m["n"]) if m["n"].isdigit() else PLACES[m["n"].lower()]
    percent = bool(_IN_PERCENT.search(text))
    text = _IN_PERCENT.sub(" ", text)
    masked = mask(text)
    body = _ENDING.sub("", _without_source(masked.text))
    counted = bool(_NUMBER_OF.match(body))
    if m := _HOW_MANY_HAD.match(body):  # "how many employees did X have": their number
        body, counted = f"what was the number of {m['x']} {body[m.end():]}", True
    elif m := _HOW_MANY_WERE.match(body):
        body, counted = f"what was the number of {m['x']} {m['v']} {body[m.end():]}", True
    if (m := _HOW_MUCH_MORE.match(body)) and \
            (a := masked.whens[int(m["a"])].span) != (b := masked.whens[int(m["b"])].span):
        # higher in the later period, or lower in the earlier: the later less the earlier
        word = "change" if (m["dir"].lower() in _UP) == (a > b) else "decrease"
        first, second = sorted((m["a"], m["b"]), key=lambda i: masked.whens[int(i)].span)
        body = f"what was the {word} in {m['x']} from @{first} to @{second}{body[m.end():]}"
    if m := _HOW_MUCH_CASH.match(body):
        how = "generated by" if m["made"] else "used to" if m["to"] else "used in"
        body = f"what was the cash {how} {body[m.end():]}"
    elif m := _HOW_MUCH_HAD.match(body):
        body = f"what was the {m['x']} {body[m.end():]}"
    elif m := _HOW_MUCH_IN.match(body):
        body = f"what was the {body[m.end():]}"
    if m := _HOW_MUCH_PAID.match(body):
        rest = body[m.end():]
        spent = m["spend"] and not m["cash"] and (thing := _SPENT_ON.match(rest)) and \
            items_named(thing["thing"].strip(" ,"))
        body = f"what was the {rest}" if spent else \
            f"what was the{' cash' if m['cash'] else ''} payments of {rest}"
    if m := _HOW_MUCH_GREW.match(body):  # "how much did revenue grow in 2022": its change
        body = f"what was the {'decrease' if m['down'] else 'change'} in {m['x']}" \
               f"{body[m.end():]}"
    if m := _YOY_OF.search(body):  # "Palantir's year-over-year revenue growth in 2022"
        body = f"{body[:m.start()]}{m['yoy']} {m['what']} in {m['x']}{body[m.end():]}"
    if m := _BY_WHAT_PERCENT.search(body):  # "what percentage did sales increase by …"
        body = f"{body[:m.start()]}percentage change in {m['x']} {body[m.end():]}"
    if d := _DEFINED.search(body):
        return _defined(body[:d.start()], body[d.end():], masked.whens, scale, places)
    used = [masked.whens[int(i)] for i in _PLACEHOLDER.findall(body)]
    latest = None if used else _LATEST.search(body)
    if latest:  # "in the most recent fiscal year": the newest year the tables show
        body = f"{body[:latest.start()]} {body[latest.end():]}"
    core = _LEAD.sub("", body, count=1).strip()
    metric = _read_core(core, used, masked.whens, _Asked(scale, places, percent, counted))
    if not latest or isinstance(metric, Refusal):
        return metric
    # (no period is named: the change or the average of X would be over the table's)
    if metric.kind != "value" or len(metric.terms) != 1 or change_over_periods(metric) \
            or average_over_periods(metric):
        return Refusal("it asks for arithmetic over 'the most recent year': name the years")
    return Metric(metric.terms, None, "latest", scale=scale, places=places,
                  name=f"{metric.name} in the most recent year", open=True)


_YOY_OF = regex.compile(r"\b(?P<yoy>year[\s-]over[\s-]year|yoy)\s+(?P<x>(?:[^\W\d][\w'’&-]*\s+)"
                        r"{1,4}?)(?P<what>growth|change)\b", regex.I)
"""A year-over-year change said around its line item ("year-over-year revenue growth"):
the percentage change in it ("year-over-year growth in revenue")."""
_LATEST = regex.compile(r"\s*\b(?:in|for|during|of|over)\s+(?:the\s+|its\s+)?(?:most\s+recent|"
                        r"latest)\s+(?:(?:fiscal|financial|reporting|full)\s+)?year\b"
                        r"(?:\s+(?:reported|shown|presented))?", regex.I)
"""The most recent year, asked without naming it ("in the most recent fiscal year", "for
the latest year"): of the documents' tables, the newest year that states the item.
"Last year" and "the current year" stay unread (relative to today; a row's words)."""


@dataclass(frozen=True)
class _Asked:
    scale: int | None
    places: int | None
    percent: bool
    """The question asks for a percentage ("(in percentage)")."""
    counted: bool = False
    """It asks how many, or for the number of something: a count."""


def _read_core(core: str, used: list[When], whens: list[When], asked: _Asked) -> Metric | Refusal:
    core = _INCREASE_DECREASE.sub("change", core)
    if asked.percent:  # "the variance in percent", as a table heads its column
        core = _VARIANCE.sub("percentage change", core)
    if (m := _SHARE.match(core)) and not _PCT_CHANGE.search(core):
        unit = m["unit"].lower()
        kind = "share" if unit in ("percentage", "percent", "%") or asked.percent else "ratio"
        return _two_items(kind, f"{m['x']}{m['tail'] or ''}", m["y"], used, whens, asked,
                          m.start("x") > m.start("y"))
    if m := _RATIO.match(core):
        return _two_items("share" if asked.percent else "ratio", m["x"], m["y"], used, whens,
                          asked)
    op = next((name for name, pattern in _OPS if pattern.search(core)), None)
    if op in ("sum", "average") and _VERSUS.search(core):
        # "the total net sales in 2019 vs 2018": the row's figures set side by side, not
        # added (a row labelled "Total net sales"); nor averaged
        return Refusal("it sets two periods against each other ('vs'): ask for the change "
                       "between them, or for each")
    if op in ("change", "increase", "decrease") and (avg := _AVERAGE.search(core)) and \
            avg.start() < dict(_OPS)[op].search(core).start():
        # "the average net change in cash balance in 2018 and 2019": the figures of a row
        # that states each year's change, averaged; never the change of the balance
        op = "average"
    if op in ("change", "increase", "decrease") and len(set(used)) >= 2 and \
            _TOTAL_CHANGE.search(core) and not _SPAN_OF.search(core):
        # "the total net change in cash balance in 2018 and 2019": each year's change,
        # added (not between the two: "the total change between 2018 and 2019" is one)
        op = "sum"
    if op == "percent_change" and (avg := _AVERAGE.search(core)) and \
            avg.start() < _PCT_CHANGE.search(core).start():  # not "… in average price"
        return Refusal("it asks for an average rate of change over several periods, which "
                       "may be compounded or the mean of each period's: it does not say which")
    if op == "sum" and len(set(used)) < 2 and (m := _SUM_OF.match(core)):
        if regex.search(r"\band\b", m["y"], regex.I) or regex.search(r"\band\b", m["x"], regex.I):
            return Refusal("it adds up things joined by more than one 'and': which of them "
                           "is one line item it does not say")
        return _two_items("sum", m["x"], m["y"], used, whens, asked)
    if op == "average" and _QUARTERLY.search(core) and len(set(used)) == 1 and _is_year(used[0]):
        return _quarterly_average(_QUARTERLY.sub("average ", core), used[0], asked)
    if op in ("sum", "average") and len(used) < 2 and (over := _OVER_YEARS.search(core)):
        # "the total X across all 3 years": over the years the table shows, not X itself
        if not (item := _item(core, op)):
            return Refusal("it names no line item to read")
        return Metric((Term(item, used[0] if used else None),), None, op,
                      scale=asked.scale, places=asked.places,
                      name=f"{'average' if op == 'average' else 'total'} {item}", open=True,
                      periods=_count(over.group()))
    if op in ("sum", "average") and len(used) < 2:
        if op == "sum" and _SUM_AFTER.search(core):  # "goodwill activity in 2019 in total"
            core = f"total {_SUM_AFTER.sub('', core)}"
        op = None  # "total revenue in 2019", "average selling price": the line item's words
    if op == "difference" and len(used) < 2 and (m := _SPREAD.match(core)) and {
            _END[m["a"].lower()], _END[m["b"].lower()]} == {"high", "low"}:
        # "the difference between the low and high price": a range's spread, high less low
        high, low = (m["a"], m["b"]) if _END[m["a"].lower()] == "high" else (m["b"], m["a"])
        return _two_items("difference", f"{high} {m['rest']}", f"{low} {m['rest']}", used,
                          whens, asked)
    if op in ("change", "increase", "decrease", "difference") and len(used) < 2:
        if op == "difference" and (m := _BETWEEN.match(core)):
            return _two_items("difference", *_total_first(m["x"], m["y"]), used, whens, asked)
        if op == "difference" and (m := _BETWEEN_IN.match(core)):
            if regex.search(r"\band\b", m["y"], regex.I):
                return Refusal("it compares two things joined by more than one 'and': which "
                               "of them is one line item it does not say")
            x, y = _total_first(m["x"], m["y"])
            return _two_items("difference", f"{x} {m['m']}", f"{y} {m['m']}", used, whens, asked)
        if op != "percent_change":
            op = None  # "the change in fair value in 2019": a line item that says so itself
    item = _item(core, op)
    if not item:
        return Refusal("it names no line item to read")
    scale, places = asked.scale, asked.places
    if op == "percent_change" and len(set(used)) < 2:
        return Metric((Term(item, used[0] if used else None),), None, op, percent=True,
                      places=_places(places), name=f"percentage change in {item}", open=True)
    if op is None:
        if len(set(used)) > 1:
            return Refusal(f"it names {len(set(used))} periods but asks for no change, average "
                           "or total over them")
        return Metric((Term(item, used[0] if used else None, asked.counted),), None, "value",
                      scale=scale, places=places, name=item)
    periods = sorted(dict.fromkeys(used), key=lambda w: w.span)
    if op == "average" or op == "sum":
        periods = _every_year(periods, core)
        terms = tuple(Term(item, w) for w in periods)
        refs = " + ".join(f"$T{i}" for i in range(1, len(terms) + 1))
        expression = f"({refs}) / {len(terms)}" if op == "average" else refs
        return Metric(terms, expression, op, scale=scale, places=places,
                      name=f"{'average' if op == 'average' else 'total'} {item}")
    if len(periods) != 2:
        return Refusal(f"it asks for a {op.replace('_', ' ')} over {len(periods)} periods")
    earlier, later = periods
    terms = (Term(item, earlier), Term(item, later))
    if op == "percent_change":
        return Metric(terms, percent_change_of(_places(places)), op,
                      percent=True, places=_places(places), name=f"percentage change in {item}")
    if op == "decrease":
        return Metric(terms, "$T1 - $T2", op, scale=scale, places=places,
                      name=f"decrease in {item}")
    if op == "difference" and not regex.search(r"\bfrom\s+(?:\w+\s+){0,2}@\d+\s+to\b", core):
        if regex.search(r"\bnet\s+difference\b", core, regex.I):
            return Refusal("it asks for a net difference between two periods, whose sign "
                           "it does not say")
        if regex.search(r"\bdifference\s+between\s+(?!@)", core, regex.I):
            # "the difference between X in 2018 and 2019": TAT-QA answers these both as a
            # size and as a signed change
            return Refusal("it asks for the difference between a line item's figures in two "
                           "periods, whose sign it does not say")
        # "the difference between 2018 and 2019" is a size, whichever year is larger
        return Metric(terms, "abs($T2 - $T1)", op, scale=scale, places=places,
                      name=f"difference in {item}")
    return Metric(terms, "$T2 - $T1", "change", scale=scale, places=places,
                  name=f"{'increase' if op == 'increase' else 'change'} in {item}")


def _quarterly_average(core: str, year: When, asked: _Asked) -> Metric | Refusal:
    """"the average quarterly low price in 2018": the item in each quarter of the year."""
    item = _item(core, "average")
    if not item:
        return Refusal("it names no line item to read")
    terms = tuple(Term(item, _quarter(n, year.span[0].year, year.fiscal)) for n in range(1, 5))
    return Metric(terms, "($T1 + $T2 + $T3 + $T4) / 4", "average", scale=asked.scale,
                  places=asked.places, name=f"average quarterly {item}")


def _count(span_words: str) -> int | None:
    """The number a span of years says ("the 3 year period": 3, "both years": 2)."""
    if m := regex.search(r"\d+", span_words):
        return int(m.group())
    named = {"two": 2, "both": 2, "three": 3, "four": 4, "five": 5}
    return next((n for word, n in named.items()
                 if regex.search(rf"\b{word}\b", span_words, regex.I)), None)


def _places(places: int | None) -> int:
    return DEFAULT_PLACES if places is None else places


def _strip_periods(core: str) -> str:
    return " ".join(_PERIOD_PHRASE.sub(" ", core).split())


def _every_year(periods: list[When], core: str) -> list[When]:
    """The years from the first to the last when the question names a range of years
    ("from 2017 to 2019", "2017-2019", "over the 3 year period"), else the periods."""
    first, last = periods[0], periods[-1]
    years = [w for w in periods if _is_year(w)]
    if len(years) != len(periods) or not regex.search(
            r"@\d+\s*(?:to|through|-|–)\s*@\d+|\b(?:three|four|five|\d)[\s-]+years?\b", core):
        return periods
    out = []
    for year in range(first.span[0].year, last.span[0].year + 1):
        span = (date(year, 1, 1), date(year, 12, 31))
        out.append(When(f"FY{year}" if first.fiscal else str(year), span, first.fiscal))
    return out


def _is_year(w: When) -> bool:
    a, b = w.span
    return a.year == b.year and (a.month, a.day, b.month, b.day) == (1, 1, 12, 31)


def _item(core: str, op: str | None) -> str:
    """The line item of `core`: without its periods, the operation's words and fillers."""
    text = _strip_periods(_SPAN_WORDS.sub(" ", core))
    if op == "sum" and _COMBINED.search(text) and not _TOTAL_OF_FILLER.match(text):
        # "the total other assets in 2019 and 2018 combined": the last word adds them up,
        # and "Total other assets" is the row, not "Other assets"
        text = _COMBINED.sub("", text)
    elif op is not None:
        pattern = dict(_OPS)[op]
        m = pattern.search(text)
        if m is not None:
            before, after = text[:m.start()].strip(), text[m.end():].strip()
            after = _OP_PHRASE.sub("", after)
            if op == "sum":
                after = _SUM_AFTER.sub("", after)
            # "how much did revenue increase": the item comes before the verb
            text = after if after and not _only_connectives(after) else before
    text = _SPAN_WORDS.sub(" ", text)
    text = regex.sub(r"^(?:did|does|do|was|were|is|the)\s+", "", text.strip(), flags=regex.I)
    text = _FILLER_END.sub("", _FILLER_START.sub("", text).strip())
    text = regex.sub(r"\s+(?:by|of|in|for|at|from|between|to)$", "", text, flags=regex.I)
    return text.strip(" ,")


def _only_connectives(text: str) -> bool:
    return not regex.sub(r"\b(?:by|from|between|to|and|in|of|the|for)\b", "", text).strip()


_TOTAL_OF = regex.compile(r"^(?:the\s+)?total\b", regex.I)


def _total_first(x: str, y: str) -> tuple[str, str]:
    """The two things a difference is between, a total before its part whichever is named
    first: "the difference between the current and the total" is what the total holds
    beyond the current, a size, as "between total net receivables and current net
    receivables" is."""
    return (y, x) if _TOTAL_OF.match(y) and not _TOTAL_OF.match(x) else (x, y)


def _two_items(kind: str, x: str, y: str, used: list[When], whens: list[When],
               asked: _Asked, x_last: bool = False) -> Metric | Refusal:
    """Two line items compared: each in the period it names itself, else in the one
    period the question names for both ("X as a percentage of Y in 2019"; "what
    percentage of Y is made up of X in 2019": `x_last`)."""
    own_x = {whens[int(i)] for i in _PLACEHOLDER.findall(x)}
    own_y = {whens[int(i)] for i in _PLACEHOLDER.findall(y)}
    if kind in ("share", "ratio") and _AVERAGE.search(x) and len(set(used)) > 1:
        return _average_share(kind, x, y, used, asked)
    if len(own_x) > 1 or len(own_y) > 1:
        return Refusal("a line item it compares names several periods")
    shared = set(used) - own_x - own_y
    if len(shared) > 1:
        return Refusal(f"it compares two line items over {len(shared)} periods")
    if x_last and own_x and not own_y and (trailing := _TRAILING_PERIOD.search(x)):
        shared, own_x = own_x, set()  # the period closing the question is both's
        x = x[:trailing.start()]
    elif not x_last and own_y and not own_x and (trailing := _TRAILING_PERIOD.search(y)):
        shared, own_y = own_y, set()
        y = y[:trailing.start()]
    common = next(iter(shared), None)
    when_x = next(iter(own_x), common)
    when_y = next(iter(own_y), common)
    x, y = _item(x, None), _item(y, None)
    if x and not y and kind in ("share", "ratio") and own_x and own_y:
        y = x  # "the ratio of X in fiscal 2019 to fiscal 2018": X in each period
    if not x or not y:
        return Refusal("one of the two line items it compares is not named")
    terms = (Term(x, when_x), Term(y, when_y))
    places = _places(asked.places)
    if kind == "share":
        return Metric(terms, f"round($T1 / $T2 * 100, {places})", kind, percent=True,
                      places=places, name=f"{x} as a percentage of {y}")
    if kind == "ratio":
        return Metric(terms, f"round($T1 / $T2, {places})", kind, places=places,
                      name=f"ratio of {x} to {y}")
    if kind == "sum":
        return Metric(terms, "$T1 + $T2", kind, scale=asked.scale, places=asked.places,
                      name=f"sum of {x} and {y}")
    return Metric(terms, "$T1 - $T2", kind, scale=asked.scale, places=asked.places,
                  name=f"difference between {x} and {y}")


def _average_share(kind: str, x: str, y: str, used: list[When],
                   asked: _Asked) -> Metric | Refusal:
    """"the FY2019 - FY2021 3 year average of capex as a % of revenue": the share in each
    year of the range, averaged (a metric of its own, so a payment it divides is its
    amount); over periods that are not whole years, not told."""
    periods = sorted(dict.fromkeys(used), key=lambda w: w.span)
    if not all(_is_year(w) for w in periods):
        return Refusal("it averages a share over periods that are not years")
    periods = _every_year(periods, f"{x} {y}")
    item_x, item_y = _item(x, "average"), _item(y, None)
    if not item_x or not item_y:
        return Refusal("one of the two line items it compares is not named")
    terms = tuple(t for w in periods for t in (Term(item_x, w), Term(item_y, w)))
    mean = _mean([f"$T{2 * i + 1} / $T{2 * i + 2}" for i in range(len(periods))])
    places = _places(asked.places)
    if kind == "share":
        return Metric(terms, f"round(({mean}) * 100, {places})", "defined", percent=True,
                      places=places, name=f"average {item_x} as a percentage of {item_y}")
    return Metric(terms, f"round({mean}, {places})", "defined", places=places,
                  name=f"average ratio of {item_x} to {item_y}")


def _mean(parts: list[str]) -> str:
    """The expression averaging `parts` (each an expression of its own)."""
    return f"({' + '.join(f'({p})' for p in parts)}) / {len(parts)}"


_TRAILING_PERIOD = regex.compile(r"\s+(?:in|for|during|as\s+(?:of|at)|at)\s+(?:the\s+)?(?:fiscal\s+)?"
                                 r"(?:years?\s+)?@\d+\s*$", regex.I)
_TOKEN = regex.compile(r"\s*(?:(?P<op>[-+*/()])|(?P<operand>[^-+*/()]+))")


_WORD_OPS = regex.compile(r"\s+(?P<op>minus|less(?!\s+than\b)|plus|times|multiplied(?=\s+by)|"
                          r"divided(?=\s+by))(?:\s+by)?\s+", regex.I)
"""An operator a defined formula writes as a word ("operating cash flow minus capital
expenditure", "gross profit divided by revenue"); not "over", which also means a span."""
_WORD_OP = {"minus": "-", "less": "-", "plus": "+", "times": "*", "multiplied": "*",
            "divided": "/"}


_PERCENT_TAIL = regex.compile(r"\s*,\s*(?:as|expressed\s+as|expressed\s+in|in)\s+(?:a\s+)?"
                              r"(?:percent(?:age)?|%)", regex.I)
"""A formula's tail that asks its result as a percentage ("…, as a percentage")."""


def _defined(name: str, formula: str, whens: list[When], scale, places) -> Metric | Refusal:
    """A metric the question defines: its formula's operands become terms (each with its
    own period, or the question's one other period), its operators the expression."""
    outside = {int(i) for i in _PLACEHOLDER.findall(name)}
    default = sorted(dict.fromkeys(whens[i] for i in sorted(outside)), key=lambda w: w.span)
    tail = regex.search(r"\s*(?:[.;]|,\s*(?:and|where|rounded|round|in|as|expressed)\b).*$",
                        formula)
    if tail:  # "…, as a percentage", "…, rounded to two decimal places": not operands
        formula = formula[:tail.start()]
    formula = regex.sub(r"(?<=\w)\s*/\s*(?=\()", " / ", formula)
    formula = _WORD_OPS.sub(lambda m: f" {_WORD_OP[m['op'].lower()]} ", formula)
    if len(default) > 1:
        # "the 3 year average gross margin from FY2022 to FY2024": the formula in each
        # year, averaged; any other metric over several periods is not told
        if not _AVERAGE.search(name) or _PLACEHOLDER.search(formula):
            return Refusal("the metric it defines is asked for several periods")
        default = _every_year(default, name)
    terms: list[Term] = []
    each: list[str] = []
    for when in default or [None]:
        read = _formula(formula, whens, when, len(terms))
        if isinstance(read, Refusal):
            return read
        terms.extend(read[0])
        each.append(read[1])
    if not terms:
        return Refusal("the formula it defines names no line item")
    expression = each[0] if len(each) == 1 else _mean(each)
    percent = bool(regex.search(r"\b(?:percent(?:age)?|margin)\b|%", name, regex.I)
                   or tail and _PERCENT_TAIL.match(tail.group()))
    if percent:
        expression = f"({expression}) * 100"
    if places is not None or regex.search(r"[*/]", expression):
        # sums and differences are exact in their cells' places: "$73,365 million", not
        # "$73,365.00 million"
        expression = f"round({expression}, {_places(places)})"
    asked = name.split("?")[0]  # "What was X's gross margin for @0? Gross margin": X's
    label = _item(_LEAD.sub("", asked).strip(), None) or "the metric"
    return Metric(tuple(terms), expression, "defined", percent=percent,
                  places=_places(places), scale=scale, name=label)


def _formula(formula: str, whens: list[When], default: When | None,
             before: int) -> tuple[list[Term], str] | Refusal:
    """A defined formula's operands as terms (each in its own period, else `default`) and
    its expression over them, numbered from `$T{before + 1}`."""
    terms: list[Term] = []
    parts: list[str] = []
    for m in _TOKEN.finditer(formula):
        if m["op"]:
            parts.append(m["op"])
            continue
        operand = m["operand"].strip()
        if not operand:
            continue
        if regex.fullmatch(r"\d+(?:\.\d+)?", operand):
            parts.append(operand)
            continue
        read = _operand(operand, whens, default)
        if isinstance(read, Refusal):
            return read
        refs = []
        for term in read[0]:
            terms.append(term)
            refs.append(f"$T{before + len(terms)}")
        parts.append(read[1].format(*refs))
    return terms, " ".join(parts)


def by_formula(metric: Metric, computed) -> Metric | None:
    """`metric` with each term whose line item the domain library computes by a formula
    (`computed(item)`: its `(formula, kind)`, as ("total current assets / total current
    liabilities", "number") for "current ratio", else None) replaced by the formula's
    operands in the term's period; None when no term's item has one. A ratio is rounded
    as the question asks (two places unless it says otherwise); an amount is not."""
    found = [computed(t.item) if t.when is not None else None for t in metric.terms]
    if not any(found):
        return None
    terms: list[Term] = []
    subs: list[str] = []
    for term, formula in zip(metric.terms, found):
        if formula is None:
            terms.append(term)
            subs.append(f"$T{len(terms)}")
            continue
        parts = []
        for m in _TOKEN.finditer(formula[0]):
            if m["op"] or regex.fullmatch(r"\s*\d+(?:\.\d+)?\s*", m["operand"] or ""):
                parts.append((m["op"] or m["operand"]).strip())
            elif item := _item(m["operand"].strip(), None):
                terms.append(Term(item, term.when))
                parts.append(f"$T{len(terms)}")
        subs.append("(" + " ".join(parts) + ")")
    expression = _PLACEHOLDER_REF.sub(lambda m: subs[int(m[1]) - 1], metric.expression or "$T1")
    kind = "defined" if metric.kind == "value" else metric.kind
    if all(f is None or f[1] == "money" for f in found):
        # a payment it subtracts is its amount ("free cash flow": operating cash flow less
        # the capital expenditure written "(9,917)"), as in a formula the question defines
        return Metric(tuple(terms), expression, kind, percent=metric.percent,
                      scale=metric.scale, places=metric.places, name=metric.name)
    places = _places(metric.places)
    if not expression.startswith("round("):
        expression = f"round({expression}, {places})"
    # a percentage the library computes ("operating income / revenue * 100") prints "%"
    percent = metric.percent or any(f is not None and f[1] == "percent" for f in found)
    return Metric(tuple(terms), expression, kind, percent=percent, places=places,
                  name=metric.name)


_PLACEHOLDER_REF = regex.compile(r"\$T(\d+)")
_PARTS_LEAD = regex.compile(r"^(?:the\s+)?(?:(?P<average>average)|total|sum\s+of|combined)\s+",
                            regex.I)
_LAST_LINK = regex.compile(r"^(?P<head>.*\b(?:of|from|for|in|by|on)\s+)(?P<a>.+)$", regex.I)


def by_parts(metric: Metric) -> Metric | None:
    """`metric` with a term whose line item names two things no row states together as
    the two rows added: "the total percentage of revenue from Apple and Huawei" (the
    rows "Apple" and "Huawei" of a table of revenue from customers), "the average …" the
    two halved, and the part of a share ("deferred revenue and accrued warranty over
    gross deferred tax assets"). Only where the question adds them (a total, a sum, an
    average, a share's part): "What was X and Y in 2019?" asks for both figures, not
    their sum. None when no term reads so; each part is then a row of its own, or not
    found."""
    terms: list[Term] = []
    subs: list[str] = []
    split: bool | None = None  # whether the split one averages its parts
    for n, term in enumerate(metric.terms):
        parts = _parts(term.item, part_of_share=n == 0 and metric.kind in ("share", "ratio"))
        if parts is None:
            terms.append(term)
            subs.append(f"$T{len(terms)}")
            continue
        (a, b), split = parts
        terms += [Term(a, term.when), Term(b, term.when)]
        added = f"$T{len(terms) - 1} + $T{len(terms)}"
        subs.append(f"({added}) / 2" if split else added)
    if split is None:
        return None
    if metric.expression is None:  # the one term: the parts added is the answer
        return Metric(tuple(terms), subs[0], "average" if split else "sum",
                      scale=metric.scale, places=metric.places, name=metric.name)
    subs = [f"({sub})" if " " in sub else sub for sub in subs]
    expression = _PLACEHOLDER_REF.sub(lambda m: subs[int(m[1]) - 1], metric.expression)
    return Metric(tuple(terms), expression, metric.kind, percent=metric.percent,
                  scale=metric.scale, places=metric.places, name=metric.name)


def by_shared_words(metric: Metric) -> Metric | None:
    """`metric` with the first of two things it compares given the words after the
    second's first ("the difference between the domestic and international discount
    rates": "domestic discount rates"), when the first is one word; None otherwise. Read
    only when "domestic" alone names no row."""
    if len(metric.terms) != 2 or metric.kind not in ("difference", "ratio", "share", "sum"):
        return None
    first, second = metric.terms
    words = second.item.split()
    if len(first.item.split()) != 1 or len(words) < 2:
        return None
    terms = (Term(f"{first.item} {' '.join(words[1:])}", first.when), second)
    return Metric(terms, metric.expression, metric.kind, percent=metric.percent,
                  scale=metric.scale, places=metric.places, name=metric.name)


def as_losses(metric: Metric, loss_names) -> list[Metric]:
    """`metric` with each term whose line item reports state as a loss when there is one
    (`loss_names(item)`: "net loss", … for "Palantir's net income") named so, once for
    each such name; [] when no term's item has one."""
    names = [loss_names(t.item) if t.when is not None else () for t in metric.terms]
    if not any(names):
        return []
    return [replace(metric, terms=tuple(replace(t, item=n[min(k, len(n) - 1)]) if n else t
                                        for t, n in zip(metric.terms, names)))
            for k in range(max(len(n) for n in names))]


def at_period_end(metric: Metric) -> Metric | None:
    """`metric` with "at the end" (of its period) taken off its items ("cash at the end"
    of "How much cash did Palantir have at the end of 2022?": the balance that day,
    "Cash and cash equivalents" on the balance sheet); None when no item ends so. Read
    only when no row is named with it: a roll-forward's "Outstanding at end of year" is
    the row "shares outstanding at the end" asks for, not its "… at beginning of year"."""
    items = [_AT_THE_END.sub("", t.item) for t in metric.terms]
    if items == [t.item for t in metric.terms] or not all(items):
        return None
    return replace(metric, terms=tuple(replace(t, item=item)
                                       for item, t in zip(items, metric.terms)),
                   name=_AT_THE_END.sub("", metric.name) or metric.name)


_AT_THE_END = regex.compile(r"\s+(?:at|as\s+(?:of|at)|by)\s+(?:the\s+)?(?:end|close)$", regex.I)


def _parts(item: str, part_of_share: bool) -> tuple[tuple[str, str], bool] | None:
    """The two line items `item` adds ("percentage of revenue from Apple", "… from
    Huawei") and whether it averages them; None when it names one, or adds nothing."""
    lead = _PARTS_LEAD.match(item)
    if lead is None and not part_of_share:
        return None
    rest = item[lead.end():] if lead else item
    if len(regex.findall(r"\band\b", rest, regex.I)) != 1:
        return None
    left, b = regex.split(r"\s+and\s+", rest, maxsplit=1, flags=regex.I)
    head, a = (m["head"], m["a"]) if (m := _LAST_LINK.match(left)) else ("", left)
    a, b = _item(head + a, None), _item(head + b, None)
    if not a or not b or a == b:
        return None
    return (a, b), bool(lead and lead["average"])


def _operand(text: str, whens: list[When], default: When | None):
    """(terms, expression template with `{}` per term) for one operand of a formula."""
    own = [whens[int(i)] for i in _PLACEHOLDER.findall(text)]
    average = _AVERAGE.search(text)
    item = _item(text, "average" if average else None)
    if not item:
        return Refusal(f"the operand {text!r} of its formula names no line item")
    if average:
        periods = sorted(dict.fromkeys(own), key=lambda w: w.span)
        if len(periods) < 2:
            return Refusal(f"the average in its formula ({text!r}) names fewer than two periods")
        terms = [Term(item, w) for w in periods]
        return terms, "((" + " + ".join("{}" for _ in terms) + f") / {len(terms)})"
    if len(set(own)) > 1:
        return Refusal(f"the operand {text!r} of its formula names several periods")
    when = own[0] if own else default
    if when is None:
        return Refusal(f"the operand {text!r} of its formula names no period")
    return [Term(item, when)], "{}"

"""Figures as documents write them, typed: consumes the text of a table cell or of a
pattern's capture (and the unit and scale its table states, the kind a step asks for),
produces a `Quantity`, or None when the text states no figure of that kind.

Read, around one number (shared/tools/numbers.py's forms: `1,234.5`, `.5`):
- a currency before it (`$`, `US$`, `€`, `£`, `¥`, `₹`, or a code: `USD 5`), which makes
  it money in that currency; a table's unit makes a bare figure money too;
- a scale word after it (`thousand`/`k`, `million`/`m`/`mn`, `billion`/`b`/`bn`,
  `trillion`/`tn`), which replaces the table's scale;
- a percent sign or `per cent`/`percent` after it (or after its closing parenthesis:
  `(48.3)%`): a percent;
- a negative as accountants write it, `(9,576)` (spaces inside allowed, the currency
  inside or before it: `$(9,576)`), or with a minus;
- a footnote mark after it, dropped: `1,234 (1)`, `1,234(a)`, `1,234*`, `1,234¹`;
- a dash alone (`—`, `–`, `-`), after a currency (`$ —`) or `nil`: zero, as tables
  write it.
A date is `2019-09-30`, `September 30, 2019` or `30 September 2019`. A bare figure
takes the kind asked for (money, number or percent: a plan that asks for a percent and
captures `91.7` means 91.7 %), but a figure written as one kind is never another.

Everything else gives None: words, two numbers, a number with letters glued to it
(`10-K`, `Q3`), a lone sign or comma.

Also here, for the text around a figure: `unit_statement` reads what a table's heading
or a row's label says its figures are in ("(In thousands, except per share amounts)",
"$ in millions", "(000's)"); `rescale` states a figure in another scale; `is_year`
tells a bare year (2020) from an amount.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import regex

from shared.models.quantity import SCALE_WORDS, Kind, Quantity

CURRENCIES = {"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR",
              "rmb": "CNY", "usd": "USD", "eur": "EUR", "gbp": "GBP", "jpy": "JPY",
              "cny": "CNY", "inr": "INR", "chf": "CHF", "cad": "CAD", "aud": "AUD"}
"""Currency signs and codes (lower case) -> ISO 4217."""
SCALES = {"thousand": 3, "k": 3, "million": 6, "m": 6, "mn": 6, "billion": 9, "b": 9,
          "bn": 9, "trillion": 12, "tn": 12}
DASHES = frozenset({"—", "–", "-", "−", "nil", "—-", "--"})


def is_dash(text: str) -> bool:
    """Whether a cell writes its zero as a dash ("—", "$ —", "nil")."""
    return text.strip("$€£¥₹ ").lower() in DASHES


MONTHS = {m: i for i, m in enumerate(
    ("january february march april may june july august september october november "
     "december").split(), 1)}

_CURRENCY = "|".join(regex.escape(c) for c in sorted(CURRENCIES, key=len, reverse=True))
_FIGURE = regex.compile(
    rf"""^(?:(?P<cur0>{_CURRENCY})\s*(?=\())?(?P<open>\()?\s*(?P<sign>[-−+])?\s*
    (?P<cur>{_CURRENCY})?\s*(?P<sign2>[-−+])?\s*
    (?P<digits>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    \s*(?P<scale>thousand|million|billion|trillion|mn|bn|tn|[kmb])?
    \s*(?P<percent>%|per\s?cent\b)?\s*(?P<close>\))?(?(percent)|\s*(?P<percent2>%)?)$""",
    regex.VERBOSE | regex.IGNORECASE)
_FOOTNOTE = regex.compile(r"(?<=[\d%)])\s*(?:\((?:[a-z]|\d{1,2})\)|\[\d{1,2}\]|[*†‡§]+|"
                          r"[¹²³⁴⁵⁶⁷⁸⁹⁰]+)$", regex.IGNORECASE)
_SIGNED_DASH = regex.compile(rf"({_CURRENCY})\s*(\S+)", regex.IGNORECASE)
_ISO_DATE = regex.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTH_FIRST = regex.compile(r"^([a-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})$", regex.IGNORECASE)
_DAY_FIRST = regex.compile(r"^(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})$", regex.IGNORECASE)


def parse_quantity(text: str, *, kind: Kind | None = None, unit: str | None = None,
                   scale: int = 0) -> Quantity | None:
    """The figure `text` states, typed; None when it states none of `kind` (None: any,
    inferred). `unit` and `scale` are the table's: a bare `1,234` in a table "$ in
    millions" is money, USD, scale 6; a currency or scale word in the text wins."""
    if not isinstance(text, str):
        return None
    written = " ".join(text.split())
    if kind in ("date", None) and (day := _date(written)):
        return Quantity(kind="date", date=day, text=written)
    if kind == "date":
        return None
    core = _FOOTNOTE.sub("", written).strip()
    written_unit = None
    signed = _SIGNED_DASH.fullmatch(core)
    if signed and signed[2].lower() in DASHES and kind in (None, "money"):
        written_unit, core = CURRENCIES[signed[1].lower()], signed[2]  # "$—"
    if core.lower() in DASHES:
        dash_kind = kind or ("money" if unit or written_unit else "number")
        return Quantity(kind=dash_kind, amount=Decimal(0), scale=scale, text=written,
                        unit=(written_unit or unit) if dash_kind == "money" else None)
    m = _FIGURE.match(core)
    if m is None or bool(m["open"]) != bool(m["close"]) or (m["sign"] and m["sign2"]) or (
            m["cur0"] and m["cur"]):
        return None
    negative = bool(m["open"]) or (m["sign"] or m["sign2"] or "") in ("-", "−")
    if m["open"] and (m["sign"] or m["sign2"]):  # "(-3)": refuse rather than guess
        return None
    amount = Decimal(m["digits"].replace(",", ""))
    money = bool(m["cur"] or m["cur0"] or (unit and kind != "percent"))
    percent = m["percent"] or m["percent2"]  # "12%" and "(48.3)%"
    found_kind: Kind = "percent" if percent else "money" if money else "number"
    if kind is not None and kind != found_kind:
        bare = found_kind == "number" or (found_kind == "money" and not m["cur"])
        if bare and not percent and (kind != "percent" or found_kind == "number"):
            found_kind = kind  # a bare figure of the kind asked for, in a table of another
        else:
            return None
    written_currency = m["cur0"] or m["cur"]
    currency = CURRENCIES[written_currency.lower()] if written_currency else unit
    stated = SCALES[m["scale"].lower()] if m["scale"] else scale
    if stated not in SCALE_WORDS:
        return None
    return Quantity(kind=found_kind, amount=-amount if negative else amount,
                    unit=currency if found_kind == "money" else None,
                    scale=stated if found_kind != "percent" else 0, text=written)


_UNIT_STATEMENT = regex.compile(
    r"""\(\s*(?:(?P<cur1>\$|us\$|€|£|dollars|euros?)\s*)?(?:(?:amounts|figures|dollars)\s+)?
    (?:in\s+)?(?:(?P<cur2>\$|us\$|€|£)\s*)?(?P<word>thousands|millions|billions|['’]?000['’]?s?)
    (?:\s+of\s+(?:u\.?s\.?\s+)?(?P<cur3>dollars|euros))?
    (?P<except>,?\s*except\s+(?:for\s+)?(?:per[\s-]share|shares?)[^)]{0,40})?\s*\)
    |(?P<cur4>\$|us\$|€|£|dollars)\s+in\s+(?P<word2>thousands|millions|billions)
    (?P<except2>,?\s*except\s+(?:for\s+)?(?:per[\s-]share|shares?)\s+\w+)?
    |\bin\s+(?P<word3>thousands|millions|billions)(?:\s+of\s+(?:u\.?s\.?\s+)?(?P<cur5>dollars))?
    (?P<except3>,?\s*except\s+(?:for\s+)?(?:per[\s-]share|shares?)\s+\w+)?
    """, regex.VERBOSE | regex.IGNORECASE)
_STATED_SCALES = {"thousands": 3, "000": 3, "millions": 6, "billions": 9}
_STATED_CURRENCY = {"$": "USD", "us$": "USD", "dollars": "USD", "€": "EUR", "euro": "EUR",
                    "euros": "EUR", "£": "GBP"}


def unit_statement(text: str) -> tuple[tuple[int, int], str | None, int, str | None] | None:
    """The last statement in `text` of what its figures are in: ((start, end), currency,
    scale, exception) with `exception` "share" when per-share or share figures are
    excepted ("in thousands, except per share data"); None when `text` states none."""
    found = None
    for m in _UNIT_STATEMENT.finditer(text):
        found = m
    if found is None:
        return None
    word = (found["word"] or found["word2"] or found["word3"]).lower()
    sign = next((found[g] for g in ("cur1", "cur2", "cur3", "cur4", "cur5") if found[g]), None)
    excepted = found["except"] or found["except2"] or found["except3"]
    return (found.span(), _STATED_CURRENCY.get(sign.lower()) if sign else None,
            _STATED_SCALES["000" if "0" in word else word], "share" if excepted else None)


def rescale(q: Quantity, scale: int) -> Quantity:
    """`q` with its amount stated in `scale` (`$9,576 thousand` in 6: `$9.576 million`);
    a percent or date is returned as it is."""
    if q.kind in ("percent", "date") or q.scale == scale or scale not in SCALE_WORDS:
        return q
    return q.model_copy(update={"amount": q.amount.scaleb(q.scale - scale), "scale": scale})


def is_year(q: Quantity) -> bool:
    """Whether `q` is written as a year would be: a bare whole number from 1900 to 2100
    without separators, currency, scale or sign (`2020`, not `2,020` or `$2020`), whatever
    kind it was read as."""
    return (q.kind in ("number", "money") and q.text.isdigit() and len(q.text) == 4
            and 1900 <= int(q.text) <= 2100)


def _date(text: str) -> str | None:
    """The ISO day `text` names, or None."""
    try:
        if m := _ISO_DATE.match(text):
            return date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        if m := _MONTH_FIRST.match(text):
            month, day, year = _month(m[1]), int(m[2]), int(m[3])
        elif m := _DAY_FIRST.match(text):
            day, month, year = int(m[1]), _month(m[2]), int(m[3])
        else:
            return None
        return date(year, month, day).isoformat() if month else None
    except ValueError:
        return None


def _month(name: str) -> int | None:
    name = name.lower()
    return next((n for full, n in MONTHS.items()
                 if full == name or (len(name) >= 3 and full.startswith(name))), None)


INEXACT_PLACES = 10
"""Decimal places past which an amount is an inexact quotient (COMPUTE carries 28 digits:
an average of three figures, `172608.3333333333333333333333`)."""


def _shown(amount: Decimal) -> Decimal:
    """`amount` as an answer prints it: an inexact quotient to two decimal places, or to
    three significant digits below 1 (`0.0123`); any other as it is."""
    exponent = amount.as_tuple().exponent
    if not isinstance(exponent, int) or -exponent <= INEXACT_PLACES:
        return amount
    if abs(amount) >= 1:
        return amount.quantize(Decimal("0.01"))
    return Decimal(f"{amount:.3g}") if amount else Decimal(0)


def display(q: Quantity) -> str:
    """`q` as an answer prints it: `$9,576 thousand`, `-$9.6 million`, `7.5%`,
    `2019-09-30`, `1,234`."""
    if q.kind == "date":
        return q.date or q.text
    amount = q.amount if q.amount is not None else Decimal(0)
    digits = f"{abs(_shown(amount)):,f}"
    word = SCALE_WORDS.get(q.scale, "")
    sign = "-" if amount < 0 else ""
    if q.kind == "percent":
        return f"{sign}{digits}%"
    if q.kind == "money":
        symbol = next((s for s, code in CURRENCIES.items() if code == q.unit and len(s) == 1),
                      None)
        money = f"{symbol}{digits}" if symbol else f"{digits} {q.unit}" if q.unit else digits
        return f"{sign}{money}{' ' + word if word else ''}"
    return f"{sign}{digits}{' ' + word if word else ''}"

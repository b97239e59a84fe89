"""Figures as documents write them, typed: consumes the text of a table cell or of a
pattern's capture (and the unit and scale its table states, the kind a step asks for),
produces a `Quantity`, or None when the text states no figure of that kind.

Read, around one number (shared/tools/numbers.py's forms: `1,234.5`, `.5`):
- a currency before it (`$`, `US$`, `€`, `£`, `¥`, `₹`, or a code: `USD 5`), which makes
  it money in that currency; a table's unit makes a bare figure money too;
- a scale word after it (`thousand`/`k`, `million`/`m`/`mn`, `billion`/`b`/`bn`,
  `trillion`/`tn`), which replaces the table's scale;
- a percent sign or `per cent`/`percent` after it: a percent;
- a negative as accountants write it, `(9,576)` (spaces inside allowed, the currency
  inside or before it: `$(9,576)`), or with a minus;
- a footnote mark after it, dropped: `1,234 (1)`, `1,234(a)`, `1,234*`, `1,234¹`;
- a dash alone (`—`, `–`, `-`) or `nil`, or after a currency (`$—`): zero, as tables
  write it.
A date is `2019-09-30`, `September 30, 2019` or `30 September 2019`.

Everything else gives None: words, two numbers, a number with letters glued to it
(`10-K`, `Q3`), a lone sign or comma.
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
MONTHS = {m: i for i, m in enumerate(
    ("january february march april may june july august september october november "
     "december").split(), 1)}

_CURRENCY = "|".join(regex.escape(c) for c in sorted(CURRENCIES, key=len, reverse=True))
_FIGURE = regex.compile(
    rf"""^(?:(?P<cur0>{_CURRENCY})\s*(?=\())?(?P<open>\()?\s*(?P<sign>[-−+])?\s*
    (?P<cur>{_CURRENCY})?\s*(?P<sign2>[-−+])?\s*
    (?P<digits>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    \s*(?P<scale>thousand|million|billion|trillion|mn|bn|tn|[kmb])?
    \s*(?P<percent>%|per\s?cent\b)?\s*(?P<close>\))?$""",
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
    found_kind: Kind = "percent" if m["percent"] else "money" if money else "number"
    if kind is not None and kind != found_kind:
        if {kind, found_kind} == {"money", "number"} and not m["percent"]:
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


def display(q: Quantity) -> str:
    """`q` as an answer prints it: `$9,576 thousand`, `-$9.6 million`, `7.5%`,
    `2019-09-30`, `1,234`."""
    if q.kind == "date":
        return q.date or q.text
    amount = q.amount if q.amount is not None else Decimal(0)
    digits = f"{abs(amount):,f}"
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

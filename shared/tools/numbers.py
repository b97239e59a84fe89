"""Numbers as documents write them: consumes text like "$1,234.5" or "1.2 million",
produces an exact `Decimal` (never a float), or None when the text is not one number.

Used by COMPUTE (variable values that are extracted strings) and by the finalizer.

Accepted, with surrounding whitespace:
- a plain number: `91.7`, `.5`, `1234`, `+3`;
- thousands separators in groups of three: `1,234,567.89` (`1,23` is rejected);
- one currency symbol before the number: `$`, `€`, `£`, `¥`, `₹`;
- a leading minus (`-`, `−`), before or after the currency symbol: `-$3.4`, `$-3.4`;
- accounting negatives in parentheses: `(3.4)` is -3.4;
- a percent sign, which is dropped: `91.7%` is 91.7 (not 0.917);
- a scale word or abbreviation: `thousand`/`k`, `million`/`m`/`mn`,
  `billion`/`b`/`bn`, `trillion`/`tn`: `1.2 million` is 1200000.

Anything else (`NaN`, `1e5`, `12 units`, two numbers) gives None.
"""

from __future__ import annotations

from decimal import Context, Decimal

import regex

_SCALES = {
    "thousand": 3, "k": 3,
    "million": 6, "m": 6, "mn": 6,
    "billion": 9, "b": 9, "bn": 9,
    "trillion": 12, "tn": 12,
}

_NUMBER_RE = regex.compile(
    r"""
    (?P<sign1>[-−+])?\s*
    (?P<currency>[$€£¥₹])?\s*
    (?P<sign2>[-−+])?\s*
    (?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    \s*(?P<scale>thousand|million|billion|trillion|mn|bn|tn|[kmb])?
    \s*(?P<percent>%)?
    """,
    regex.VERBOSE | regex.IGNORECASE,
)


def parse_number(text: str) -> Decimal | None:
    """The number `text` states, as an exact Decimal; None if it is not one number."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    negative = False
    if len(text) > 2 and text[0] == "(" and text[-1] == ")":
        negative, text = True, text[1:-1].strip()
    m = _NUMBER_RE.fullmatch(text)
    if m is None or (m["sign1"] and m["sign2"]):
        return None
    sign = m["sign1"] or m["sign2"]
    if sign in ("-", "−"):
        if negative:  # "(-3)" is ambiguous; refuse rather than guess
            return None
        negative = True
    value = Decimal(m["digits"].replace(",", ""))
    if m["scale"]:
        exact = Context(prec=len(text) + 12)  # wide enough that nothing is rounded
        value = value.scaleb(_SCALES[m["scale"].lower()], context=exact)
        if value.as_tuple().exponent > 0:  # 1.2E+6 -> 1200000, as people write it
            value = value.quantize(Decimal(1), context=exact)
    return -value if negative else value


def as_number(value: object) -> Decimal | None:
    """`value` (Decimal, int, float or number text) as a finite Decimal; None otherwise.

    Booleans are not numbers here. Floats go through their shortest repr, so 91.7 stays
    91.7 rather than 91.7000000000000028421709430404007434844970703125.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, Decimal)):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    else:
        number = parse_number(value) if isinstance(value, str) else None
    return number if number is not None and number.is_finite() else None


def format_decimal(value: Decimal) -> str:
    """`value` as text without exponent, JSON-safe: 1.2E+6 -> "1200000", -0.0 -> "0.0"."""
    return format(value.copy_abs() if value.is_zero() else value, "f")

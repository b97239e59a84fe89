"""Units in arithmetic: consumes the units of COMPUTE's operands (from the quantities
EXTRACT typed: kind, currency, scale), produces the amounts brought to one scale and
the unit of the result, or a ToolError when two operands cannot be combined.

An operand without a unit (a number the plan writes, or a value nobody typed) is
*plain*: it takes the unit of what it meets, so `$REV - 5` subtracts 5 in `$REV`'s
scale and currency, and an expression over plain values only behaves as plain
arithmetic. The rules, for typed operands:

- `+ - min max %` and comparisons: money with money in one currency (two currencies:
  CURRENCY_MISMATCH), a percent with a percent (points), a number with anything but
  the other's kind decides; money with a percent is UNIT_MISMATCH. Both are brought to
  the smaller of their scales first: 5.4 (billions) + 300 (millions) is 5,700 millions.
- `*`: money times a number or a percent is money, scales add (a price times millions
  of shares is millions); a percent times a number, or two percents, is a number;
  money times money has no unit the answer could name (plain).
- `/`: money over money in one currency is a ratio (a number, scale 0: 5.4 billion over
  9,576 thousand is 563.9); a percent over a percent is a number; money over a number
  or a percent stays money, scales subtract; a number over money is plain.
A percent keeps its written amount (7.5 for 7.5 %): `$REV * $MARGIN / 100` is money.
(COMPUTE reads `$AMOUNT * 1000` and `$AMOUNT / 1000`, with the power of a thousand
written in the expression, as the amount restated in another scale.)
Scales stay within what a document writes (0 to 12): a result past them is restated
(a negative scale in units, one past 12 in trillions).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from shared.errors import ToolError
from shared.models.quantity import SCALE_WORDS, Quantity


@dataclass(frozen=True)
class Unit:
    kind: str
    """`number`, `money` or `percent`."""
    currency: str | None = None
    """Money's ISO 4217 code; None when not known."""
    scale: int = 0
    """The power of ten the amount is in (3: thousands, 6: millions)."""


def unit_of(q: Quantity) -> Unit:
    """The unit of a typed value (not a date)."""
    return Unit(q.kind, q.unit if q.kind == "money" else None, q.scale)


def quantity_of(value: Decimal, unit: Unit | None, text: str) -> Quantity | None:
    """The quantity a result of `unit` is; None for a plain one."""
    if unit is None:
        return None
    return Quantity(kind=unit.kind, amount=value, unit=unit.currency, scale=unit.scale,
                    text=text)


Typed = tuple[Decimal, "Unit | None"]


def common(left: Typed, right: Typed, what: str, says: tuple[str, str]) -> tuple[Decimal, Decimal, Unit | None]:
    """`left` and `right` (value, unit) in one scale, for `what` (adding, comparing…),
    and the unit of the result; `says` names the two operands for an error."""
    (a, ua), (b, ub) = left, right
    if ua is None or ub is None:
        return a, b, ua or ub
    kinds = {ua.kind, ub.kind}
    if kinds == {"money", "percent"}:
        money, percent = (says[0], says[1]) if ua.kind == "money" else (says[1], says[0])
        raise ToolError("UNIT_MISMATCH", f"{what} an amount of money ({money}) and a percent "
                        f"({percent}) means nothing; take the percent of the amount "
                        f"({money} * {percent} / 100) or compare like with like")
    if ua.kind == ub.kind == "money" and ua.currency and ub.currency and \
            ua.currency != ub.currency:
        raise ToolError("CURRENCY_MISMATCH", f"{what} {says[0]} ({ua.currency}) and {says[1]} "
                        f"({ub.currency}) would mix currencies; COMPUTE never converts "
                        "between them: extract both in one currency, or convert one with a "
                        "rate the plan states")
    kind = "money" if "money" in kinds else "percent" if "percent" in kinds else "number"
    currency = ua.currency or ub.currency if kind == "money" else None
    scale = min(ua.scale, ub.scale)
    return (a.scaleb(ua.scale - scale), b.scaleb(ub.scale - scale),
            Unit(kind, currency, scale))


def product(ua: Unit | None, ub: Unit | None) -> Unit | None:
    """The unit of a product (scales add; see `settle`)."""
    if ua is None or ub is None:
        return ua or ub
    kinds = sorted((ua.kind, ub.kind))
    if kinds == ["money", "money"]:
        return None
    kind = "money" if "money" in kinds else "number"
    currency = ua.currency or ub.currency if kind == "money" else None
    return Unit(kind, currency, ua.scale + ub.scale)


def quotient(ua: Unit | None, ub: Unit | None, says: tuple[str, str]) -> tuple[Unit | None, bool]:
    """The unit of a quotient (scales subtract; see `settle`), and whether it is a ratio
    of like kinds, stated in units."""
    if ub is None:
        return ua, False
    if ua is None:
        return (None, False) if ub.kind == "money" else (Unit("number", None, -ub.scale), False)
    if ua.kind == ub.kind == "money":
        if ua.currency and ub.currency and ua.currency != ub.currency:
            raise ToolError("CURRENCY_MISMATCH", f"dividing {says[0]} ({ua.currency}) by "
                            f"{says[1]} ({ub.currency}) gives an exchange rate, not a "
                            "ratio; extract both in one currency")
        return Unit("number", None, ua.scale - ub.scale), True
    if ub.kind == "money":
        return None, False
    if ua.kind == "money":
        return Unit("money", ua.currency, ua.scale - ub.scale), False
    return Unit("number", None, ua.scale - ub.scale), ua.kind == ub.kind


def settle(value: Decimal, unit: Unit | None, ratio: bool = False) -> Typed:
    """`value` restated so that its unit's scale is one a document writes (0 to 12), and
    0 for a `ratio`."""
    if unit is None or (unit.scale in SCALE_WORDS and not (ratio and unit.scale)):
        return value, unit
    scale = 0 if ratio else min(max(unit.scale, 0), max(SCALE_WORDS))
    return value.scaleb(unit.scale - scale), Unit(unit.kind, unit.currency, scale)

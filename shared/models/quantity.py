"""Typed values: what EXTRACT binds and COMPUTE reads, a figure with its kind, unit and
scale, so that no step reads a year as an amount or divides millions by thousands.

A `Quantity` is the value as the document states it (`amount` in the document's
`scale`: 9,576 in a table "in thousands" is amount 9576, scale 3) together with the text
it was read from; `absolute()` is the amount in units (9,576,000). Money carries its
currency (`unit`, an ISO 4217 code: USD, EUR, GBP, JPY, CNY, INR); a percent is the
number before the sign (7.5 for 7.5 %); a date is an ISO day in `date`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from .fields import Text

Kind = Literal["number", "money", "percent", "date"]
KINDS: tuple[str, ...] = ("number", "money", "percent", "date")
SCALE_WORDS = {0: "", 3: "thousand", 6: "million", 9: "billion", 12: "trillion"}
"""Powers of ten a document states figures in, and the word for each."""


class Quantity(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    kind: Kind
    amount: Decimal | None = None
    """The figure as the document gives it, in `scale` (None only for a date)."""
    unit: Text | None = None
    """Money: the currency (ISO 4217, `USD`); otherwise None."""
    scale: int = 0
    """The power of ten `amount` is in: 0 units, 3 thousands, 6 millions, 9 billions."""
    date: str | None = None
    """A date's ISO day (`2019-09-30`)."""
    text: Text
    """The value as the document writes it (`(9,576)`, `$5.4 billion`, `—`)."""

    @model_validator(mode="after")
    def _complete(self) -> Quantity:
        if self.kind == "date" and self.date is None:
            raise ValueError("a date quantity needs `date` (YYYY-MM-DD)")
        if self.kind != "date" and self.amount is None:
            raise ValueError(f"a {self.kind} quantity needs `amount`")
        if self.scale not in SCALE_WORDS:
            raise ValueError(f"scale {self.scale} is not one of {sorted(SCALE_WORDS)}")
        return self

    def absolute(self) -> Decimal:
        """`amount` in units (the scale applied); a date has none (ValueError)."""
        if self.amount is None:
            raise ValueError("a date has no amount")
        return self.amount.scaleb(self.scale)

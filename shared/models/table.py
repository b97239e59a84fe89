"""The table a document holds, as the table reader produces it and EXTRACT reads it by
row (a line item) and column (a period): consumes nothing, defines the contract.

Cells are parallel to `columns`; a row's label is the whole line item (a label that
wraps onto two lines is joined); `section` is the heading row above it with no cells
("Cash flows from investing activities:"). A column's `period` is a scope
(shared/search/dates.py: `2019`, `2019-Q3`, `2018-10-01..2019-09-30`, `2018-12-31`) or
None when its header names none; `header` is the header text above it, lines joined.
`unit` and `scale` are the table's own ("(In thousands)", "$ in millions"); a cell's
quantity carries them already.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from shared.models.fields import Text
from shared.models.quantity import Quantity


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Column(_Model):
    header: Text = ""
    """The header text above the column, its lines joined with a space."""
    period: str | None = None
    """The span the column is about, as a scope; None when the header names none."""


class Cell(_Model):
    text: Text
    """The cell as written (`(9,576)`, `—`, `12.5%`, `$ 1,452.4`)."""
    quantity: Quantity | None = None
    """Its value, typed, in the table's unit and scale; None for text and empty cells."""


class Row(_Model):
    label: Text
    """The line item, wrapped lines joined (`Purchase of property and equipment`)."""
    cells: list[Cell | None]
    """One per column, None where the row has no cell."""
    section: Text | None = None
    """The heading above the row, if any (`Cash flows from investing activities`)."""
    total: bool = False
    """A subtotal or total line (`Total current liabilities`, `Net cash provided by…`)."""
    marked: bool = False
    """The label bore a footnote mark (`Research and development expenses (1)`), which
    `label` drops: the note qualifies what the row states ("(1) Excludes stock-based
    compensation expense")."""

    def both_signs(self, percent: bool = False, columns: list[int] | None = None) -> bool:
        """Whether the row states figures of both signs among its amounts (or, `percent`,
        its percents), in `columns` (all when None): net income 542.0 beside (762.3),
        where a negative is the figure's sign rather than an amount shown as an
        outflow."""
        amounts = [c.quantity.amount for i, c in enumerate(self.cells)
                   if (columns is None or i in columns) and c is not None and c.quantity
                   is not None and (c.quantity.kind == "percent") == percent
                   and c.quantity.amount is not None]
        return any(a < 0 for a in amounts) and any(a > 0 for a in amounts)


class Table(_Model):
    page: int | None = Field(None, ge=1)
    """The page the table is on (1-based), when the document has pages."""
    title: Text | None = None
    """The heading or caption above the table (`CONSOLIDATED STATEMENTS OF CASH FLOWS`)."""
    lead_in: Text | None = None
    """The sentence above the table that leads in to it, however long ("The aggregate
    carrying values of the VIEs' assets and liabilities … were as follows (in
    millions):"): whose figures they are, never words of its labels."""
    unit: str | None = None
    """The currency the table states its money in (`USD`), when it says one."""
    scale: int = 0
    """The power of ten its figures are in: 3 for "(In thousands)", 6 for "$ in millions"."""
    columns: list[Column]
    rows: list[Row]

    def alike(self, column: int) -> list[int]:
        """The columns that state what `column` states, over other periods: the columns
        with a period when it has one; else `column` alone (`Shares` beside `Weighted
        average grant date fair value` are two measures, whose signs say nothing of each
        other)."""
        if column < len(self.columns) and self.columns[column].period:
            return [i for i, c in enumerate(self.columns) if c.period]
        return [column]

"""EXTRACT by row (read.py; request.py what a step asks for, messages.py what the
reader says, series.py the row in every period, `period: "all"`): consumes a step with `row` (and `period`), the Evidence of the
documents its source holds (a GET's document; a top_k GET's or a SEARCH's, best first)
and a way to read a document's tables (`SearchBackend.tables`), produces the one cell
the row and period name: its text as the value, its `quantity` (in the table's unit
and scale), the row as the table writes it with the column's header as `quote`, and the
document's evidence with the table's page.

The row matches by words (shared/tools/rows.py) — the step's own, and the names the
domain library gives the line item (shared/tools/line_items.py: `capital expenditure`
is also `purchases of property, plant and equipment`) — the column by `period`
(shared/tables/periods.py `columns_for`; without one, the column headed "Total" of a
table by period, else the table's newest column, or its one column of figures; of
several, the one whose header says most of the step's words beyond the row's label,
`total` among them for a row that is no total: `Operating leases` under `Total` for
"total operating leases"). In a
table whose columns name no period, a row whose label (else heading) names one is read
for that period without its period's words (`Outstanding at September 30, 2018` as
`outstanding` for 2018; the rows under `As at 31 December 2019`), in its columns of
figures whose headers share a word with the row asked (else all of them); a row naming
another period is not read. The
first document whose tables hold the row for that period answers. Among the rows that fit, the best way of fitting wins: the label is the name,
then it is the name under its heading, then the name qualified after a comma, then
a label whose words are all the name's with the rest said by its heading, its table's
title or the header of the column read (`APAC` under `Fiscal Year 2018 Net Sales`); the
step's own words before the library's; then a heading the item sits under
(`investing activities`, or words the row gives in parentheses or before a colon);
then the fewest words beyond the name; then a total over the rows of other tables —
but within one table a row that is not a total over the total it is a part of, unless
the step says "total" (`Cost of goods sold` over `Total cost of goods sold` below it).
A step that asks for a figure per share never reads a row that counts shares (its
label, or its heading with a cell not written as money: "Basic earnings per share"
under "Weighted average number of shares … (shares, millions)").
A step asking for `Total` alone reads a line labelled `Total` and nothing else,
which its heading or what the step and the label say in parentheses (`Total (loan)`)
tells apart.
Rows and columns that fit alike and state the same figure (a summary repeating the
statement) are one answer.

A step's `fallback` stands in for a cell that is not found or not a value (confidence
`fallback`, no evidence), never for an ambiguous one.

ToolError codes: NOT_FOUND (no row fits, or none has a figure for the period: the
message names the nearest rows and the columns their tables have), AMBIGUOUS (rows or
columns that fit alike state different figures: each is named), NOT_A_VALUE (the cell
is not a figure of the kind asked for, or is text), NOT_A_DOCUMENT (the source holds
no document), SEARCH_FAILED and SEARCH_UNAVAILABLE (the tables cannot be read).
"""

from .messages import TablesOf, nearest_rows
from .read import Option, backend_tables, read_cell, read_cells

__all__ = ["Option", "TablesOf", "backend_tables", "nearest_rows", "read_cell", "read_cells"]

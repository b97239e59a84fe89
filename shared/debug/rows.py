"""Explain an EXTRACT by row that read no cell: consumes the step, its error and the
documents its source fetched (and the search store, when at hand), produces the
Diagnosis `chordal debug` prints — the rows of those documents' tables nearest the one
asked for, each with its table, page and the periods of its columns, and the change to
make: name one of those rows, give a period its columns have, or fetch another document.
"""

from __future__ import annotations

from shared.errors import StoreError, ToolFailure
from shared.models import Evidence, ExtractStep
from shared.search import SearchBackend
from shared.tools.cells import backend_tables, nearest_rows

from .diagnosis import Diagnosis

SHOWN = 5
"""Rows a diagnosis lists."""
FIXES = {
    "NOT_FOUND": "write `row` as one of the rows below writes it (or as the domain library "
                 "names the line item), give a `period` their columns have, or GET the "
                 "document whose tables hold the row",
    "AMBIGUOUS": "name the row as the table writes it, put the heading it sits under before "
                 "a colon (\"investing activities: purchases of property\"), or give a "
                 "`period` that names one column",
    "NOT_A_VALUE": "the cell is not a figure of the kind asked for: give `quantity` the "
                   "cell's kind (percent for a share of revenue), or read another row",
}


def row_diagnosis(step: ExtractStep, code: str, message: str, documents: list[Evidence],
                  backend: SearchBackend | None) -> Diagnosis:
    """The Diagnosis of an EXTRACT by row that failed with `code`."""
    rows: list[str] = []
    reachable = backend is not None
    if reachable and documents:
        try:
            rows = nearest_rows(step, documents, backend_tables(backend, step), SHOWN)
        except (ToolFailure, StoreError):
            reachable = False
    fix = FIXES.get(code, "see the message; fix the step and ask again")
    if not documents:
        fix = "the step's source fetched no document: fix the GET or SEARCH step it reads"
    elif not reachable:
        fix += "; run `chordal debug` where the search store is reachable to see the nearest rows"
    elif not rows:
        fix = ("no row of the fetched documents' tables shares a word with the row asked "
               "for: check that GET fetched the right document, and that it was indexed with "
               "its tables (a PDF or HTML file, or a record with `tables`)")
    return Diagnosis(step=step.id, code=code, cause=message, suggestion=fix, rows=rows)

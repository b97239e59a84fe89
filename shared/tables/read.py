"""The table reader's entry points: consumes a PDF page's words with their positions,
text laid out in columns (as `pdftotext -layout` writes a page) or rows of cells (an
HTML table, a JSON record's, a TAT-QA table), produces the `Table`s they hold (model.py)
with columns' periods, unit and scale, and typed cells.

A table the reader is not sure of is left out: a wrong cell is worse than no table.
"""

from __future__ import annotations

from shared.errors import InputError

from .assemble import assemble
from shared.models.table import Table
from .rows import read_rows
from .lines import Word, pdf_lines, text_lines
from .words import Heads, page_tables

__all__ = ["Pages", "Word", "pdf_lines", "table_from_rows", "tables_from_rows", "tables_in_text",
           "tables_in_words"]


def tables_in_words(lines: list[list[Word]], page: int | None = None) -> list[Table]:
    """The tables on a page given as its lines top to bottom, each line its words as
    `(x0, x1, text)` left to right (pdfplumber's `extract_words()` through
    `pdf_lines`). InputError naming the first word that is not `(x0, x1, text)`."""
    return Pages().tables(lines, page)


class Pages:
    """The table reader over a document's pages in order: `tables(lines, page)` as
    `tables_in_words`, where a table at the top of a page that states no column heads,
    under the columns of a table that reached the foot of the page before, is read under
    that table's heads, unit and title (a balance sheet broken over two pages)."""

    def __init__(self) -> None:
        self._heads: Heads | None = None

    def tables(self, lines: list[list[Word]], page: int | None = None) -> list[Table]:
        for number, line in enumerate(lines, 1):
            for at, word in enumerate(line, 1):
                if not (isinstance(word, (tuple, list)) and len(word) == 3 and isinstance(
                        word[2], str) and all(isinstance(x, (int, float)) for x in word[:2])):
                    raise InputError(f"tables_in_words: word {at} of line {number} is "
                                     f"{word!r}, not (x0, x1, text): give each word as two "
                                     "numbers and its text, e.g. "
                                     "pdf_lines(page.extract_words())")
        found, self._heads = page_tables(lines, page, self._heads)
        return found


def tables_in_text(text: str, page: int | None = None) -> list[Table]:
    """The tables in `text` laid out in columns (a page of `pdftotext -layout`): the same
    reader as `tables_in_words`, with character offsets as positions. Form feeds in
    `text` start new pages, numbered from `page` (from 1 when it is None); a table
    continued from one page to the next is read as `Pages` reads it."""
    found: list[Table] = []
    chunks = text.split("\f")
    pages = Pages()
    for number, chunk in enumerate(chunks):
        at = (page or 1) + number if page is not None or len(chunks) > 1 else None
        found.extend(pages.tables(text_lines(chunk), page=at))
    return found


def table_from_rows(rows: list[list[str]], page: int | None = None,
                    title: str | None = None) -> Table | None:
    """The table rows of cells make (the first column the labels, the rows above the
    first figures its header); `title` is the caption or the text that introduces it
    ("… (in millions):"), read for the unit and scale too. None when it holds no figures
    or cannot be read."""
    read = read_rows(rows)
    if read is None:
        return None
    headers, notes, lines, _ = read
    return assemble(headers, lines, notes=notes, title=title, page=page)


def tables_from_rows(rows: list[list[str]], page: int | None = None,
                     title: str | None = None) -> list[Table]:
    """Every table rows of cells make: `table_from_rows`'s, then one more for each row
    below it that starts a header of its own (the same table for the year before, set
    under the first). The unit and scale stated above the first hold for all."""
    found: list[Table] = []
    notes = ""
    while rows and (read := read_rows(rows)) is not None:
        headers, own, lines, rows = read
        notes = " ".join(filter(None, (notes, own)))
        table = assemble(headers, lines, notes=notes, title=title, page=page)
        if table is not None:
            found.append(table)
    return found

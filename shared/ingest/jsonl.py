"""Corpus files: consumes a JSONL file (one document object a line), produces a list of
validated Documents, or one InputError listing every bad line so nothing half-loads (a
file without a document is an error too: nothing would be indexed).

A line looks like:
    {"title": "...", "content": "...", "date": "2023-09-30", "url": "https://...",
     "source_type": "official_report", "id": "optional-stable-id"}

A document with pages gives them as `"pages": ["page 1 text", "page 2 text", ...]`
instead of `content` (or as `content` with a form feed before each page after the
first, as pdftotext writes them). Its tables, when the record gives them, are
`"tables": [TABLE, ...]`, each the rows of cells a table is (`[["", "2019", "2018"],
["Revenue", "108,716", "114,065"]]`) or an object `{"rows": [...], "page": 3, "title":
"Consolidated statements of cash flows (In thousands)"}`; the table reader reads
their headers, periods, unit and scale. A record without `tables` gets the tables its
text lays out in columns.
"""

from __future__ import annotations

import json
from pathlib import Path


from shared.errors import InputError, quoted
from shared.models.table import Table
from shared.tables.read import tables_from_rows, tables_in_text

from shared.search.document import PAGE_BREAK, Document, describe

MAX_REPORTED = 10
"""How many bad lines one error message lists before summarizing the rest."""


def load_jsonl(path: str | Path) -> list[Document]:
    """Every document in the JSONL file at `path`; InputError naming file, line and field
    of each bad line when any line is bad."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; give the path of a JSONL corpus file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot be read as UTF-8 text ({e})") from None
    docs: list[Document] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            docs.append(_document(line))
        except ValueError as e:  # JSONDecodeError and ValidationError are ValueErrors
            problems.extend(f"{path.name} line {number}: {p}" for p in describe(e))
    if problems:
        shown = problems[:MAX_REPORTED]
        if len(problems) > MAX_REPORTED:
            shown.append(f"… and {len(problems) - MAX_REPORTED} more problems")
        head = f"{path}: nothing loaded; fix these lines and retry"
        raise InputError("\n".join([head, *shown]))
    if not docs:
        raise InputError(f"{path}: no documents in the file; write one JSON object a line, "
                         'like {"title": "…", "content": "…"}')
    return docs


def _document(line: str) -> Document:
    try:
        record = json.loads(line)
    except RecursionError:
        raise ValueError("nested too deeply to read; write one flat JSON object a line") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object with 'title' and 'content', got {type(record).__name__}")
    if "pages" in record:
        record = {**record, "content": _pages(record)}
        del record["pages"]
    doc = Document.model_validate({**record, "tables": []})
    tables = _tables(record["tables"]) if "tables" in record else tables_in_text(doc.content)
    return doc.model_copy(update={"tables": tables})


def _pages(record: dict) -> str:
    pages = record["pages"]
    if "content" in record:
        raise ValueError("give either 'content' or 'pages', not both")
    if not isinstance(pages, list) or not pages or not all(isinstance(p, str) for p in pages):
        raise ValueError("field 'pages' must be a list of strings, one a page")
    if any(PAGE_BREAK in p for p in pages):
        raise ValueError("field 'pages': a page holds a form feed, which separates pages; "
                         "split it into two pages")
    return PAGE_BREAK.join(pages)


_TABLE_KEYS = ("rows", "page", "title")


def _tables(value: object) -> list[Table]:
    """The tables a record gives, read from their rows of cells."""
    if not isinstance(value, list):
        raise ValueError("field 'tables' must be a list of tables, each a list of rows of "
                         'cells or {"rows": [...], "page": N, "title": "..."}')
    found: list[Table] = []
    for n, table in enumerate(value):
        where = f"field 'tables[{n}]'"
        rows, page, title = table, None, None
        if isinstance(table, dict):
            unknown = sorted(set(table) - set(_TABLE_KEYS))
            if unknown:
                raise ValueError(f"{where}: key {unknown[0]!r} is not allowed; use "
                                 f"{', '.join(_TABLE_KEYS)}")
            rows, page, title = table.get("rows"), table.get("page"), table.get("title")
            if page is not None and (not isinstance(page, int) or isinstance(page, bool)
                                     or page < 1):
                raise ValueError(f"{where}: 'page' must be a page number from 1, got {quoted(page)}")
            if title is not None and not isinstance(title, str):
                raise ValueError(f"{where}: 'title' must be a string, got {quoted(title)}")
        if not (isinstance(rows, list) and all(isinstance(r, list) for r in rows)
                and all(isinstance(c, (str, int, float)) or c is None for r in rows for c in r)):
            raise ValueError(f"{where}: a table is a list of rows, each a list of cell "
                             'strings, like [["", "2019"], ["Revenue", "108,716"]]')
        found += tables_from_rows([["" if c is None else str(c) for c in r] for r in rows],
                                  page=page, title=title)
    return found

"""Document readers: consume the files a user has (PDF, HTML, JSON Lines) with the
metadata given for them (options, a sidecar JSON: metadata.py), produce validated
Documents with their pages and tables, or an InputError naming the file and the fix.

`files_of(paths)` lists the files to read (a directory: the readable files under it);
`read_file(path, options)` reads one by its suffix: a PDF (pdf.py, its columns of text
laid out by layout.py) or an HTML page (html.py) is one document, a JSON Lines file
(jsonl.py) one a line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from shared.errors import InputError
from shared.search.document import Document, describe

from .jsonl import load_jsonl

from .metadata import FIELDS, SIDECAR, given_metadata, missing_title

SUFFIXES = {".pdf": "PDF", ".html": "HTML", ".htm": "HTML", ".jsonl": "JSON Lines"}
"""The files `chordal index` reads, by suffix (any case)."""

__all__ = ["FIELDS", "Read", "SUFFIXES", "check_metadata", "files_of", "load_jsonl",
           "read_file"]


@dataclass(frozen=True)
class Read:
    """What one file gave."""

    path: Path
    documents: list[Document]
    pages: int
    """Pages of the PDF or HTML page (0 for a JSON Lines file)."""
    seconds: float
    title_from: str | None = None
    """Where the title came from when it was not given: "<title>" for an HTML page."""
    unread: list[str] = field(default_factory=list)
    """What of the file the reader failed on and left out, naming the page and the error
    (the rest is indexed): `page 431: its tables were not read (IndexError: …)`."""

    @property
    def tables(self) -> int:
        return sum(len(d.tables) for d in self.documents)


def files_of(paths: list[Path]) -> list[Path]:
    """`paths` with each directory replaced by the readable files under it (sorted;
    sidecars and other files left out); InputError for a path that is neither."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*")
                            if p.is_file() and p.suffix.lower() in SUFFIXES)
            if not inside:
                raise InputError(f"{path}: no {', '.join(sorted(set(SUFFIXES)))} file in this "
                                 "directory; give the files to index")
            found += inside
        elif not path.exists():
            raise InputError(f"{path}: no such file; give the path of a PDF, an HTML page or "
                             "a JSONL corpus file")
        else:
            found.append(path)
    return found


def check_metadata(path: Path, options: dict[str, str | None] | None = None) -> str:
    """What can be known of the file at `path` before reading it: its kind (`PDF`,
    `HTML`, `JSON Lines`), else InputError for a suffix Chordal does not read, options
    given for a JSON Lines file, an unusable sidecar, a PDF without a title, or a field
    that is not valid (a date that is no date). `chordal index` checks every file so
    before reading any: a missing title is said at once, not after the other files'
    pages were read."""
    return _checked(path, options)[0]


def _checked(path: Path, options: dict[str, str | None] | None) -> tuple[str, dict[str, Any]]:
    """`check_metadata`'s kind, and the fields given for a PDF or HTML file (none for a
    JSON Lines file)."""
    options = {k: v for k, v in (options or {}).items() if v is not None}
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        extra = (f" (the metadata of {path.name.removesuffix(SIDECAR)} is read from it)"
                 if path.name.endswith(SIDECAR) else "")
        raise InputError(f"{path}: cannot index a {path.suffix or 'suffix-less'} file{extra}; "
                         f"Chordal reads {', '.join(SUFFIXES)} files")
    if kind == "JSON Lines":
        if options:
            raise InputError(f"{path}: --{next(iter(options)).replace('_', '-')} describes one "
                             "PDF or HTML file; a JSON Lines file's records carry their own "
                             "fields")
        return kind, {}
    fields = given_metadata(path, options)
    if kind == "PDF" and not fields.get("title"):
        raise missing_title(path)
    _validated(path, {"title": "(the page's <title>)", **fields, "content": "(its text)"})
    return kind, fields


def _validated(path: Path, fields: dict) -> Document:
    try:
        return Document.model_validate(fields)
    except ValidationError as e:
        raise InputError(f"{path}: {'; '.join(describe(e))}") from None


def read_file(path: Path, options: dict[str, str | None] | None = None,
              progress: Callable[[int, int], None] | None = None,
              processes: int | None = None) -> Read:
    """The documents of the file at `path`; `options` are its metadata given on the
    command line; `progress(page, pages)` follows a PDF page by page, whose words
    `processes` find (unset: one per core; see shared/ingest/pdf.py)."""
    kind, fields = _checked(path, options)
    started = time.perf_counter()
    if kind == "JSON Lines":
        docs = load_jsonl(path)
        return Read(path, docs, 0, time.perf_counter() - started)
    if kind == "PDF":
        from .pdf import read_pdf  # pdfplumber loads only for PDFs

        text = read_pdf(path, progress, processes)
        title = None
    else:
        from .html import read_html

        text = read_html(path)
        title = text.title
    title_from = None if fields.get("title") or not title else "<title>"
    fields.setdefault("title", title)
    if not fields.get("title"):
        raise missing_title(path)
    doc = _validated(path, {**fields, "content": text.content, "tables": text.tables})
    return Read(path, [doc], text.pages, time.perf_counter() - started, title_from,
                text.unread)

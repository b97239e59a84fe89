"""PDF files: consumes the path of a PDF, produces its text page by page (each page's words
laid out in columns, pages joined by `PAGE_BREAK`) and the tables the table reader finds
on its pages, through pdfplumber (MIT, on pdfminer.six).

One page is read at a time and its parsed objects dropped once its text and tables are
taken, so memory follows the largest page, not the whole file. A PDF that cannot be read
(not a PDF, encrypted, broken) or holds no text at all (a scan: it needs OCR first)
raises InputError naming the file and what to do.

A fault of Chordal's own reading on one page (the layout or the table reader raising on
words nobody foresaw, as page 431 of Tesla's 10-K for 2020 once did) costs that page
only: its words are kept in reading order, or its tables left out, and `unread` names
the page and the error, so that a 400-page filing is not lost to one page and the fault
can be reported.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pdfplumber
from pdfplumber.utils.exceptions import MalformedPDFException, PdfminerException

from shared.errors import InputError, fault
from shared.search.document import PAGE_BREAK
from shared.models.table import Table
from shared.tables.read import Pages

from .layout import Placed, char_width, laid_out, lines_of

# pdfminer warns on every odd font or object a real filing holds; the file still reads
logging.getLogger("pdfminer").setLevel(logging.ERROR)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PdfText:
    content: str
    """The pages' text, joined by PAGE_BREAK."""
    tables: list[Table]
    pages: int
    unread: list[str] = field(default_factory=list)
    """The pages read in part, each with what failed: `page 431: its tables were not read
    (IndexError: list index out of range)`."""


def read_pdf(path: Path, progress: Callable[[int, int], None] | None = None) -> PdfText:
    """The text and tables of the PDF at `path`; `progress(page, pages)` after each page."""
    pages: list[str] = []
    tables: list[Table] = []
    unread: list[str] = []
    try:
        with pdfplumber.open(path) as pdf:
            count = len(pdf.pages)
            reader = Pages()
            for number, page in enumerate(pdf.pages, start=1):
                text, found, failed = _page(page, number, reader)
                pages.append(text)
                tables += found or []
                unread += failed
                if found is None:  # a table it was reading may have broken it
                    reader = Pages()
                page.close()
                if progress:
                    progress(number, count)
    except (PdfminerException, MalformedPDFException) as e:
        raise InputError(f"{path}: cannot be read as a PDF ({_reason(e)}); check that the "
                         "file is a whole, unencrypted PDF") from None
    if not any(p.strip() for p in pages):
        raise InputError(f"{path}: the PDF holds no text ({len(pages)} pages of images, "
                         "likely a scan); run OCR on it first (e.g. ocrmypdf) and index "
                         "the result")
    if unread:
        log.warning("%s: %d pages read in part: %s", path, len(unread), "; ".join(unread))
    return PdfText(PAGE_BREAK.join(pages), tables, len(pages), unread)


def _page(page, number: int, reader: Pages) -> tuple[str, list[Table] | None, list[str]]:
    """The page's text, its tables (None when the table reader failed on it) and what
    failed on it."""
    words = [Placed(w["x0"], w["x1"], w["top"], w["bottom"], w["text"])
             for w in page.extract_words() if w["upright"] and w["text"].strip()]
    if not words:
        return "", [], []
    failed = []
    try:
        width = char_width(words)
        lines = lines_of(words, width)
    except Exception as e:  # noqa: BLE001 - Chordal's own reading, on words nobody foresaw
        failed.append(f"page {number}: its words were not read into lines ({fault(e)}); its "
                      "text is in reading order and its tables were not read")
        return " ".join(w.text for w in words), None, failed
    try:
        text = laid_out(lines, width)
    except Exception as e:  # noqa: BLE001
        failed.append(f"page {number}: its words were not laid out in columns ({fault(e)}); "
                      "its text is in reading order")
        text = "\n".join(" ".join(w.text for w in line.words) for line in lines)
    try:
        found = reader.tables([line.cells() for line in lines], number)
    except Exception as e:  # noqa: BLE001
        failed.append(f"page {number}: its tables were not read ({fault(e)})")
        found = None
    return text, found, failed


def _reason(error: Exception) -> str:
    """What pdfminer said, without the exception class wrapping it."""
    inner = error.args[0] if error.args and isinstance(error.args[0], Exception) else error
    return str(inner) or type(inner).__name__

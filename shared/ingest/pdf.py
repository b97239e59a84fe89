"""PDF files: consumes the path of a PDF, produces its text page by page (each page's words
laid out in columns, pages joined by `PAGE_BREAK`) and the tables the table reader finds
on its pages, through pdfplumber (MIT, on pdfminer.six).

Finding a page's words is nearly all of the time (pdfminer parsing the page: about 98% of
it on a 110-page 10-K); a file of `MIN_PAGES_TO_SHARE` pages or more has its pages' words
found by worker processes, one per core unless told (`processes`), while this process
lays each page out and reads its tables in page order (a table may run on over a page
break). A page's parsed objects are dropped once its words are taken, so memory follows
the largest pages, not the whole file. Should a worker process die, the pages not yet
read are read here, so nothing is lost. A PDF that cannot be read
(not a PDF, encrypted, broken) or holds no text at all (a scan: it needs OCR first)
raises InputError naming the file and what to do.

A fault of Chordal's own reading on one page (the layout or the table reader raising on
words nobody foresaw, as page 431 of Tesla's 10-K for 2020 once did) costs that page
only: its words are kept in reading order, or its tables left out, and `unread` names
the page and the error, so that a 400-page filing is not lost to one page and the fault
can be reported.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pdfplumber
from pdfplumber.utils.exceptions import MalformedPDFException, PdfminerException

from shared.errors import InputError, fault
from shared.search.document import PAGE_BREAK
from shared.stack.process import usable_cores
from shared.models.table import Table
from shared.tables.read import Pages

from .layout import Placed, char_width, laid_out, lines_of

# pdfminer warns on every odd font or object a real filing holds; the file still reads
logging.getLogger("pdfminer").setLevel(logging.ERROR)
log = logging.getLogger(__name__)
MIN_PAGES_TO_SHARE = 8
"""Below this many pages a file is read in this process: starting worker processes (each
imports pdfplumber and opens the file) costs about a second."""


@dataclass(frozen=True)
class PdfText:
    content: str
    """The pages' text, joined by PAGE_BREAK."""
    tables: list[Table]
    pages: int
    unread: list[str] = field(default_factory=list)
    """The pages read in part, each with what failed: `page 431: its tables were not read
    (IndexError: list index out of range)`."""


def read_pdf(path: Path, progress: Callable[[int, int], None] | None = None,
             processes: int | None = None) -> PdfText:
    """The text and tables of the PDF at `path`; `progress(page, pages)` after each page;
    `processes` find the pages' words (unset: one per core; 1: this process only)."""
    pages: list[str] = []
    tables: list[Table] = []
    unread: list[str] = []
    try:
        with pdfplumber.open(path) as pdf:
            count = len(pdf.pages)
            reader = Pages()
            # closed however the reading ends (Ctrl-C included): the worker processes stop
            # with it, where the interpreter's exit would wait for every page to be read
            with closing(_words_of_pages(path, pdf, processes)) as pages_words:
                for number, words in enumerate(pages_words, start=1):
                    text, found, failed = _page(words, number, reader)
                    pages.append(text)
                    tables += found or []
                    unread += failed
                    if found is None:  # a table it was reading may have broken it
                        reader = Pages()
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


def _words_of_pages(path: Path, pdf, processes: int | None) -> Iterator[list[Placed]]:
    """Each page's words in page order: found by worker processes for a file of
    MIN_PAGES_TO_SHARE pages or more, else (or once a worker has died) by `pdf` here."""
    count = len(pdf.pages)
    processes = min(processes or usable_cores(), count)
    done = 0
    if processes > 1 and count >= MIN_PAGES_TO_SHARE:
        # spawned, not forked: `chordal index` shows its progress from a thread, and a
        # fork copies whatever lock that thread holds
        pool = ProcessPoolExecutor(processes, multiprocessing.get_context("spawn"),
                                   initializer=_open_in_worker,
                                   initargs=(str(path), os.getpid()))
        try:
            for words in pool.map(_words_in_worker, range(count)):
                yield words
                done += 1
        except BrokenProcessPool as e:
            log.warning("%s: a process finding the words of its pages died (%s); pages %d "
                        "to %d are read in this process", path, e, done + 1, count)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    for index in range(done, count):
        yield _words_at(pdf, index)


_WORKER_PDF = None
"""The file a worker process finds words in, opened once by `_open_in_worker`."""


def _open_in_worker(path: str, parent: int) -> None:
    global _WORKER_PDF
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the reading process's to handle
    _end_with(parent)
    _WORKER_PDF = pdfplumber.open(path)


def _end_with(parent: int) -> None:
    """On Linux, have this process killed when `parent` ends, however it ends (a `chordal
    index` killed by SIGTERM leaves no worker waiting for pages); elsewhere nothing."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _words_in_worker(index: int) -> list[Placed]:
    return _words_at(_WORKER_PDF, index)


def _words_at(pdf, index: int) -> list[Placed]:
    """The upright words of page `index` of `pdf`, with their boxes; the page's parsed
    objects are dropped once they are taken."""
    page = pdf.pages[index]
    try:
        return [Placed(w["x0"], w["x1"], w["top"], w["bottom"], w["text"])
                for w in page.extract_words() if w["upright"] and w["text"].strip()]
    finally:
        page.close()


def _page(words: list[Placed], number: int,
          reader: Pages) -> tuple[str, list[Table] | None, list[str]]:
    """The page's text, its tables (None when the table reader failed on it) and what
    failed on it."""
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

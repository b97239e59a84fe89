"""`chordal index FILE... [--title …] [--backend …]`: reads PDF files, HTML pages and
JSON Lines corpora (a directory: the ones under it), with their metadata from options
(one file) or a sidecar `FILE.json` next to each, and adds their documents to the
search store, then clears the shared GET cache.

Progress goes to stderr a line a file, a bad file is named with what to fix, and a run
with any bad file writes nothing: the SQLite store writes the documents as the files are
read, in one transaction that a bad file rolls back (memory holds one file, not the
run); for Elasticsearch, which has no transaction, every file is read before any
document is sent (it then names the documents it rejected). stdout says what was
indexed. A page the reader failed on (shared/ingest/pdf.py) is named in a warning line,
and the rest of its file is indexed.
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Iterator, Optional

import typer
from rich.console import Console
from rich.markup import escape

from producers.cli.output import fail
from shared.config import Settings
from shared.errors import ChordalError, InputError
from shared.search import BACKENDS, Document, default_backend, open_backend
from shared.ingest import Read, check_metadata, files_of, read_file
from shared.ingest.metadata import sidecar_of

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True, highlight=False)


def index(files: list[Path] = typer.Argument(
              ..., help="PDF files, HTML pages (.html, .htm) or JSON Lines corpora (title, "
              "content or pages, tables, id, date, period, url, source_type); a directory "
              "stands for those under it."),
          backend_name: Optional[str] = typer.Option(
              None, "--backend", help="sqlite or elasticsearch (default: elasticsearch when "
              "CHORDAL_ES_URL is set, else sqlite)."),
          title: Optional[str] = typer.Option(
              None, "--title", help="The title of the one PDF or HTML file indexed (GET names "
              "documents by it); for several files write a sidecar FILE.json next to each."),
          date: Optional[str] = typer.Option(None, "--date", help="Its publication date, "
                                             "YYYY-MM-DD."),
          period: Optional[str] = typer.Option(None, "--period", help="The span it is about "
                                               "(2024, FY2024, 2024-Q3, 2023-10-01..2024-09-30)."),
          url: Optional[str] = typer.Option(None, "--url", help="Where a reader finds it."),
          source_type: Optional[str] = typer.Option(None, "--source-type",
                                                    help="Its kind: filing, official_report, …"),
          processes: Optional[int] = typer.Option(
              None, "--processes", min=1, help="Processes finding a PDF's words, the most "
              "of the time (default: one per usable core, at most a container's CPU "
              "quota; 1: none besides this one).")):
    """Add documents to the search store (SQLite: all or nothing; Elasticsearch: per
    document, naming any it rejected) and clear the shared GET cache."""
    from shared.search.cache import clear_get_cache

    settings = Settings()
    kind = backend_name or default_backend(settings)
    if kind not in BACKENDS:
        fail(f"--backend {kind!r} is not one of {', '.join(BACKENDS)}")
    options = {"title": title, "date": date, "period": period, "url": url,
               "source_type": source_type}
    try:
        paths = files_of(files)
        _one_file_for_options(options, paths)
        reader = Reader(paths, options, processes)
        docs = reader.documents()
        if kind == "elasticsearch":  # no transaction there: every file read before any is sent
            docs = iter(list(docs))
        first = next(docs, None)  # a run whose files all fail leaves no store behind
        backend = open_backend(settings, kind)
    except ChordalError as exc:
        fail(str(exc))
    try:
        added = backend.add(chain([first], docs)) if first is not None else 0
        total = backend.count()
    finally:  # also after a partial Elasticsearch failure: some documents may be new
        if settings.get_cache_s and not clear_get_cache(settings.effective_redis_url,
                                                        backend.identity):
            err.print("[dim]GET cache not cleared: no Redis answered (workers clear it when "
                      "they start)[/]")
        backend.close()
    source = str(paths[0]) if len(paths) == 1 else f"{len(paths)} files"
    out.print(f"indexed {added} documents from {escape(source)} into {kind} "
              f"({total} in the store)")
    out.print(periods_summary(reader.outlines), highlight=False)


def _one_file_for_options(options: dict[str, str | None], paths: list[Path]) -> None:
    given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
    if given and len(paths) > 1:
        verb = "describes" if len(given) == 1 else "describe"
        raise InputError(f"{', '.join(given)} {verb} one document, and {len(paths)} files "
                         f"were given; write each file's metadata in a sidecar next to it "
                         f"({sidecar_of(paths[0]).name} for {paths[0].name})")


class Reader:
    """The files read one by one, progress on stderr, their documents given as they come
    (the SQLite store writes each in the run's one transaction: memory holds one file).
    Once a file fails the rest are read only to name every bad one, and the end raises
    one InputError naming each: the store rolls back, nothing of the run is written."""

    def __init__(self, paths: list[Path], options: dict[str, str | None],
                 processes: int | None = None):
        self.paths, self.options, self.processes = paths, options, processes
        self.problems: list[str] = []
        self.outlines: list[Document] = []
        """The documents given, without their contents and tables (for the summary)."""
        self._seen: dict[str, Path] = {}

    def documents(self) -> Iterator[Document]:
        # what is wrong before reading (a PDF without a title, a bad sidecar) is said
        # before any file's pages are read, which may take minutes
        for path in self.paths:
            try:
                check_metadata(path, self.options)
            except InputError as exc:
                self.problems.append(str(exc))
        self._raise_problems()
        for n, path in enumerate(self.paths, start=1):
            read = self._read(n, path)
            for doc in read.documents if read else []:
                first = self._seen.setdefault(doc.id, path)
                if first != path:  # one would be indexed over the other
                    self.problems.append(
                        f"{path}: its document {doc.title!r} has the id of one in {first} (the "
                        "same title, date and url, or the same id); give each its own title or id")
                self.outlines.append(doc.model_copy(update={"content": "", "tables": []}))
                if not self.problems:
                    yield doc
        self._raise_problems()

    def _raise_problems(self) -> None:
        if len(self.paths) == 1 and self.problems:
            raise InputError(self.problems[0])
        if self.problems:
            raise InputError("\n".join([
                f"nothing indexed: {len(self.problems)} of {len(self.paths)} files cannot be "
                "indexed; fix them and run again", *self.problems]))

    def _read(self, n: int, path: Path) -> Read | None:
        counter = f"[{n}/{len(self.paths)}] " if len(self.paths) > 1 else ""
        with err.status(f"{counter}reading {escape(str(path))}") as status:
            def progress(page: int, pages: int) -> None:
                status.update(f"{counter}reading {escape(str(path))}: page {page} of {pages}")
            try:
                read = read_file(path, self.options, progress, self.processes)
            except InputError as exc:
                self.problems.append(str(exc))
                if len(self.paths) > 1:
                    err.print(f"{counter}{escape(str(path))}: [red]not indexed[/]")
                return None
        err.print(f"{counter}{escape(str(path))}: {_summary(read)}")
        if read.unread:
            shown = "; ".join(read.unread[:3]) + (f"; and {len(read.unread) - 3} more"
                                                   if len(read.unread) > 3 else "")
            err.print(f"{counter}[yellow]{escape(str(path))}: read in part, the rest is "
                      f"indexed: {escape(shown)}; please report this with the file[/]")
        return read


def _summary(read: Read) -> str:
    docs = read.documents
    named = f"{docs[0].title!r}" + (f" (from its {read.title_from}; give one with --title or "
                                    "a sidecar to name it otherwise)" if read.title_from else "")
    parts = [named, f"{read.pages} pages"] if read.pages else [f"{len(docs)} documents"]
    parts.append(f"{read.tables} tables")
    return ", ".join(parts) + f" ({read.seconds:.1f} s)"


def periods_summary(docs: list[Document]) -> str:
    """How many documents carry a period (given, read from the title) and which fit no
    period at all, so a user sees what GETs naming a period can find."""
    given = sum(d.period_origin == "given" for d in docs)
    inferred = sum(d.period_origin == "inferred" for d in docs)
    bare = [d for d in docs if d.period is None and d.date is None]
    line = (f"periods: {given} given, {inferred} read from titles, "
            f"{len(docs) - given - inferred} none (these count by publication date)")
    if bare:
        line += (f"; {len(bare)} with neither period nor date (e.g. {bare[0].title!r}) are "
                 "found only by GETs that name no period")
    return line

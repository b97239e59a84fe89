"""`chordal index FILE... [--title …] [--backend …]`: reads PDF files, HTML pages and
JSON Lines corpora (a directory: the ones under it), with their metadata from options
(one file) or a sidecar `FILE.json` next to each, and adds their documents to the
search store, then clears the shared GET cache.

Every file is read before anything is written: progress goes to stderr a line a file,
a bad file is named with what to fix, and a run with any bad file writes nothing (the
SQLite store takes the rest all or nothing too; Elasticsearch names the documents it
rejected). stdout says what was indexed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from producers.output import fail
from shared.config import Settings
from shared.errors import ChordalError, InputError
from shared.search import BACKENDS, Document, default_backend, open_backend
from shared.search.readers import Read, files_of, read_file
from shared.search.readers.metadata import sidecar_of

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
                                                    help="Its kind: filing, official_report, …")):
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
        reads = _read_all(paths, options)
        backend = open_backend(settings, kind)
    except ChordalError as exc:
        fail(str(exc))
    docs = [d for r in reads for d in r.documents]
    try:
        added = backend.add(docs)
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
    out.print(periods_summary(docs), highlight=False)


def _one_file_for_options(options: dict[str, str | None], paths: list[Path]) -> None:
    given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
    if given and len(paths) > 1:
        verb = "describes" if len(given) == 1 else "describe"
        raise InputError(f"{', '.join(given)} {verb} one document, and {len(paths)} files "
                         f"were given; write each file's metadata in a sidecar next to it "
                         f"({sidecar_of(paths[0]).name} for {paths[0].name})")


def _read_all(paths: list[Path], options: dict[str, str | None]) -> list[Read]:
    """Every file read, progress on stderr; one InputError naming each bad file."""
    reads, problems = [], []
    for n, path in enumerate(paths, start=1):
        counter = f"[{n}/{len(paths)}] " if len(paths) > 1 else ""
        with err.status(f"{counter}reading {escape(str(path))}") as status:
            def progress(page: int, pages: int) -> None:
                status.update(f"{counter}reading {escape(str(path))}: page {page} of {pages}")
            try:
                read = read_file(path, options, progress)
            except InputError as exc:
                problems.append(str(exc))
                if len(paths) > 1:
                    err.print(f"{counter}{escape(str(path))}: [red]not indexed[/]")
                continue
        reads.append(read)
        err.print(f"{counter}{escape(str(path))}: {_summary(read)}")
    _distinct_ids(reads, problems)
    if len(paths) == 1 and problems:
        raise InputError(problems[0])
    if problems:
        raise InputError("\n".join([f"nothing indexed: {len(problems)} of {len(paths)} files "
                                    "cannot be indexed; fix them and run again", *problems]))
    return reads


def _summary(read: Read) -> str:
    docs = read.documents
    named = f"{docs[0].title!r}" + (f" (from its {read.title_from}; give one with --title or "
                                    "a sidecar to name it otherwise)" if read.title_from else "")
    parts = [named, f"{read.pages} pages"] if read.pages else [f"{len(docs)} documents"]
    parts.append(f"{read.tables} tables")
    return ", ".join(parts) + f" ({read.seconds:.1f} s)"


def _distinct_ids(reads: list[Read], problems: list[str]) -> None:
    """Two files giving one document id would index one over the other: name them."""
    seen: dict[str, Path] = {}
    for read in reads:
        for doc in read.documents:
            first = seen.setdefault(doc.id, read.path)
            if first != read.path:
                problems.append(f"{read.path}: its document {doc.title!r} has the id of one in "
                                f"{first} (the same title, date and url, or the same id); "
                                "give each its own title or id")


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

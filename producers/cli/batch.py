"""The batch commands of `chordal` (registered in producers/cli.py): `enqueue FILE`,
`status`, `wait`, `results`. Consumes a JSONL file of queries or a batch name; produces
messages on the `plan` queue, progress on stderr, summaries and exports on stdout.

`enqueue` is all or nothing: a first streaming pass checks every line
(producers/batch/file.py) and any bad line stops it with exit code 2 before anything is
submitted; a second pass submits (producers/batch/send.py). Exit codes: 0 success;
`wait`: 1 when a query failed or `--timeout` passed first; 2 bad input or unknown batch.
"""

from __future__ import annotations

import math
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn,
                           TextColumn, TimeElapsedColumn, TimeRemainingColumn)

from producers.batch.export import export_results
from producers.batch.file import LineDefaults, check_file, read_queries
from producers.batch.follow import STATES, BatchStatus, batch_status, wait_batches
from producers.batch.send import enqueue as send_batch
from producers.cancel import cancel_batch, cancel_queries
from producers.cli.output import fail
from shared.broker import lanes
from shared.stores.batch_counts import recount as redo_counts
from shared.stores.batches import BatchStore
from shared.broker.app import make_celery
from shared.config import Settings
from shared.errors import ChordalError
from shared.models import MODES
from shared.broker.census import Census, census, queue_depths
from shared.stack.embedded import is_stack_running
from shared.stores.runs import RunStore

BATCH_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
DEFAULT_MAX_IN_FLIGHT = 1000
out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)


@contextmanager
def progress_bar(description: str, total: int | None):
    """A rich progress bar on stderr (drawn only when stderr is a terminal)."""
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TaskProgressColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                   console=err, disable=not err.is_terminal)
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda advance=0, **kw: bar.update(task, advance=advance, **kw)


def stores(settings: Settings) -> tuple[BatchStore, RunStore]:
    runs = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
    try:
        runs.ping()
    except ChordalError as exc:
        fail(f"{str(exc).rstrip('.')}; start the stack with `chordal up` or point CHORDAL_REDIS_URL at "
             "its Redis", 1)
    return BatchStore(runs.r, settings.run_ttl_s), runs


def batch_names(batches: BatchStore, batch: str | None, settings: Settings) -> list[str]:
    if batch is None:
        names = batches.names()
        if not names:
            fail(f"no batches in the run store at {settings.masked_redis_url}; enqueue "
                 "one with `chordal enqueue FILE.jsonl`")
        return names
    if not batches.exists(batch):
        fail(f"no batch {batch!r} in the run store at {settings.masked_redis_url} "
             f"(known: {', '.join(batches.names()) or 'none'}); check --batch")
    return [batch]


def enqueue(file: Path = typer.Argument(..., help="JSON Lines: question, and optionally id, mode, domain, plan, deadline."),
            batch: Optional[str] = typer.Option(None, "--batch", help="Batch name (default: the file's name without extension)."),
            max_in_flight: int = typer.Option(DEFAULT_MAX_IN_FLIGHT, "--max-in-flight", help="Hold back while this many queries of the batch are sent and unfinished (0: no limit)."),
            mode: str = typer.Option("rewoo", "--mode", help="Mode of lines without one: rewoo, react or auto."),
            deadline: Optional[float] = typer.Option(None, "--deadline", help="Seconds a query may run once a planner takes it, for lines without one (default CHORDAL_QUERY_TIMEOUT_S; the wait in the queue is CHORDAL_BATCH_QUEUE_WAIT_S).")):
    """Submit one query per line of FILE as a batch; lines submitted before are skipped."""
    settings = Settings()
    batch = batch or file.stem
    if not BATCH_RE.match(batch):
        fail(f"--batch {batch!r}: use 1-64 letters, digits, _ . or -")
    if mode not in MODES:
        fail(f"--mode {mode!r} is not one of {', '.join(MODES)}")
    if max_in_flight < 0 or (deadline is not None and not 0 < deadline < math.inf):
        fail("--max-in-flight must be 0 or more and --deadline a finite number above 0")
    defaults = LineDefaults(batch=batch, mode=mode, max_steps=settings.max_steps,
                            max_plan_chars=settings.max_plan_chars,
                            deadline_s=deadline or settings.query_timeout_s)
    started = time.perf_counter()
    try:
        check = check_file(file, defaults)
    except ChordalError as exc:
        fail(str(exc))
    checked_s = time.perf_counter() - started
    batches, runs = stores(settings)
    if not is_stack_running(settings):
        err.print(f"[yellow]warning:[/] no workers serve the plan, execute and finalize "
                  f"queues at {escape(settings.masked_redis_url)}: the queries wait in "
                  "Redis, and fail at their deadline, until `chordal up` or `chordal worker` runs")
    app = make_celery(settings)
    try:
        with progress_bar(f"enqueue {batch}", check.queries) as advance:
            report = send_batch(read_queries(file, defaults, check.duplicates), batch,
                                batches, runs, app, max_in_flight=max_in_flight,
                                queue_wait_s=settings.batch_queue_wait_s,
                                lane_depth=settings.plan_lane_depth,
                                on_chunk=lambda n: advance(n))
    except KeyboardInterrupt:
        err.print(f"interrupted: run the same command again to submit the rest of batch "
                  f"{batch} (nothing is submitted twice)")
        raise typer.Exit(130) from None
    dups = f", {len(check.duplicates)} repeated lines" if check.duplicates else ""
    if not report.submitted:
        out.print(f"nothing submitted: all {check.queries} queries of batch {batch} were "
                  f"submitted before{dups.replace(',', ' (', 1) + ')' if dups else ''}; "
                  f"follow it with `chordal wait --batch {batch}`")
        return
    resent = f" ({report.resent} created by an interrupted run)" if report.resent else ""
    held = (f"; held back {report.waited_s:.1f}s by --max-in-flight"
            if report.waited_s >= 0.05 else "")
    out.print(f"submitted {report.submitted} queries{resent} to batch {batch} in "
              f"{report.seconds:.2f}s ({report.rate:.0f} queries/s while sending{held}); "
              f"lines checked in {checked_s:.2f}s; skipped {report.already} submitted "
              f"before{dups}. Follow it with `chordal wait --batch {batch}`")


def status(batch: Optional[str] = typer.Option(None, "--batch", help="One batch (default: every batch)."),
           as_json: bool = typer.Option(False, "--json", help="One JSON object per batch."),
           recount: Optional[str] = typer.Option(None, "--recount", metavar="NAME", help="Rebuild the counters of batch NAME from its records first (a repair; reads every record).")):
    """Counts per state, answers per second, p50/p95 latency and the oldest unfinished query."""
    settings = Settings()
    batches, runs = stores(settings)
    if recount is not None:
        batch_names(batches, recount, settings)
        if batch not in (None, recount):
            fail(f"--recount {recount!r} and --batch {batch!r} name two batches: give one")
        started = time.perf_counter()
        redo_counts(batches.r, recount, settings.run_ttl_s)
        err.print(f"recounted batch {recount} from its {batches.size(recount)} records in "
                  f"{time.perf_counter() - started:.2f}s")
        batch = recount
    for name in batch_names(batches, batch, settings):
        s = batch_status(batches, name)
        if as_json:
            out.print_json(data={**s.__dict__, "unfinished": s.unfinished}, indent=None)
        else:
            print_status(s)
    if not as_json:
        depth = queue_depths(runs.r)
        laned = lanes.waiting(runs.r)
        out.print("queue depth: " + ", ".join(f"{q} {n}" for q, n in depth.items())
                  + (f"; {laned} plan messages in batch lanes, waiting their turn"
                     if laned else ""))
        out.print(census_line(census(runs.r, settings.worker_dead_after_s),
                              settings.worker_dead_after_s))


def census_line(c: Census, dead_after_s: float) -> str:
    alive = ", ".join(f"{queue} {n}" for queue, n in c.live.items()) or "none"
    line = f"workers alive, by queue consumed: {alive}; {c.held} tasks held"
    if c.silent:
        line += (f"; {c.silent} silent for over {dead_after_s:g}s (dead: a live worker "
                 "gives their tasks back to the queues)")
    if c.refused:
        line += "\nmessages refused, never run: " + "; ".join(
            f"{r.queue} {escape(r.task)} {r.count} ({r.reason})" for r in c.refused)
    return line


def print_status(s: BatchStatus) -> None:
    counts = ", ".join(f"{st} {s.counts[st]}" for st in STATES if s.counts[st])
    out.print(f"[bold]batch {escape(s.batch)}[/]: {s.total} queries: {counts}")
    if s.p50_s is not None:
        recent = s.answers_per_s_last_minute or 0
        out.print(f"  {s.answers_per_s or 0:.1f} answers/s ({recent:.1f} over the last "
                  f"minute); latency queued→done p50 {s.p50_s:.2f}s, p95 {s.p95_s:.2f}s")
    if s.oldest_unfinished:
        o = s.oldest_unfinished
        out.print(f"  oldest unfinished: {o['id']} ({o['status']}, queued "
                  f"{o['age_s']:.0f}s ago; `chordal show {o['id']}`)")


def wait(batch: Optional[str] = typer.Option(None, "--batch", help="One batch (default: every batch)."),
         timeout: Optional[float] = typer.Option(None, "--timeout", help="Give up after this many seconds (default: until every query is done, failed or cancelled).")):
    """Wait until every query of the batch is done, failed or cancelled; exit 1 if any failed or was cancelled, or on timeout."""
    settings = Settings()
    batches, runs = stores(settings)
    names = batch_names(batches, batch, settings)
    label = f"batch {batch}" if batch else "every batch"
    with progress_bar(f"wait for {label}", None) as update:
        result = wait_batches(batches, runs, names, timeout, on_progress=lambda r: update(
            total=r.total, completed=r.done + r.failed + r.cancelled))
    cancelled = f", {result.cancelled} cancelled" if result.cancelled else ""
    line = (f"{label}: {result.done} done, {result.failed} failed{cancelled}, "
            f"{result.unfinished} unfinished of {result.total}")
    if result.unfinished:
        out.print(f"{line}: --timeout {timeout:g}s passed first")
    else:
        out.print(line)
    if result.failed:
        out.print(f"see why with `chordal results --batch {names[0]}` (field error)"
                  if len(names) == 1 else "see why with `chordal results --batch NAME`")
    raise typer.Exit(0 if result.done == result.total else 1)


def results(batch: str = typer.Option(..., "--batch", help="The batch to export."),
            out_path: str = typer.Option("-", "--out", help="JSONL file to write ('-': stdout).")):
    """Export one JSON line per query (id, question, status, answer, footnotes, error)."""
    settings = Settings()
    batches, _ = stores(settings)
    name = batch_names(batches, batch, settings)[0]
    total = batches.size(name)
    with progress_bar(f"results {name}", total) as advance:
        if out_path == "-":
            counts = export_results(batches, name, sys.stdout, lambda n: advance(n))
        else:
            target = Path(out_path)
            partial = target.with_name(target.name + ".partial")
            with partial.open("w", encoding="utf-8") as f:
                counts = export_results(batches, name, f, lambda n: advance(n))
            partial.replace(target)  # a reader never sees half a file
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    err.print(f"wrote {sum(counts.values())} results of batch {name} to "
              f"{'stdout' if out_path == '-' else out_path} ({summary})")


def cancel(query_id: Optional[str] = typer.Argument(None, help="The query to cancel."),
           batch: Optional[str] = typer.Option(None, "--batch", help="Cancel every unfinished query of this batch.")):
    """End unfinished queries as `cancelled`; answered ones are untouched. Exit codes: 0
    (something was cancelled, or everything had finished already); 2 an unknown query or
    batch, or both or neither given."""
    if (query_id is None) == (batch is None):
        fail("give a QUERY_ID or --batch NAME (one of them)")
    settings = Settings()
    batches, runs = stores(settings)
    if batch is not None:
        name = batch_names(batches, batch, settings)[0]
        out.print(cancel_batch(batches, runs, name, "cancelled by `chordal cancel "
                               f"--batch {name}`").line(f"batch {name}"))
        return
    result = cancel_queries(runs, [query_id], "cancelled by `chordal cancel`")
    if result.missing:
        fail(f"no query {query_id!r} in the run store at {settings.masked_redis_url}: "
             "check the id, or it expired after CHORDAL_RUN_TTL_S")
    if result.finished:
        out.print(f"query {query_id} had already finished ({runs.status(query_id)}): "
                  "nothing to cancel")
    else:
        out.print(f"query {query_id}: cancelled")

"""`chordal ask`, `show` and `debug`: answer one question and print it with its evidence
footnotes; print a query's record; explain its failed or empty steps."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError
from rich.markup import escape
from producers.submit import submit
from shared.broker.app import make_celery
from shared.config import Settings
from shared.debug import explain
from shared.errors import ChordalError, InputError, ToolError
from shared.models import MODES, TERMINAL, Query
from shared.plan.parse import load_plan_file_with_repairs
from shared.search import open_backend
from shared.stores.runs import RunStore
from shared.stores.texts import PAGE_CHARS, TextReader, readable, text_page

from producers.cli.output import err, fail, out, print_record
from producers.cli.stack import stack_for


def ask(question: str = typer.Argument(..., help="The question to answer."),
        plan: Optional[Path] = typer.Option(None, "--plan", help="Plan file (JSON) to run."),
        as_json: bool = typer.Option(False, "--json", help="Print the RunRecord as JSON."),
        timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds to wait for "
                                                "the answer (default CHORDAL_QUERY_TIMEOUT_S)."),
        mode: str = typer.Option("rewoo", "--mode", help="rewoo (plan, then run the steps), "
                                 "react (Thought/Action/Observation loop; needs an LLM) or auto "
                                 "(rewoo, continued by react when the answer is incomplete).")):
    """Answer one question and print the answer with its evidence footnotes."""
    settings = Settings()
    timeout = settings.query_timeout_s if timeout is None else timeout
    if mode not in MODES:
        fail(f"--mode {mode!r} is not one of {', '.join(MODES)}")
    if mode == "react" and plan:
        fail("--plan runs a given plan, which a ReAct loop does not use: drop --plan or "
             "use --mode rewoo or auto")
    if not 0 < timeout < math.inf:
        fail(f"--timeout {timeout:g}: give the seconds to wait as a finite number above 0")
    try:
        parsed, repairs = (load_plan_file_with_repairs(plan, max_steps=settings.max_steps,
                                                       max_chars=settings.max_plan_chars)
                           if plan else (None, []))
        query = Query(question=question, deadline_s=timeout, plan=parsed, repairs=repairs,
                      mode=mode)
    except ChordalError as exc:
        fail(str(exc))
    except ValidationError as exc:  # the question: the one field left unchecked here
        fail(f"QUESTION: {exc.errors()[0]['msg']}")
    with stack_for(settings, mode):
        store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
        submit(query, store, make_celery(settings))
        record = store.wait(query.id, timeout)
        if record.status not in TERMINAL:
            store.fail(query.id, f"no answer within --timeout {timeout:g}s "
                                 f"(last status: {record.status})")
            record = store.record(query.id)
    if as_json:
        print(record.model_dump_json(indent=2))
    else:
        print_record(out, record)
    raise typer.Exit(exit_code(record))


EXIT_ANSWERED, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_NOT_FOUND = 0, 1, 2, 3
"""`chordal ask`'s exit codes: a complete answer; the query failed (planning, the
deadline, the stack); bad input, nothing submitted; an answer that says what was not
found, or answers only part of the question."""


def exit_code(record) -> int:
    """The exit code of `chordal ask` for `record`."""
    if record.status != "done":
        return EXIT_FAILED
    return EXIT_ANSWERED if record.answer is not None and record.answer.complete \
        else EXIT_NOT_FOUND


def show(query_id: str, as_json: bool = typer.Option(False, "--json"),
         text: Optional[str] = typer.Option(None, "--text", metavar="STEP",
                                            help="print the document text step STEP read"),
         item: int = typer.Option(0, "--item", help="with --text: which text of a top_k GET"),
         offset: int = typer.Option(0, "--offset", help="with --text: first character"),
         limit: int = typer.Option(PAGE_CHARS, "--limit", help="with --text: characters")):
    """Print the record of a query: plan, steps with action_ids and timings, answer; or,
    with --text STEP, a page of the document text that step read."""
    settings = Settings()
    store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
    try:
        store.ping()
    except ChordalError as exc:  # Redis down, or the password in the URL refused
        fail(f"{str(exc).rstrip('.')}; start the stack with `chordal up`, or check "
             "CHORDAL_REDIS_URL (host, port, password)", 1)
    if text is not None:
        _show_text(settings, store, query_id, text, item, offset, limit, as_json)
        return
    record = store.record(query_id)
    if record is None:
        fail(f"no query {query_id!r} in the run store at {settings.masked_redis_url}", 1)
    if as_json:
        print(record.model_dump_json(indent=2))
    else:
        print_record(out, record, details=True)


def _show_text(settings: Settings, store: RunStore, query_id: str, step_id: str, item: int,
               offset: int, limit: int, as_json: bool) -> None:
    backend = open_backend(settings)
    try:
        page = text_page(store, backend, query_id, step_id, item, offset, limit)
    except InputError as exc:
        fail(f"--offset/--limit: {exc}", 2)
    except LookupError as exc:
        fail(str(exc), 1)
    except ToolError as exc:
        fail(exc.message, 1)
    finally:
        backend.close()
    if as_json:
        print(page.model_dump_json(indent=2))
        return
    sys.stdout.write(page.text + "\n")
    more = (f"; next: --offset {page.next_offset}" if page.next_offset is not None
            else " (the end)")
    print(f"[{page.doc_id} version {page.version}: characters {page.offset:,} to "
          f"{page.offset + len(page.text):,} of {page.chars:,}{more}]", file=sys.stderr)


def debug(query_id: str, as_json: bool = typer.Option(False, "--json")):
    """Explain each failed or empty step of a query: likely cause and a fix."""
    settings = Settings()
    store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
    store.ping()
    record = store.record(query_id)
    if record is None:
        fail(f"no query {query_id!r} in the run store at {settings.masked_redis_url}", 1)
    try:
        backend = open_backend(settings)
    except ChordalError as exc:
        err.print(f"[dim]search store unavailable ({exc}): titles will not be listed[/]")
        backend = None
    if backend is not None and any(s.texts for s in record.steps):  # not only the quotes
        record = readable(record, TextReader(backend, store.r, 0))
    diagnoses = explain(record, backend)
    if as_json:
        print("[" + ",\n".join(d.model_dump_json(indent=2) for d in diagnoses) + "]")
    elif not diagnoses:
        out.print(f"query {escape(query_id)} ({record.status}): no failed or empty steps",
                  highlight=False)
    else:
        out.print(f"query {escape(query_id)} ({record.status}): {len(diagnoses)} diagnos"
                  f"{'is' if len(diagnoses) == 1 else 'es'}", highlight=False)
        for d in diagnoses:
            out.print(escape(d.render()), highlight=False)

"""The `chordal` command: ask, up, worker, show, debug, demo, fake-llm (and the
commands registered from modules of their own at the bottom).

Bad input (a missing file, a malformed line, an invalid plan) prints one clear message
naming the line or field and exits with code 2, having written nothing.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from producers import api_cli, batch, cancel, config_cli, index_cli, local_llm_cli, ops, redis_auth_cli
from producers.output import fail, print_error, print_record
from producers.submit import submit
from shared import queues
from shared.broker import make_celery
from shared.config import Settings
from shared.debug import explain
from shared.errors import ChordalError, InputError, ToolError
from shared.models import MODES, TERMINAL, Query
from shared.plan.parse import load_plan_file_with_repairs
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.queues import QUEUE_REACT
from shared.stack.embedded import REQUIRED_QUEUES, Stack, is_stack_running
from shared.stack.supervise import Supervisor
from shared.store import RunStore
from shared.texts import PAGE_CHARS, TextReader, readable, text_page
from shared.urls import mask_url

DATA = Path(__file__).resolve().parent.parent / "shared" / "data"
cli = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Chordal: LLM agents as Celery chords on Redis.")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@contextlib.contextmanager
def stack_for(settings: Settings, mode: str = "rewoo"):
    """Use the running stack when one answers (with react workers for a `react` or
    `auto` query); otherwise run the embedded one meanwhile."""
    required = REQUIRED_QUEUES | ({QUEUE_REACT} if mode in ("react", "auto") else set())
    if is_stack_running(settings, frozenset(required)):
        yield
        return
    err.print("[dim]no running stack found: starting the embedded one for this command[/]")
    with Stack(settings):
        yield


@cli.command()
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


@cli.command()
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


@cli.command()
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


@cli.command()
def up(local_llm: bool = typer.Option(False, "--local-llm", help="Also run the local model "
                                      "server (chordal\\[local-llm], CHORDAL_LOCAL_LLM_*) and "
                                      "point the workers' CHORDAL_LLM_BASE_URL and "
                                      "CHORDAL_LLM_MODEL at it."),
       tls: bool = typer.Option(False, "--tls", help="Redis over TLS only, with one ACL user "
                                "per role (as CHORDAL_REDIS_TLS=true; needs a redis-server "
                                "built with TLS, CHORDAL_REDIS_SERVER). Certificates and "
                                "passwords are kept in CHORDAL_HOME/tls.")):
    """Run the embedded stack (Redis, planner, executor, finalizer, react) until Ctrl-C."""
    settings = Settings()
    tls_by_flag = tls and not settings.redis_tls
    if tls_by_flag:
        if settings.redis_url:
            fail("--tls starts the embedded Redis with TLS, but CHORDAL_REDIS_URL names "
                 "another Redis: unset CHORDAL_REDIS_URL, or drop --tls (that Redis's URL "
                 "says whether it speaks TLS: rediss://)")
        settings = settings.model_copy(update={"redis_tls": True})
    settings = settings.as_role("workers")  # the supervisor sweeps and restores as a worker
    stack = Stack(settings, local_llm=local_llm)
    if local_llm and settings.llm_base_url:
        err.print(f"CHORDAL_LLM_BASE_URL={mask_url(settings.llm_base_url)} is set; the "
                  "workers of this stack use the local model instead", markup=False)
    with stack:
        if stack.local_llm is not None:
            out.print(escape(stack.local_llm.describe()), highlight=False)
        out.print(f"chordal stack up: redis {escape(settings.masked_redis_url)}, home "
                  f"{settings.home}. Ctrl-C stops it.", highlight=False)
        if tls_by_flag:
            out.print("Other chordal commands reach this stack with CHORDAL_REDIS_TLS=true "
                      "(and the same CHORDAL_HOME).", highlight=False)
        store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
        supervisor = Supervisor(stack, store, say=lambda m: out.print(escape(m), highlight=False),
                                warn=lambda m: err.print(escape(m), highlight=False))
        with contextlib.suppress(KeyboardInterrupt):
            supervisor.run()
    out.print("chordal stack stopped")


@cli.command()
def worker(role: str = typer.Option("all", "--role", help="planner, executor, finalizer, react or all."),
           concurrency: Optional[int] = typer.Option(None, "--concurrency", "-c"),
           pool: str = typer.Option("threads", "--pool", help="threads, gevent (needs "
                                    "chordal\\[gevent]), prefork or solo.")):
    """Run one Celery worker in the foreground against CHORDAL_REDIS_URL."""
    from shared.stack.workers import check_pool, default_concurrency, worker_argv

    if role not in queues.ROLE_QUEUES:
        fail(f"--role {role!r} is not one of {', '.join(queues.ROLE_QUEUES)}")
    try:
        check_pool(pool)
    except ChordalError as exc:
        fail(str(exc))
    settings = Settings()
    n = concurrency or default_concurrency(role, settings)
    argv = worker_argv(role, f"{role}-{os.getpid()}@%h", pool, n)
    # a worker logs in as the `workers` ACL user (shared/redis_acl.py)
    os.execve(sys.executable, argv, {**os.environ, "CHORDAL_REDIS_ROLE": "workers"})


@cli.command()
def demo(timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds each "
                                                  "query may take (default CHORDAL_QUERY_TIMEOUT_S).")):
    """Index the bundled corpus, answer the bundled questions and plans, stop."""
    settings = Settings()
    timeout = settings.query_timeout_s if timeout is None else timeout
    docs = load_jsonl(DATA / "corpus.jsonl")
    open_backend(settings).add(docs)
    questions = [q for q in (DATA / "questions.txt").read_text().splitlines() if q.strip()]
    queries = [Query(question=q, deadline_s=timeout) for q in questions]
    for name in sorted((DATA / "plans").iterdir()):
        plan, repairs = load_plan_file_with_repairs(name, max_steps=settings.max_steps,
                                                    max_chars=settings.max_plan_chars)
        queries.append(Query(question=f"(plan {name.name})", plan=plan, repairs=repairs,
                             deadline_s=timeout))
    failed = 0
    with stack_for(settings):
        store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
        app = make_celery(settings)
        started = time.perf_counter()
        for q in queries:
            submit(q, store, app)
        for q in queries:
            record = store.wait(q.id, timeout)
            print_record(out, record)
            out.print()
            failed += record.status != "done"
        out.print(f"[bold]{len(queries) - failed}/{len(queries)} answered[/] in "
                  f"{time.perf_counter() - started:.2f}s")
    raise typer.Exit(1 if failed else 0)


@cli.command("fake-llm")
def fake_llm(script: Path = typer.Option(..., "--script", help="JSON Lines of {\"match\": REGEX or null, \"content\": TEXT} (or \"fault\") entries."),
             port: int = typer.Option(8765, "--port", help="TCP port to listen on."),
             latency: float = typer.Option(0.0, "--latency", help="Seconds to wait before every reply."),
             token_delay: float = typer.Option(0.0, "--token-delay", min=0.0, help="Seconds per token of every reply (a stream sends each token this long after the last; a whole reply waits tokens x this); the script's server line or an entry may set its own."),
             host: str = typer.Option("127.0.0.1", "--host", help="Address to bind.")):
    """Serve a scripted OpenAI-compatible endpoint (replies from FILE) until Ctrl-C."""
    from shared.stack.replay import serve  # FastAPI and uvicorn load only for this command

    try:
        serve(script, host=host, port=port, latency=latency, token_delay=token_delay)
    except ChordalError as exc:
        fail(str(exc))


# The commands that live in modules of their own (one module per area) are registered here.
cli.command("index")(index_cli.index)
cli.command("enqueue")(batch.enqueue)
cli.command("status")(batch.status)
cli.command("wait")(batch.wait)
cli.command("results")(batch.results)
cli.command("cancel")(cancel.cancel)
cli.command("api")(api_cli.api)
cli.command("config")(config_cli.config)
cli.command("flower")(ops.flower)
cli.command("local-llm")(local_llm_cli.local_llm)
cli.command("redis-auth")(redis_auth_cli.redis_auth)


def main() -> None:
    try:
        cli()
    except InputError as exc:
        print_error(str(exc))
        sys.exit(2)
    except ChordalError as exc:
        print_error(str(exc))
        sys.exit(1)

"""`chordal up`, `worker`, `demo` and `fake-llm`: run the embedded stack, one worker, the
bundled demo, or the replay server; and `stack_for`, the running stack or an embedded one
for the length of one command."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from producers.submit import submit
from shared import naming
from shared.broker.app import make_celery
from shared.config import Settings
from shared.errors import ChordalError
from shared.models import Query
from shared.plan.parse import load_plan_file_with_repairs
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.naming import QUEUE_REACT
from shared.stack.embedded import REQUIRED_QUEUES, Stack, is_stack_running
from shared.stack.supervise import Supervisor
from shared.stores.runs import RunStore
from shared.access.urls import mask_url

from producers.cli.output import err, fail, out, print_record

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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


LOCAL_LLM_DEADLINE_S = 300
"""A query deadline the local model meets on a small machine (docs/llm.md)."""


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
            if settings.query_timeout_s < LOCAL_LLM_DEADLINE_S:
                given = f"{settings.query_timeout_s:g}"
                err.print(f"A query asked with CHORDAL_QUERY_TIMEOUT_S={given} s may not be "
                          "planned in time: a small model on a few cores takes "
                          "minutes (the bundled one, on 2 cores: about a minute for a first "
                          f"plan). Ask with `chordal ask --timeout {LOCAL_LLM_DEADLINE_S}`, or "
                          f"set CHORDAL_QUERY_TIMEOUT_S={LOCAL_LLM_DEADLINE_S} where queries "
                          "are asked", markup=False, highlight=False)
        out.print(f"chordal stack up: redis {escape(settings.masked_redis_url)}, home "
                  f"{settings.home}. Ctrl-C stops it.", highlight=False)
        if tls_by_flag:
            out.print("Other chordal commands reach this stack with CHORDAL_REDIS_TLS=true "
                      "(and the same CHORDAL_HOME).", highlight=False)
        store = RunStore.from_url(settings.effective_redis_url, settings.run_ttl_s)
        supervisor = Supervisor(stack, store, say=lambda m: out.print(escape(m), highlight=False),
                                warn=lambda m: err.print(escape(m), highlight=False))
        signalled = None
        try:
            supervisor.run()
        except KeyboardInterrupt:  # Ctrl-C
            pass
        except SystemExit as e:  # SIGTERM (systemd, docker stop): exit as stopped by it
            signalled = e
    out.print("chordal stack stopped")
    if signalled is not None:
        raise signalled


def worker(role: str = typer.Option("all", "--role", help="planner, executor, finalizer, react or all."),
           concurrency: Optional[int] = typer.Option(None, "--concurrency", "-c"),
           pool: str = typer.Option("threads", "--pool", help="threads, gevent (needs "
                                    "chordal\\[gevent]), prefork or solo.")):
    """Run one Celery worker in the foreground against CHORDAL_REDIS_URL."""
    from shared.stack.workers import check_pool, default_concurrency, worker_argv

    if role not in naming.ROLE_QUEUES:
        fail(f"--role {role!r} is not one of {', '.join(naming.ROLE_QUEUES)}")
    try:
        check_pool(pool)
    except ChordalError as exc:
        fail(str(exc))
    settings = Settings()
    n = concurrency or default_concurrency(role, settings)
    argv = worker_argv(role, f"{role}-{os.getpid()}@%h", pool, n)
    # a worker logs in as the `workers` ACL user (shared/access/acl.py)
    os.execve(sys.executable, argv, {**os.environ, "CHORDAL_REDIS_ROLE": "workers"})


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

"""The `chordal` command: one module per command group, each registered here.

- ask.py: ask, show, debug; stack.py: up, worker, demo, fake-llm;
- batch.py: enqueue, status, wait, results, cancel; index.py: index;
- api.py: api; flower.py: flower; config.py: config; local_llm.py: local-llm;
  redis_auth.py: redis-auth; output.py: how records and errors are printed;
  settings_report.py: every effective setting and where it came from (`chordal config`).

Bad input (a missing file, a malformed line, an invalid plan) prints one clear message
naming the line or field and exits with code 2, having written nothing.
"""

from __future__ import annotations

import sys

import typer

from producers.cli import api, ask, batch, config, flower, index, local_llm, redis_auth, stack
from producers.cli.output import print_error
from shared.errors import ChordalError, InputError

cli = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Chordal: LLM agents on Celery and Redis: plan, fan out, join, answer.")
for name, command in [
        ("ask", ask.ask), ("show", ask.show), ("debug", ask.debug),
        ("up", stack.up), ("worker", stack.worker), ("demo", stack.demo),
        ("fake-llm", stack.fake_llm), ("index", index.index),
        ("enqueue", batch.enqueue), ("status", batch.status), ("wait", batch.wait),
        ("results", batch.results), ("cancel", batch.cancel), ("api", api.api),
        ("config", config.config), ("flower", flower.flower),
        ("local-llm", local_llm.local_llm), ("redis-auth", redis_auth.redis_auth)]:
    cli.command(name)(command)


def main() -> None:
    try:
        cli()
    except InputError as exc:
        print_error(str(exc))
        sys.exit(2)
    except ChordalError as exc:
        print_error(str(exc))
        sys.exit(1)

"""Print a RunRecord for people: the answer with footnotes, or why it failed."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from shared.models import RunRecord


def print_record(console: Console, record: RunRecord, details: bool = False) -> None:
    latency = f" in {record.latency_s:.2f}s" if record.latency_s is not None else ""
    console.print(f"[bold]Q:[/] {escape(record.question)}  [dim]({record.query_id}, "
                  f"{record.status}{latency}, planner: {record.planner or '-'})[/]")
    if record.answer is not None:
        console.print(escape(record.answer.render()), highlight=False)
    if record.error:
        console.print(f"[red]failed:[/] {escape(record.error)}", highlight=False)
    for p in record.problems:
        console.print(f"  - {p.step or 'plan'} [{p.code}]: {escape(p.message)}", highlight=False)
    if details:
        for s in record.steps:
            value = "" if s.value is None else str(s.value).replace("\n", " ")
            shown = value[:60] + ("…" if len(value) > 60 else "")
            tail = f"{s.error_code}: {s.error_message}" if s.status == "error" else shown
            console.print(f"  {s.action_id:<28} {s.operation:<8} {s.status:<5} "
                          f"{s.duration_ms:7.1f}ms  {escape(tail)}", highlight=False)

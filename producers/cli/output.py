"""Print a RunRecord for people: the answer with footnotes, or why it failed."""

from __future__ import annotations

import json
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from shared.models import RunRecord

_stderr = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console(soft_wrap=True)  # what a command prints
err = Console(stderr=True, soft_wrap=True)  # what it says about its work


def print_error(message: str) -> None:
    """`error: message` on stderr; markup in `message` is printed as written."""
    _stderr.print(f"[bold red]error:[/] {escape(message)}")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` as an error and end the command with exit code `code`."""
    print_error(message)
    raise typer.Exit(code)


def print_record(console: Console, record: RunRecord, details: bool = False) -> None:
    latency = f" in {record.latency_s:.2f}s" if record.latency_s is not None else ""
    mode = f", mode: {record.mode}" if record.mode != "rewoo" else ""
    console.print(f"[bold]Q:[/] {escape(record.question)}  [dim]({record.query_id}, "
                  f"{record.status}{latency}, planner: {record.planner or '-'}{mode})[/]")
    if record.answer is not None:
        console.print(escape(record.answer.render()), highlight=False)
    if record.error:
        console.print(f"[red]failed:[/] {escape(record.error)}", highlight=False)
    for p in record.problems:
        console.print(f"  - {p.step or 'plan'} [{p.code}]: {escape(p.message)}", highlight=False)
    if details:
        if record.plan_mode == "streamed":
            console.print("  [dim]plan streamed: each step was sent once written and ready; "
                          "'sent +Nms' counts from the request of the reply that wrote it[/]")
        sent = {d.step_id: d for d in record.dispatch}
        for s in record.steps:
            value = "" if s.value is None else str(s.value).replace("\n", " ")
            shown = value[:60] + ("…" if len(value) > 60 else "")
            tail = f"{s.error_code}: {s.error_message}" if s.status == "error" else shown
            console.print(f"  {s.action_id:<28} {s.operation:<8} {s.status:<5} "
                          f"{s.duration_ms:7.1f}ms{_sent(sent.get(s.step_id))}  {escape(tail)}",
                          highlight=False)
            print_candidates(console, s)
        print_unrun(console, record)
        print_iterations(console, record)


CANDIDATES_SHOWN = 4
"""Documents a GET's audit trail lists under it (the chosen one first)."""


def print_candidates(console: Console, step) -> None:
    """The documents a GET considered: which one it chose and why, and why others lost."""
    if step.document is not None and step.operation == "GET":
        e = step.document
        console.print(f"      document: {escape(e.cite())}", highlight=False)
    for c in step.candidates[:CANDIDATES_SHOWN]:
        console.print(f"      [dim]{c.verdict}:[/] {escape(repr(c.title))} (period "
                      f"{escape(c.period or 'none')}, published {escape(c.date or 'undated')}): "
                      f"{escape(c.reason)}", highlight=False)
    if len(step.candidates) > CANDIDATES_SHOWN:
        console.print(f"      [dim]… and {len(step.candidates) - CANDIDATES_SHOWN} more "
                      "(chordal show --json lists all)[/]", highlight=False)


def print_iterations(console: Console, record: RunRecord) -> None:
    """One block per ReAct iteration: Thought, Action, Observation, feedback; then tokens."""
    for it in record.iterations:
        action = (f"{it.tool}({_short(it.tool_input, 70)})" if it.tool is not None
                  else "(no valid action)")
        console.print(f"  [bold]R{it.n}[/] {escape(action)}  [dim]{it.duration_ms:.0f}ms"
                      f"{'  ' + it.action_id if it.action_id else ''}[/]", highlight=False)
        if it.thought:
            console.print(f"     thought: {escape(_short(it.thought, 110))}", highlight=False)
        if it.observation:
            console.print(f"     observation: {escape(_short(it.observation, 110))}",
                          highlight=False)
        if it.feedback:
            console.print(f"     [yellow]feedback:[/] {escape(_short(it.feedback, 110))}",
                          highlight=False)
    if record.llm_calls:
        prompt = sum(c.prompt_tokens for c in record.llm_calls)
        completion = sum(c.completion_tokens for c in record.llm_calls)
        forms = sorted({c.json_form for c in record.llm_calls if c.json_form})
        asked = f" (JSON asked for as {', '.join(forms)})" if forms else ""
        console.print(f"  [dim]{len(record.llm_calls)} LLM calls{asked}, {prompt} prompt + "
                      f"{completion} completion tokens[/]", highlight=False)


def print_unrun(console: Console, record: RunRecord) -> None:
    """A line per step of a rejected reply without a result: dropped unsent when the plan
    was closed, or sent and not run (skipped by its executor, or still running)."""
    stored = {s.step_id for s in record.steps}
    for d in record.dispatch:
        if d.in_plan or d.step_id in stored:
            continue
        what = ("dropped when the plan was closed, never sent" if d.dropped else
                "sent, no result (skipped, or still running)")
        action_id = f"{record.query_id}:{d.step_id}"
        console.print(f"  [dim]{action_id:<28} reply {d.attempt}, not in the final plan: "
                      f"{what}[/]", highlight=False)


def _sent(dispatch) -> str:
    """` sent +412ms` (streamed plans), and what no plan kept, for a step's line."""
    if dispatch is None:
        return ""
    when = (f" sent +{dispatch.after_reply_start_ms:.0f}ms"
            if dispatch.after_reply_start_ms is not None else "")
    return when + ("" if dispatch.in_plan else f" (reply {dispatch.attempt}, not in the final plan)")


def _short(value: object, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"

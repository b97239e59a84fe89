"""Draft: what a syntax reader (JSON, ReWOO, LLMCompiler) produces and parse.py consumes
— the plan-level fields and one raw step dict per step, before any model validation.

A step the reader could not make sense of is a `PlanProblem` in place of its dict; its
`step` id (when the reader found one) lets parse.py bind a stand-in, so that later steps
reading it are not reported as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from shared.models import PlanProblem

VAR_FIELDS = ("source", "query", "expression", "condition", "then", "else", "value", "sources")
"""Step fields that refer to other steps' outputs; text syntaxes rewrite their references."""

HEADER_RE = re.compile(r"^\s*(answer|domain)\s*:\s*(.*?)\s*$", re.IGNORECASE)
"""`Answer: <Jinja2 template>` and `Domain: finance` lines of the text syntaxes."""

FENCE_RE = re.compile(r"^\s*```[\w-]*\s*$")
"""A Markdown code-fence line, which LLMs often wrap plans in; readers skip it."""


def without_fences(text: str) -> str:
    """`text` with its Markdown fence lines blanked, not dropped, so line numbers stay
    those of the whole reply."""
    return "\n".join("" if FENCE_RE.match(line) else line for line in text.split("\n"))


@dataclass
class Draft:
    syntax: str
    """`json`, `rewoo` or `llmcompiler`."""
    fields: dict = field(default_factory=dict)
    """Plan-level fields: `domain`, `answer`, … (JSON: everything but `steps`)."""
    steps: object = None
    """The raw steps: a list of dicts (or PlanProblems) — from JSON, whatever was sent."""
    problems: list[PlanProblem] = field(default_factory=list)
    """Problems that belong to no step (a line that names no step, a bad header)."""
    lines: list[int | None] = field(default_factory=list)
    """The line each step was written on (text syntaxes), to name it in messages."""
    forms: dict[str, str] = field(default_factory=dict)
    """How this syntax writes each operation, appended to a step's bad_field message."""

    def add_header(self, line: str, number: int) -> bool:
        """Take an `Answer:`/`Domain:` line into `fields`; False when `line` is not one."""
        m = HEADER_RE.match(line)
        if m is None:
            return False
        key = m[1].lower()
        if key in self.fields:
            self.problems.append(syntax_problem(None, number, f"a second '{m[1]}:' line; "
                                                f"write '{m[1]}:' once"))
        self.fields[key] = m[2]
        return True


def rewrite_references(raw: dict, rewrite: Callable[[str], str]) -> dict:
    """`raw` with `rewrite` applied to the text of its VAR_FIELDS (lists item by item)."""
    out = dict(raw)
    for name in VAR_FIELDS:
        value = out.get(name)
        if isinstance(value, str):
            out[name] = rewrite(value)
        elif isinstance(value, list):
            out[name] = [rewrite(v) if isinstance(v, str) else v for v in value]
    return out


def unquote(text: str) -> str:
    """`text` stripped, without one pair of surrounding quotes or backticks."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    return text


def syntax_problem(step: str | None, number: int, what: str) -> PlanProblem:
    return PlanProblem(step=step, code="bad_syntax", message=f"line {number}: {what}")


def unknown_tool(step: str, number: int, tool: str, known: str) -> PlanProblem:
    return PlanProblem(step=step, code="unknown_operation", message=(
        f"line {number}: step {step} calls tool {tool!r}, which is not known; use one of "
        f"{known} (or pass a tools table that maps {tool!r} to an operation)"))

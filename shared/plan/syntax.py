"""Which of the three plan syntaxes a source is written in, and its `Draft`: consumes
plan text (str or UTF-8 bytes) or a decoded JSON dict, produces a Draft (draft.py).

Detection looks at the content, never at a file name: text whose first character is
`{` or `[` is JSON; text with a `#E1 = …` line is ReWOO; text with a `1. tool(…)` line
is LLMCompiler; text with a `Plan:` line is ReWOO; anything else that is valid JSON is
JSON (and then rejected as not an object). Markdown code-fence lines around a plan are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Literal

from shared.errors import PlanError
from shared.models import PlanProblem
from shared.plan.draft import Draft, without_fences
from shared.plan.json_plan import EXAMPLE, decode_json, read_json
from shared.plan.llmcompiler import read_llmcompiler
from shared.plan.rewoo import read_rewoo
from shared.plan.tools_table import ToolsTable

Syntax = Literal["json", "rewoo", "llmcompiler"]
_REWOO_STEP_RE = re.compile(r"^\s*(?:plan\s*:.*)?#E\d+\s*=", re.IGNORECASE | re.MULTILINE)
_REWOO_PLAN_RE = re.compile(r"^\s*plan\s*:", re.IGNORECASE | re.MULTILINE)
_LLMCOMPILER_RE = re.compile(r"^\s*\d+\s*\.\s*[A-Za-z_]\w*\s*\(", re.MULTILINE)
_FORMS = (f"JSON like {EXAMPLE}; ReWOO lines like 'Plan: …' then '#E1 = Wikipedia[Tesla "
          "Q3 2023 report]'; or LLMCompiler calls like '1. search(\"Tesla Q3 2023\")'")


def detect_syntax(text: str) -> Syntax | None:
    """The syntax `text` is written in, or None when it looks like none of them."""
    text = without_fences(text)
    if text.lstrip()[:1] in ("{", "["):
        return "json"
    if _REWOO_STEP_RE.search(text):
        return "rewoo"
    if _LLMCOMPILER_RE.search(text):
        return "llmcompiler"
    if _REWOO_PLAN_RE.search(text):
        return "rewoo"
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return None
    return "json"


def read_draft(source: str | bytes | dict, tools: Mapping[str, str] | None = None) -> Draft:
    """The Draft of `source` in whichever syntax it is written; PlanError when none."""
    if isinstance(source, dict):
        return read_json(source)
    if not isinstance(source, (str, bytes, bytearray)):
        raise TypeError(f"parse_plan takes plan text, bytes or a dict, not {type(source).__name__}")
    text = _text(source)
    table = ToolsTable(tools)
    syntax = detect_syntax(text)
    if syntax == "json":
        return read_json(decode_json(without_fences(text)))
    if syntax == "rewoo":
        return read_rewoo(text, table)
    if syntax == "llmcompiler":
        return read_llmcompiler(text, table)
    raise PlanError("plan is neither JSON, ReWOO nor LLMCompiler text", [PlanProblem(
        step=None, code="bad_syntax", message=f"the plan is written in no known syntax; "
        f"send {_FORMS}")])


def _text(source: str | bytes | bytearray) -> str:
    if isinstance(source, str):
        return source.removeprefix("\ufeff")
    try:
        return bytes(source).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise PlanError("plan is not UTF-8 text", [PlanProblem(
            step=None, code="bad_json", message=f"byte {e.start} is not UTF-8; send the "
            "plan as UTF-8 text")]) from None


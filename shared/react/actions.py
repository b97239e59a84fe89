r"""Read the model's reply: consumes the text of one ReAct turn, produces an `Action`
(Thought, tool name, tool input) or the reason there is none.

The model is asked for one JSON object:

    {"thought": "...", "action": {"tool": "search", "input": "Acme revenue Q3 2023"}}

Models bend that format, so the reader tolerates code fences, text around the object,
trailing commas, single and smart quotes, Python literals (True/None), unescaped regex
backslashes (a regex's `\\d` written as `\d`), a flat `{"tool": …, "input": …}`, and the
classic text form `Action: search[Acme revenue]`. A reply that still yields no tool
name gives an Action whose `error` starts with "no valid Action:" — the loop feeds it
back to the model and the iteration counts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FORMAT = '{"thought": "<your reasoning>", "action": {"tool": "<tool name>", "input": <input>}}'
"""The reply format the system prompt asks for (and the feedback repeats)."""

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_DOUBLE, _SINGLE = frozenset('"\u201c\u201d'), frozenset("'\u2018\u2019")
_OPEN = {**{q: _DOUBLE for q in _DOUBLE}, **{q: _SINGLE for q in _SINGLE}}
"""String delimiters a reply may use (straight or smart) -> the quotes that close them."""
_JSON_ESCAPES = set('"\\/nrtu')
_LITERALS = {"True": "true", "False": "false", "None": "null"}
_CLASSIC = re.compile(r"Action\s*:\s*([A-Za-z_][\w-]*)\s*\[(.*)\]\s*$", re.S | re.I)
_LANGCHAIN = re.compile(r"Action\s*:\s*([A-Za-z_][\w-]*)\s*\n\s*Action\s+Input\s*:\s*(.*)$",
                        re.S | re.I)
_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.I)
MAX_CANDIDATES = 12
"""Opening and closing braces tried, each; replies are short."""


@dataclass(frozen=True)
class Action:
    """What one reply asks for; `tool` is None (and `error` says why) when nothing parsed."""

    thought: str
    tool: str | None = None
    input: Any = None
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.tool is not None


def _closes(text: str, i: int) -> bool:
    """A quote at `i` ends its string only when structure follows (`, } ] :` or the end);
    otherwise it is a quote inside the text ("Tesla's", a "quoted" word)."""
    rest = text[i + 1:].lstrip()
    return not rest or rest[0] in ",}]:"


def to_json(text: str) -> str:
    """`text` (a JSON-like object) rewritten as strict JSON, as far as that is possible."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _OPEN:
            close, j, buf = _OPEN[c], i + 1, []
            while j < n:
                d = text[j]
                if d == "\\" and j + 1 < n:
                    e = text[j + 1]
                    # \' is no JSON escape; a regex's \d must reach the pattern as \\d
                    kept = "\\" + e if e in _JSON_ESCAPES else "\\\\" + e
                    buf.append("'" if e == "'" else kept)
                    j += 2
                    continue
                if d in close and _closes(text, j):
                    break
                buf.append({'"': '\\"', "\n": "\\n", "\t": "\\t", "\r": ""}.get(d, d))
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        elif c == ",":
            rest = text[i + 1:].lstrip()
            if not (rest and rest[0] in "}]"):
                out.append(c)  # a trailing comma is dropped
            i += 1
        elif c.isalpha():
            m = re.match(r"[A-Za-z_]\w*", text[i:])
            word = m.group(0)
            out.append(_LITERALS.get(word, word))
            i += len(word)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _objects(text: str):
    """Every JSON object found in `text`, longest first from the first brace."""
    starts = [m.start() for m in re.finditer(r"\{", text)][:MAX_CANDIDATES]
    ends = [m.start() for m in re.finditer(r"\}", text)][::-1][:MAX_CANDIDATES]
    for i in starts:
        for j in ends:
            if j <= i:
                break
            chunk = text[i:j + 1]
            for candidate in (chunk, to_json(chunk)):
                try:
                    obj = json.loads(candidate)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    yield obj, i, j
                    break


def _pick(obj: dict) -> tuple[str | None, Any, bool]:
    """(tool, input, has_action_key) of a parsed reply object."""
    low = {str(k).lower(): v for k, v in obj.items()}
    action = low.get("action")
    if isinstance(action, dict):
        inner = {str(k).lower(): v for k, v in action.items()}
        tool = inner.get("tool", inner.get("name"))
        value = next((inner[k] for k in ("input", "args", "arguments", "tool_input", "query")
                      if k in inner), None)
        return (tool if isinstance(tool, str) else None), value, True
    if isinstance(action, str):
        classic = _CLASSIC.match(f"Action: {action}")
        if classic:
            return classic[1], classic[2].strip(), True
        return action, low.get("input", low.get("action_input")), True
    tool = low.get("tool")
    return (tool if isinstance(tool, str) else None), low.get("input"), "tool" in low


def parse_action(reply: str) -> Action:
    """The Thought and Action of one model reply (see the module docstring)."""
    text = reply or ""
    fenced = _FENCE.findall(text)
    body = "\n".join(fenced) if fenced else text
    reason = "the reply holds no JSON object"
    for obj, start, _ in _objects(body):
        tool, value, has_key = _pick(obj)
        thought = obj.get("thought", obj.get("Thought"))
        if not isinstance(thought, str):
            thought = _THOUGHT.sub("", body[:start]).strip()
        if tool and tool.strip():
            return Action(thought=thought, tool=tool.strip().lower(), input=value)
        reason = ("the JSON's action names no tool" if has_key
                  else 'the JSON has no "action" object')
        break
    for pattern in (_CLASSIC, _LANGCHAIN):
        m = pattern.search(text)
        if m:
            thought = _THOUGHT.sub("", text[:m.start()]).strip()
            return Action(thought=thought, tool=m[1].lower(), input=m[2].strip())
    shown = " ".join(text.split())[:80] or "(empty)"
    return Action(thought=text.strip()[:1000],
                  error=f"no valid Action: {reason} (reply began: {shown!r}). "
                        f"Reply with exactly one JSON object: {FORMAT}")

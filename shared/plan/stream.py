"""Plan steps read out of a planner reply while it is still being written: consumes the
reply as text deltas (the text shared/planners/llm.py's `read_reply` reads once it is
whole), produces each step the moment it is completely written, in plan order, as
`StreamedStep(index, raw)`: `raw` is what the syntax reader makes of that step (a dict,
or a PlanProblem for a text line it cannot read), `index` its place in the plan.

    reader = StepReader()
    for delta in deltas:
        for step in reader.feed(delta): ...   # the steps this delta completed
    for step in reader.close(): ...           # those only the end completes

Where the plan starts is decided as `read_reply` decides it: lines that `detect_syntax`
finds ReWOO or LLMCompiler make a text plan; else the JSON object at the first "{" (after
prose or a code fence, too) is the reply: known at that "{" when it begins its line, else
when its line ends. JSON (`{"reasoning": …, "plan": {…, "steps": […]}}` or a bare plan):
a step is complete when its element of the plan's `steps` array closes. A scanner that
follows strings, escapes and the container stack finds it (it reads each character once,
keeps only the text it may still need, and checks the grammar as it goes), `json.loads`
reads it, and null members are left out as `read_reply` leaves them out. A plan written
as text inside the JSON (`"plan": "#E1 = …"`) is not streamed (`syntax` None). Text: a
step is complete with its line; whenever a delta completes a line that is not blank,
`read_draft` reads the complete lines again and the steps past those given are emitted (a
later line never changes an earlier step: each is read from its own line; it is checked
anyway).

It never raises. It stops (`stopped`) at malformed JSON, at `max_chars`, past
`REREAD_BUDGET`, or when the text contradicts a step already given (a second `plan` or
`steps` member, which `json.loads` would take instead; a text plan that turns out to be
in the other syntax). What it gave stays given: reading the whole reply with
`read_reply` remains the judge of the plan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from shared.config import MAX_PLAN_CHARS
from shared.errors import PlanError
from shared.llm.schema import without_nulls
from shared.plan.draft import FENCE_RE, without_fences
from shared.plan.syntax import Syntax, detect_syntax, read_draft
from shared.plan.tools_table import ToolsTable

REREAD_BUDGET = 1_000_000
"""Characters of complete text lines the reader may read again in all (under a second of
work; a 4,000-character ReWOO reply of 50 lines needs some 100,000) before it stops, so
that a reply of thousands of lines costs no more."""

_BLANK_RE = re.compile(r"[\s\ufeff]*")
_SPACE_RE = re.compile(r"[ \t\n\r]*")
_STRING_STOP_RE = re.compile(r'["\\\x00-\x1f]')
_HEX4_RE = re.compile(r"[0-9A-Fa-f]{4}")
_SCALAR_CHARS_RE = re.compile(r"[\w.+-]*")
_SCALAR_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
                        r"|true|false|null|NaN|-?Infinity")


@dataclass(frozen=True)
class StreamedStep:
    index: int
    """The step's position in the plan, from 0."""
    raw: object
    """The step as the syntax reader makes it: a dict (JSON: whatever the element is),
    or a PlanProblem for a text line it cannot read."""


class StepReader:
    """Plan steps out of a reply fed delta by delta (see the module docstring)."""

    def __init__(self, *, tools: Mapping[str, str] | None = None,
                 max_chars: int = MAX_PLAN_CHARS):
        ToolsTable(tools)  # a bad table is a usage error now, not a silent stream later
        self._tools = tools
        self._max_chars = max_chars
        self._text = ""  # the reply so far, until its JSON object starts
        self._size = 0  # characters taken, at most max_chars
        self._mode = "start"  # then "json" or "text"
        self._raws: list = []  # every raw emitted, in order
        self._closed = self._over = self._halted = False
        self._brace = -1  # where the first "{" is, once seen
        self._searched = self._checked = self._read = self._reread = 0
        self._heads: list[int] = []  # where the last three non-blank lines checked begin
        self._first = ""  # the first character of the first non-blank line
        self._scanner: _StepsScanner | None = None
        self._text_syntax: Syntax | None = None

    @property
    def syntax(self) -> Syntax | None:
        """The syntax the steps are read in; None while unknown, or when the reply's
        plan cannot be streamed (a JSON `plan` that is text, not an object)."""
        if self._mode == "json":
            return "json" if self._scanner.streamable else None
        return self._text_syntax

    @property
    def stopped(self) -> bool:
        """True once the reader has stopped early: malformed text, text past
        `max_chars`, or text that contradicts a step already emitted."""
        return self._halted or self._over or (self._scanner is not None and self._scanner.failed)

    def feed(self, delta: str) -> list[StreamedStep]:
        """The steps `delta` completes, in plan order."""
        if self._closed or self._over:
            return []
        room = self._max_chars - self._size
        if len(delta) > room:
            delta, self._over = delta[:max(room, 0)], True
        self._size += len(delta)
        return self._advance(delta, final=False)

    def close(self) -> list[StreamedStep]:
        """The steps only the end of the text completes (a last line with no newline)."""
        if self._closed:
            return []
        self._closed = True
        return [] if self._over else self._advance("", final=True)

    def _advance(self, delta: str, final: bool) -> list[StreamedStep]:
        before = len(self._raws)
        if self._halted:
            return []
        if self._mode == "json":  # the scanner keeps the part of the text it still needs
            self._raws += self._scanner.feed(delta, final)
            return self._since(before)
        self._text += delta
        if self._mode == "start":
            self._find_start(final)
        if self._mode == "text":
            self._read_lines(final)
        if self._mode == "json":
            self._raws += self._scanner.feed(self._text[self._brace:], final)
            self._text = ""
        return self._since(before)

    def _since(self, before: int) -> list[StreamedStep]:
        return [StreamedStep(i, raw) for i, raw in enumerate(self._raws[before:], before)]

    def _find_start(self, final: bool) -> None:
        """Decide as `read_reply` does: text syntax when the lines say so, else the JSON
        object at the first "{"; a "{" that begins its line needs only the lines above."""
        text = self._text
        if self._brace < 0:
            self._brace, self._searched = text.find("{", self._searched), len(text)
        limit = len(text) if final else text.rfind("\n") + 1  # the complete lines
        if self._brace >= 0:
            line = text.rfind("\n", 0, self._brace) + 1
            end = line if _BLANK_RE.fullmatch(text, line, self._brace) else (
                text.find("\n", self._brace) + 1 or (len(text) if final else -1))
            if end >= 0:
                if self._is_text(end):
                    self._mode = "text"
                else:
                    self._mode, self._scanner = "json", _StepsScanner()
                return
            limit = line
        if self._is_text(limit):
            self._mode = "text"

    def _is_text(self, end: int) -> bool:
        """Whether detect_syntax finds the lines before `end` ReWOO or LLMCompiler text.
        Only the lines not checked before are searched, with the three non-blank lines
        above them: a match of its patterns spans four non-blank lines at most."""
        text, new, start = self._text, [], self._checked
        if end <= start:
            return False  # checked before, and not text, or the mode would be "text"
        for line in text[start:end].split("\n"):
            if _meaningful(line):
                new.append(start)
            start += len(line) + 1
        self._checked = end
        if not new:
            return False
        window = text[(self._heads or new)[0]:end]
        self._first = self._first or text[new[0]:end].lstrip()[:1]
        self._heads = (self._heads + new)[-3:]
        # detect_syntax reads text that begins with "[" as JSON; "x" keeps a window from it
        return self._first != "[" and detect_syntax("x\n" + window) in ("rewoo", "llmcompiler")

    def _read_lines(self, final: bool) -> None:
        text = self._text
        limit = len(text) if final else text.rfind("\n") + 1
        new, self._read = text[self._read:limit], max(self._read, limit)
        if self._halted or not any(_meaningful(line) for line in new.split("\n")):
            return  # blank and fence lines change no step
        self._reread += limit
        if self._reread > REREAD_BUDGET:
            self._halted = True
            return
        try:
            draft = read_draft(without_fences(text[:limit]), self._tools)
        except PlanError:
            return
        done = len(self._raws)
        if done and (draft.syntax != self._text_syntax or draft.steps[:done] != self._raws):
            self._halted = True  # the whole reply reads otherwise than what was emitted
            return
        self._text_syntax = draft.syntax
        self._raws += draft.steps[done:]


class _StepsScanner:
    """The JSON reply's scanner: fed the text from the object's "{" on, it follows
    strings and the container stack and returns the elements of the plan's `steps`
    array as they close. It keeps only the text it may still need (the open element,
    key or number), so its work is linear in the text."""

    def __init__(self):
        self.buf = ""  # the text from where the scan may still need it
        self.pos = 0  # where the scan goes on, in buf
        self.stack: list[_Frame] = []
        self.string: str | None = None  # "key" or "value" while inside a string
        self.scalar = False  # inside a number, true, false or null
        self.mark = 0  # where the open string or scalar began, in buf
        self.item: int | None = None  # where the open element of the steps array began
        self.line_blank = False  # nothing but spaces since the last newline
        self.count = 0  # elements found
        self.plan_seen = False  # the reply has a "plan" member: a bare "steps" is not it
        self.streamable = True  # False while the "plan" member is not an object
        self.failed = self.finished = False

    def feed(self, text: str, final: bool) -> list:
        if self.failed or self.finished:
            return []
        self.buf += text
        found = self._scan(final)
        keep = min(self.pos, self.mark if self.scalar or self.string == "key" else self.pos,
                   self.pos if self.item is None else self.item)
        if keep:
            self.buf, self.pos, self.mark = self.buf[keep:], self.pos - keep, self.mark - keep
            self.item = None if self.item is None else self.item - keep
        return found

    def _scan(self, final: bool) -> list:
        text, found = self.buf, []
        i, n = self.pos, len(text)
        while i < n and not (self.failed or self.finished):
            if self.string is not None:
                m = _STRING_STOP_RE.search(text, i)
                if m is None:
                    i = n
                elif text[m.start()] == '"':
                    i = m.end()
                    self._string_closed(text, i, found)
                elif text[m.start()] == "\\":
                    j = m.start()
                    size = 6 if text[j + 1:j + 2] == "u" else 2
                    if j + size > n:
                        i = j
                        break  # the escape goes on in the next delta
                    self.failed = not (_HEX4_RE.fullmatch(text, j + 2, j + 6) if size == 6
                                       else text[j + 1] in '"\\/bfnrt')
                    i = j + size
                else:
                    self.failed = True  # a raw control character in a string
            elif self.scalar:
                j = _SCALAR_CHARS_RE.match(text, i).end()
                if j == n:
                    i = n  # the number may go on in the next delta
                elif not _SCALAR_RE.fullmatch(text, self.mark, j):
                    self.failed = True
                else:
                    self.scalar, i = False, j
                    self._value_end(text, j, found)
            elif text[i] in " \t\n\r":
                j = _SPACE_RE.match(text, i).end()
                self.line_blank = self.line_blank or text.find("\n", i, j) >= 0
                i = j
            elif text[i] == "`":  # JSON has none outside strings: a code-fence line?
                end = text.find("\n", i)
                if end < 0 and not final:
                    break
                end = n if end < 0 else end
                self.failed = not (self.line_blank and FENCE_RE.match(text[i:end]))
                i = end
            else:
                self.line_blank = False
                i = self._token(text, i, found)
        self.pos = i
        return found

    def _token(self, text: str, i: int, found: list) -> int:
        """Take the structural character at `i`; where to go on from."""
        c = text[i]
        if not self.stack:
            self.stack.append(_Frame("{", "top"))
            return i + 1
        frame = self.stack[-1]
        state = frame.state
        if state in ("key0", "key") and c == '"':
            self.string, self.mark = "key", i
        elif state == "colon" and c == ":":
            frame.state = "value"
        elif state == "next" and c == ",":
            frame.state = "key" if frame.kind == "{" else "item"
        elif (state in ("key0", "next") and c == "}" and frame.kind == "{") or (
                state in ("item0", "next") and c == "]" and frame.kind == "["):
            self.stack.pop()
            if self.stack:
                self._value_end(text, i + 1, found)
            else:
                self.finished = True  # what follows the object is not the reply's
        elif state in ("value", "item0", "item"):
            return self._value_start(frame, c, i)
        else:
            self.failed = True
        return i + 1

    def _value_start(self, frame: _Frame, c: str, i: int) -> int:
        frame.state = "next"
        role = self._member(frame, c) if frame.role in ("top", "plan") else None
        if frame.role == "steps":
            self.item = i
        if c in "{[":
            self.stack.append(_Frame(c, role))
        elif c == '"':
            self.string, self.mark = "value", i
        elif c == "-" or c.isalnum():
            self.scalar, self.mark = True, i
            return i
        else:
            self.failed = True
        return i + 1

    def _member(self, frame: _Frame, c: str) -> str | None:
        """The role of the value starting with `c`: the plan object, its steps array, or
        none; a second "plan" or "steps" after elements were returned stops the scan."""
        if frame.role == "top" and frame.key == "plan":
            self.failed = self.count > 0  # bare steps given, or the plan given twice
            self.plan_seen, self.streamable = True, c == "{"
            return "plan" if c == "{" else None
        if frame.key == "steps" and (frame.role == "plan" or not self.plan_seen):
            self.failed = self.count > 0  # json.loads keeps the last "steps"
            return "steps" if c == "[" else None
        return None

    def _string_closed(self, text: str, end: int, found: list) -> None:
        kind, self.string = self.string, None
        if kind == "value":
            self._value_end(text, end, found)
            return
        frame = self.stack[-1]
        frame.state = "colon"
        if frame.role in ("top", "plan"):
            try:
                frame.key = json.loads(text[self.mark:end])
            except ValueError:
                self.failed = True

    def _value_end(self, text: str, end: int, found: list) -> None:
        if self.stack[-1].role != "steps":
            return
        try:
            found.append(without_nulls(json.loads(text[self.item:end])))
            self.count += 1
        except (ValueError, RecursionError):
            self.failed = True
        self.item = None


class _Frame:
    __slots__ = ("kind", "role", "state", "key")

    def __init__(self, kind: str, role: str | None):
        self.kind = kind  # "{" or "["
        self.role = role  # "top", "plan", "steps" or None
        self.state = "key0" if kind == "{" else "item0"
        self.key: str | None = None


def _meaningful(line: str) -> bool:
    return bool(line.strip()) and not FENCE_RE.match(line)


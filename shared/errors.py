"""The exceptions Chordal raises, one tree under `ChordalError`.

    ChordalError
    ├── ConfigError          a setting is missing or contradicts another
    ├── InputError           a user's file, line or argument is malformed
    │   ├── PlanError        a plan failed its static checks (carries the problems)
    │   └── PatternRefused   a regular expression is not compiled (too large, broken)
    ├── NoAnswer             the heuristic planner found nothing that supports an answer
    ├── StoreError           the run store or the search store cannot be reached
    │   └── SearchUnavailable    the search store is down or slow right now (retry)
    ├── StackError           a process of the embedded stack (Redis, a worker) would not start
    ├── ToolFailure          a step's tool failed (code, message, candidates)
    │   ├── ToolError            permanently (bad input, nothing found): report it
    │   └── TransientToolError   in a way that may pass (timeout, outage): retry it
    └── LLMError             the model endpoint failed or answered nonsense
        ├── LLMStreamBroken      a streamed reply broke off before its end (carries the text so far)
        └── LLMReplyStopped      the client stopped a reply: past its time, or its query ended

`except ToolError` catches only permanent failures, so a search outage is never taken
for "nothing found"; `except ToolFailure` catches both.

Every constructor passes all its arguments to `super().__init__` so the exceptions
survive a JSON round trip through Celery. `quoted(value)` is how a message about bad
input shows the value: cut short, so a megabyte field is not printed back whole.
"""

from __future__ import annotations

import reprlib

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40  # Python 3.11's Repr takes no keyword arguments


def quoted(value: object) -> str:
    """`value`'s repr as an error message shows it: at most about 40 characters, a few
    items and levels of a list or object (never recursing deeper than that)."""
    return _REPR.repr(value)


class ChordalError(Exception):
    """Raised for every error Chordal itself reports."""


class ConfigError(ChordalError):
    """Raised when a setting is missing, malformed or contradicts another."""


class InputError(ChordalError):
    """Raised when user input (a file, a line, an argument) is malformed."""


class PlanError(InputError):
    """Raised when a plan fails its static checks; `problems` lists one per step."""

    def __init__(self, message: str, problems: list | None = None):
        super().__init__(message, problems)
        self.message = message
        self.problems = problems or []

    def __str__(self) -> str:
        lines = [self.message]
        for p in self.problems:
            step = p.get("step") if isinstance(p, dict) else getattr(p, "step", None)
            msg = p.get("message") if isinstance(p, dict) else getattr(p, "message", p)
            lines.append(f"  - {step or 'plan'}: {msg}")
        return "\n".join(lines)


class PatternRefused(InputError):
    """Raised when a regular expression of a plan is not compiled: it does not parse, is
    past a size limit, or its compile overran its time or memory. The message is a
    clause to follow the field's name ("is 6,000 characters long, …"), without the
    pattern itself."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class NoAnswer(ChordalError):
    """Raised when the heuristic planner finds no document, or no sentence in one, that
    supports an answer; `message` says what was not found, `nearest` lists the closest
    documents (`'Title' (period …, published …): why not`)."""

    def __init__(self, message: str, nearest: list[str] | None = None):
        super().__init__(message, nearest)
        self.message = message
        self.nearest = list(nearest or [])

    def __str__(self) -> str:
        return "\n".join([self.message, *(f"  - {n}" for n in self.nearest)])


class StoreError(ChordalError):
    """Raised when the run store or the search store cannot be reached."""


class SearchUnavailable(StoreError):
    """Raised when the search store cannot answer right now (connection refused, timeout,
    overloaded) in a way that may pass on retry; GET and SEARCH report it as the
    transient step error `SEARCH_UNAVAILABLE`, which the executor retries."""


class StackError(ChordalError):
    """Raised when a process of the embedded stack (the embedded Redis, a worker) exits
    or stays silent at start-up; the message quotes the end of its log."""


class ToolFailure(ChordalError):
    """The base of a tool's failures, never raised itself; `code` becomes the step's
    error code and `candidates` (a GET's documents considered and why each was refused)
    the step's."""

    def __init__(self, code: str, message: str, candidates: list | None = None):
        super().__init__(code, message, candidates)
        self.code = code
        self.message = message
        self.candidates = list(candidates or [])

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ToolError(ToolFailure):
    """Raised when a tool fails permanently (bad input, nothing found)."""


class TransientToolError(ToolFailure):
    """Raised when a tool fails in a way that may pass on retry (timeout, outage)."""


class LLMError(ChordalError):
    """Raised when the model endpoint fails or its answer cannot be used; `call` is the
    `LLMCall` (status `error`) of the failed request, for the run store."""

    def __init__(self, message: str, call=None):
        super().__init__(message, call)
        self.message = message
        self.call = call

    def __str__(self) -> str:
        return self.message


class LLMStreamBroken(LLMError):
    """Raised when a streamed reply breaks off before its end (the connection dropped,
    the server sent an error, no chunk came within the timeout); `partial` is the text
    received until then. The client does not retry it: the caller decides."""

    def __init__(self, message: str, call=None, partial: str = ""):
        super().__init__(message, call)
        self.args = (message, call, partial)
        self.partial = partial


class LLMReplyStopped(LLMError):
    """Raised when the client stops a reply before its end: it ran past its time (the
    caller's deadline or CHORDAL_LLM_REPLY_S), or the caller stopped reading it (its
    query ended); `partial` is the text received until then. Asking again cannot help
    within the same time: callers do not retry it."""

    def __init__(self, message: str, call=None, partial: str = ""):
        super().__init__(message, call)
        self.args = (message, call, partial)
        self.partial = partial


def fault(error: BaseException) -> str:
    """An unexpected error as a reader reports it: `IndexError: list index out of range`
    (the class alone when it says nothing more)."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__

"""The exceptions Chordal raises, one tree under `ChordalError`.

    ChordalError
    ├── ConfigError          a setting is missing or contradicts another
    ├── InputError           a user's file, line or argument is malformed
    │   └── PlanError        a plan failed its static checks (carries the problems)
    ├── StoreError           the run store or the search store cannot be reached
    │   └── SearchUnavailable    the search store is down or slow right now (retry)
    ├── ToolError            a step's tool failed permanently (bad input, nothing found)
    │   └── TransientToolError   a tool failed in a way that may pass (timeout, outage)
    └── LLMError             the model endpoint failed or answered nonsense

Every constructor passes all its arguments to `super().__init__` so the exceptions
survive a JSON round trip through Celery.
"""

from __future__ import annotations


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


class StoreError(ChordalError):
    """Raised when the run store or the search store cannot be reached."""


class SearchUnavailable(StoreError):
    """Raised when the search store cannot answer right now (connection refused, timeout,
    overloaded) in a way that may pass on retry; GET and SEARCH report it as the
    transient step error `SEARCH_UNAVAILABLE`, which the executor retries."""


class ToolError(ChordalError):
    """Raised when a tool fails permanently; `code` becomes the step's error code."""

    def __init__(self, code: str, message: str):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class TransientToolError(ToolError):
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

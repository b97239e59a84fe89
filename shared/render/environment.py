"""The sandbox answers render in: consumes how values print (a mask for patient
identifiers, yes/no for bools) and a time budget; produces a `BudgetedEnvironment` over
the domain templates (shared/templates/), whose compiled code is kept once per process.
Both a domain template (answer.py) and a plan's own template, in its child process
(isolated.py), render in one of these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from jinja2 import BytecodeCache, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket

from .cited import show
from .sandbox import RENDER_BUDGET_S, BudgetedEnvironment

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


class _Compiled(BytecodeCache):
    """The domain templates compiled once per process: each render builds its own
    environment (its time budget starts with it), and compiling a domain template
    costs about 1 ms, reading its bytecode back about 0.05 ms. Jinja checks the
    source's checksum, so an edited template compiles again. Only the files under
    TEMPLATES come through here (a plan's own template renders in its child process)."""

    def __init__(self):
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _Compiled()


def environment(mask: Callable[[str], str] | None = None, yes_no: bool = False,
                budget_s: float = RENDER_BUDGET_S) -> BudgetedEnvironment:
    """The sandbox answers render in (its time budget starts now); `yes_no` (default
    templates) prints bools as yes/no."""
    env = BudgetedEnvironment(budget_s, loader=FileSystemLoader(TEMPLATES),
                              bytecode_cache=_COMPILED,
                              undefined=StrictUndefined, autoescape=False,
                              finalize=lambda v: show(v, mask, yes_no),
                              keep_trailing_newline=False)
    # Jinja's own `join` stringifies items without `finalize`, which would drop the
    # footnote markers of a list's items; this one prints each item as `{{ }}` would.
    env.filters["join"] = lambda items, sep="": sep.join(str(show(v, mask, yes_no))
                                                         for v in items)
    return env

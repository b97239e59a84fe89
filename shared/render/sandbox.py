"""The sandbox answers render in, with a budget: a plan's template is user input, and
Celery cannot stop a finalizer thread that loops forever (time limits need the prefork
or gevent pool).

Consumes Jinja2's `SandboxedEnvironment` (no Python internals reachable); adds:
- a time budget: iterating a `range()` checks the clock every 1,000 items, so loops,
  nested ones included, end with a `SecurityError` once the environment is `budget_s`
  seconds old (each render builds its own);
- size limits on `*` and `**` (`'a' * 10**9`, `2 ** 100000000`), checked before computing;
  intercepting them also stops Jinja folding such constants while it compiles, which is
  why the plan checker (shared/plan/validate.py) parses templates here too.

`template_reads(template)` is the names a template reads without setting them, as
this sandbox parses it: the plan checks, the plan's repair and the answer's render each
ask it of the same template, which is parsed once per process (the last
`READS_KEPT` templates are kept).

A `SecurityError` is a `TemplateError`: the plan's template counts as failed, the answer
says so and falls back to the domain template. What this cannot bound in-process (loops
over strings, memory grown by `~`, `center`, `format`) the render process bounds
(isolated.py: a memory limit, and a kill at the budget).
"""

from __future__ import annotations

import functools
import time

from jinja2 import meta
from jinja2.exceptions import SecurityError
from jinja2.sandbox import MAX_RANGE, SandboxedEnvironment

RENDER_BUDGET_S = 10.0
"""Default seconds one environment's renders may take (`CHORDAL_RENDER_BUDGET_S`)."""
MAX_REPEAT = 100_000
"""Longest string or list `*` may build."""
MAX_EXPONENT = 1_000
"""Largest exponent `**` takes."""
CHECK_EVERY = 1_000
"""Items of a `range()` between two looks at the clock."""


class BudgetedEnvironment(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, budget_s: float = RENDER_BUDGET_S, **options):
        super().__init__(**options)
        self.budget_s = budget_s
        self.deadline = time.monotonic() + budget_s  # one budget per environment
        self.globals["range"] = self.range

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise SecurityError(f"the template ran past its {self.budget_s:g}s render budget "
                                "(CHORDAL_RENDER_BUDGET_S)")

    def range(self, *args: int) -> BudgetedRange:
        r = range(*args)
        if len(r) > MAX_RANGE:
            raise SecurityError(f"range() of {len(r):,} items; at most {MAX_RANGE:,}")
        return BudgetedRange(r, self)

    def call_binop(self, context, operator: str, left, right):
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"exponent {right!r} is too large; at most {MAX_EXPONENT:,}")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if (isinstance(seq, (str, list, tuple)) and isinstance(n, int)
                        and len(seq) * n > MAX_REPEAT):
                    raise SecurityError(f"repeating {len(seq):,} items {n:,} times is too "
                                        f"much; at most {MAX_REPEAT:,} in all")
        return super().call_binop(context, operator, left, right)


class BudgetedRange:
    """A `range` whose iteration looks at the environment's clock every CHECK_EVERY items;
    `len`, indexing and `in` work as on a range."""

    def __init__(self, r: range, env: BudgetedEnvironment):
        self.r, self.env = r, env

    def __iter__(self):
        for i, item in enumerate(self.r):
            if i % CHECK_EVERY == 0:
                self.env.check()
            yield item

    def __len__(self) -> int:
        return len(self.r)

    def __getitem__(self, index):
        return self.r[index]

    def __contains__(self, item) -> bool:
        return item in self.r


READS_KEPT = 64
"""Templates whose names `template_reads` keeps (each is parsed once while kept)."""


@functools.lru_cache(maxsize=READS_KEPT)
def template_reads(template: str) -> frozenset[str]:
    """The names `template` reads and does not set (Jinja's undeclared variables, globals
    such as `range` included); a TemplateSyntaxError when it does not parse."""
    return frozenset(meta.find_undeclared_variables(BudgetedEnvironment().parse(template)))


GLOBALS = frozenset(BudgetedEnvironment().globals)
"""The names every template of this sandbox can read without a value given."""

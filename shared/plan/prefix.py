"""Which steps of a plan still being written may run now: steps in, one at a time in
plan order, a verdict out for each.

A step may run before the rest of the plan is seen when it passes the checks that need
only it and the steps before it (validate.py on the plan so far: its own fields, types,
ids and variables not taken before), when every variable it reads is bound by a step
already let through, and when it is not a second GET of a document an earlier GET
fetches (repair merges those; running it would pay for the document twice). The rest
wait for the whole plan, which is repaired and checked as any plan is.
"""

from __future__ import annotations

from shared.config import MAX_STEPS
from shared.models import GetStep, Plan, Step
from shared.plan.repair import same_document
from shared.plan.validate import validate_plan


class PrefixCheck:
    """The steps of one reply seen so far, and those let through."""

    def __init__(self, max_steps: int = MAX_STEPS):
        self.max_steps = max_steps
        self.seen: list[Step] = []
        self.passed: list[Step] = []
        self._documents: set[tuple] = set()

    def accept(self, step: Step) -> bool:
        """True when `step` may run now (see the module docstring)."""
        self.seen.append(step)
        if len(self.seen) > self.max_steps:
            return False
        bound = {s.var for s in self.passed}
        if any(name not in bound for name in step.references()):
            return False
        if isinstance(step, GetStep) and same_document(step) in self._documents:
            return False
        problems = validate_plan(Plan(steps=self.seen), self.max_steps)
        if any(p.step == step.id for p in problems):
            return False
        self.passed.append(step)
        if isinstance(step, GetStep):
            self._documents.add(same_document(step))
        return True

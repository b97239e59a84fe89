"""Auto mode's hand-over: consumes a ReWOO plan and its step results, produces the seed
of the first ReAct prompt — what each step found (as an observation) and what is missing
and why — so the loop continues from the evidence instead of starting over.
"""

from __future__ import annotations

from shared.models import Plan, StepResult
from shared.render import render_answer

from .observe import observe

STEP_CHARS = 200
"""Characters of each step's observation in the seed."""
SKIPPED = {"id", "operation", "output_var"}


def describe_step(step) -> str:
    """`GET source='Acme Q3 report'`: the operation and the fields that say what it did."""
    fields = step.model_dump(exclude_none=True, exclude_defaults=True, by_alias=True)
    shown = ", ".join(f"{k}={v!r}" for k, v in fields.items() if k not in SKIPPED)
    return f"{step.operation} {shown}".strip()


def plan_seed(plan: Plan, results: dict[str, StepResult], question: str = "") -> str:
    """The seed text: one line per plan step, then the gaps of the ReWOO answer."""
    lines = []
    for step in plan.steps:
        r = results.get(step.id)
        found = observe(r, STEP_CHARS) if r is not None else "never ran"
        lines.append(f"- {step.id} {describe_step(step)} -> "
                     f"{' '.join(found.split())}")
    missing = render_answer(plan, results, question).missing
    if missing:
        lines.append("Missing:")
        lines += [f"- {m}" for m in missing]
    return "\n".join(lines)

"""IF: consumes an IfStep and the results of the variables it reads, produces `then` or `else`
depending on `condition`, a COMPUTE expression that must yield true or false. The condition
reads typed values with their units (a figure in millions compares with one in thousands as
what they are). A branch that is exactly one `$VAR` yields that variable's value with its
evidence (`document`, `documents`) and quantity; any other branch is literal text (a `$VAR`
inside longer text is not substituted). `note` says which way the condition went.

ToolError codes: NOT_A_CONDITION (the condition yields a number), MISSING_INPUT, and
those of COMPUTE (BAD_EXPRESSION, NOT_A_NUMBER, …).
"""

from __future__ import annotations

from shared.errors import ToolError
from shared.models import IfStep, StepResult
from shared.models.plan import VAR_RE

from .base import Finding, ToolOutput
from .compute import check_expression, evaluate
from .variables import lookup, quantities, single_var, values

CONFIDENCE = "condition"


def run_if(step: IfStep, inputs: dict[str, StepResult]) -> ToolOutput:
    """The value of the branch `step.condition` selects."""
    outcome = evaluate(step.condition, values(inputs), quantities(inputs))
    if not isinstance(outcome, bool):
        raise ToolError("NOT_A_CONDITION", f"IF step {step.id}: condition {step.condition!r} "
                        f"yields the number {outcome}, not true or false; compare it, e.g. "
                        f"`{step.condition} > 0`")
    branch, text = ("then", step.then) if outcome else ("else", step.else_)
    used = list(dict.fromkeys(VAR_RE.findall(step.condition)))
    note = f"condition `{step.condition}` is {'true' if outcome else 'false'}, so `{branch}`"
    name = single_var(text)
    if name is None:
        return ToolOutput(value=text, confidence=CONFIDENCE, note=note,
                          inputs=[inputs[n].action_id for n in used if n in inputs])
    chosen = lookup(inputs, name, step.id)
    used = list(dict.fromkeys(used + [name]))
    return ToolOutput(value=chosen.value, confidence=CONFIDENCE, document=chosen.document,
                      documents=list(chosen.documents), note=f"{note}: ${name}",
                      inputs=[inputs[n].action_id for n in used if n in inputs],
                      quantity=chosen.quantity)


def check_if(step: IfStep) -> list[Finding]:
    return check_expression(step.id, "condition", step.condition)

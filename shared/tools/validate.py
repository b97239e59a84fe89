"""VALIDATE: consumes a ValidateStep and the result of the variable it checks, produces
true (confidence `validated`) or false (confidence `rejected`), with a `note` giving
every failed check ("91.7 is below min 95") or what passed. The checked value's
evidence passes through, so a footnote still cites the document.

Checks, all applied: `min`/`max` (compared as exact Decimals), `type` (a typed value by
its quantity's kind, so a percent captured without its sign is a percent, not money;
an untyped one by its text: number; percent: a number without a currency sign; money:
a number without a percent sign; date: an ISO or written calendar date; text: non-blank
text), `pattern` (searched, with the pattern timeout), `source_type` (every document
behind the value must be of a listed type).

ToolError codes: BAD_PATTERN, PATTERN_TIMEOUT, MISSING_INPUT. A failed check is not an
error: the step succeeds with value false.
"""

from __future__ import annotations

from shared.models import StepResult, ValidateStep
from shared.models.quantity import Quantity

from .base import Finding, ToolOutput
from .entities import read_date
from .numbers import as_number, format_decimal
from .patterns import DEFAULT_TIMEOUT_S, check_pattern, compile_pattern, search
from .variables import as_text, evidence, lookup

_CURRENCY = "$€£¥₹"


def run_validate(step: ValidateStep, inputs: dict[str, StepResult],
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolOutput:
    """Whether the value of `step.value` passes every check the step sets."""
    source = lookup(inputs, step.value, step.id)
    value, shown = source.value, _show(source.value)
    reasons: list[str] = []
    checks: list[str] = []
    number = as_number(value)
    if (step.min is not None or step.max is not None) and number is None:
        reasons.append(f"{shown} is not a number, so min/max cannot be checked")
    if step.min is not None:
        checks.append(f"min {_number(step.min)}")
        if number is not None and number < as_number(step.min):
            reasons.append(f"{shown} is below min {_number(step.min)}")
    if step.max is not None:
        checks.append(f"max {_number(step.max)}")
        if number is not None and number > as_number(step.max):
            reasons.append(f"{shown} is above max {_number(step.max)}")
    if step.type is not None:
        checks.append(f"type {step.type}")
        problem = _type_problem(step.type, value, source.quantity)
        if problem:
            reasons.append(f"{shown} {problem}")
    if step.pattern is not None:
        checks.append(f"pattern `{step.pattern}`")
        compiled = compile_pattern(step.pattern, "pattern")
        if search(compiled, as_text(value), timeout_s, f"the value of {step.value}") is None:
            reasons.append(f"{shown} does not match pattern `{step.pattern}`")
    if step.source_type is not None:
        accepted = ", ".join(step.source_type)
        checks.append(f"source_type one of {accepted}")
        docs = evidence(source)
        if not docs:
            reasons.append(f"{step.value} has no source document, so its source_type is "
                           f"not one of {accepted}")
        reasons += [f"source_type {d.source_type or 'unknown'} is not one of {accepted}"
                    for d in docs if d.source_type not in step.source_type]
    passed = not reasons
    passes = ", ".join(checks) or "no checks"
    note = "; ".join(reasons) if reasons else f"{shown} passed {passes}"
    return ToolOutput(value=passed, confidence="validated" if passed else "rejected",
                      document=source.document, documents=list(source.documents), note=note,
                      inputs=[source.action_id])


_KIND_SAYS = {"money": "an amount of money", "percent": "a percent", "date": "a date",
             "number": "a number"}
_FITS = {"number": ("number", "money", "percent"), "money": ("money", "number"),
         "percent": ("percent", "number"), "date": ("date",)}
"""Kinds of typed value each `type` check accepts (a bare figure is any figure's kind)."""


def _type_problem(kind: str, value: object, quantity: Quantity | None) -> str | None:
    if quantity is not None and kind != "text":
        if quantity.kind in _FITS[kind]:
            return None
        return f"is {_KIND_SAYS[quantity.kind]} ({quantity.text}), not {_KIND_SAYS[kind]}"
    text = as_text(value)
    number = as_number(value)
    if kind == "text":
        return None if isinstance(value, str) and value.strip() else "is not text"
    if kind == "date":
        return None if read_date(text) else ("is not a calendar date (write it like "
                                             "2023-09-30 or 30 September 2023)")
    if number is None:
        return f"is not a number, so not a {kind}"
    if kind == "percent" and any(c in text for c in _CURRENCY):
        return "is an amount of money, not a percent"
    if kind == "money" and "%" in text:
        return "is a percent, not an amount of money"
    return None


def _number(bound: float) -> str:
    return format_decimal(as_number(bound).normalize())


def _show(value: object, limit: int = 60) -> str:
    text = as_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_validate(step: ValidateStep) -> list[Finding]:
    found = check_pattern(step.id, "pattern", step.pattern) if step.pattern is not None else []
    if step.min is not None and step.max is not None and step.min > step.max:
        found.append(("bad_field", f"min {step.min:g} is above max {step.max:g}; swap them"))
    return found

"""The variables a step reads: consumes the StepResults that bound them (keyed by bare
name, `R1` for `$R1`), produces their values (and quantities: the values typed), their
text for substitution into a query, and the evidence and action_ids a tool passes on.

ToolError codes: MISSING_INPUT (a variable the step reads has no result).
"""

from __future__ import annotations

from shared.errors import ToolError
from shared.models import Evidence, StepResult
from shared.models.plan import VAR_RE
from shared.models.quantity import Quantity


def bare(reference: str) -> str:
    """`R1` for `$R1`, `${R1}` or `R1`."""
    m = VAR_RE.fullmatch(reference.strip())
    return m[1] if m else reference.strip()


def single_var(text: str) -> str | None:
    """The bare name when `text` is exactly one `$VAR` (spaces around allowed), else None."""
    m = VAR_RE.fullmatch(text.strip())
    return m[1] if m else None


def lookup(inputs: dict[str, StepResult], reference: str, step_id: str) -> StepResult:
    """The result bound to `reference` (`$R1` or `R1`); MISSING_INPUT names what exists."""
    name = bare(reference)
    if name in inputs:
        return inputs[name]
    known = ", ".join(f"${k}" for k in inputs) or "none"
    raise ToolError("MISSING_INPUT", f"step {step_id} reads ${name}, which has no value "
                    f"(inputs available: {known}); the step that binds ${name} failed or is "
                    "missing, or the plan misspells it")


def values(inputs: dict[str, StepResult]) -> dict[str, object]:
    """Bare name -> value, for COMPUTE expressions."""
    return {name: result.value for name, result in inputs.items()}


def quantities(inputs: dict[str, StepResult]) -> dict[str, Quantity | list[Quantity] | None]:
    """Bare name -> the value typed (None when it is not; a list value's figures each),
    for COMPUTE expressions."""
    return {name: result.quantities if isinstance(result.value, list) and result.quantities
            else result.quantity for name, result in inputs.items()}


def as_text(value: object) -> str:
    """`value` as a query or pattern sees it: lists joined by spaces, true/false lowercase."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(as_text(v) for v in value)
    return "" if value is None else str(value)


def substitute(text: str, inputs: dict[str, StepResult], step_id: str) -> tuple[str, list[str]]:
    """`text` with every `$VAR` replaced by its value as text, and the names it used."""
    used: list[str] = []

    def value_of(m) -> str:
        used.append(m[1])
        return as_text(lookup(inputs, m[1], step_id).value)

    return VAR_RE.sub(value_of, text), used


def evidence(result: StepResult) -> list[Evidence]:
    """Every document behind `result`: its `document`, then its `documents`, no repeats
    (a document cited at two pages counts twice)."""
    found = [result.document] if result.document else []
    return _unique(found + list(result.documents))


def unique_evidence(results: list[StepResult]) -> list[Evidence]:
    """The documents behind several results, in order, no repeats."""
    return _unique([doc for r in results for doc in evidence(r)])


def _unique(docs: list[Evidence]) -> list[Evidence]:
    seen: dict[tuple[str, int | None], Evidence] = {}
    for doc in docs:
        seen.setdefault((doc.doc_id, doc.page), doc)  # two pages of one filing: both cited
    return list(seen.values())

"""FILTER: consumes a FilterStep and the result holding a list (SEARCH, GET with top_k,
MERGE list/unique, FILTER), produces the items that pass, in order (maybe none).

An item passes when `condition` (a COMPUTE expression in which `$item` is the item
and other `$VAR`s are the step's inputs) is true and `pattern` is found in the item's
text; a step may set either or both. When the input's `documents` are parallel to its
items, the kept items keep their documents; otherwise the input's documents pass on.

ToolError codes: NOT_A_LIST, NO_CRITERIA (neither condition nor pattern),
NOT_A_CONDITION, BAD_PATTERN, PATTERN_TIMEOUT, and those of COMPUTE (NOT_A_NUMBER
names the item).
"""

from __future__ import annotations

import time

from shared.errors import ToolError
from shared.models import FilterStep, StepResult
from shared.models.plan import VAR_RE
from shared.models.quantity import Quantity

from .base import Finding, ToolOutput
from .compute import check_expression, evaluate
from .patterns import DEFAULT_TIMEOUT_S, check_pattern, compile_pattern, search
from .variables import as_text, bare, lookup, quantities, values

CONFIDENCE = "filtered"


def run_filter(step: FilterStep, inputs: dict[str, StepResult],
               timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolOutput:
    """The items of the list `step.source` holds that pass the step's condition and pattern."""
    source = lookup(inputs, step.source, step.id)
    items = source.value
    if not isinstance(items, list):
        raise ToolError("NOT_A_LIST", f"FILTER step {step.id} reads {step.source}, which holds "
                        f"{type(items).__name__}, not a list; point source at a SEARCH, GET "
                        "with top_k above 1, or MERGE with strategy list/unique")
    if step.condition is None and step.pattern is None:
        raise ToolError("NO_CRITERIA", f"FILTER step {step.id} has neither condition nor "
                        "pattern; set \"condition\" (e.g. \"$item > 90\") or \"pattern\"")
    compiled = compile_pattern(step.pattern, "pattern") if step.pattern is not None else None
    variables = {k: v for k, v in values(inputs).items() if k != "item"}
    typed = {k: q for k, q in quantities(inputs).items() if k != "item"}
    deadline = time.monotonic() + timeout_s
    kept = []
    for index, item in enumerate(items):
        if step.condition is not None and not _holds(step, index, item, variables, typed):
            continue
        if compiled is not None and search(compiled, as_text(item), timeout_s,
                                           f"item {index} of {step.source}",
                                           remaining_s=deadline - time.monotonic()) is None:
            continue
        kept.append(index)
    if len(source.documents) == len(items):  # parallel: item i came from documents[i]
        documents = [source.documents[i] for i in kept]
        document = documents[0] if documents else None
    else:
        documents, document = list(source.documents), source.document
    used = {bare(step.source)} | {n for n in step.references() if n in inputs}
    return ToolOutput(value=[items[i] for i in kept], confidence=CONFIDENCE, document=document,
                      documents=documents, note=f"kept {len(kept)} of {len(items)} items",
                      inputs=[inputs[n].action_id for n in inputs if n in used])


def _holds(step: FilterStep, index: int, item: object, variables: dict[str, object],
           typed: dict[str, Quantity | None]) -> bool:
    try:
        outcome = evaluate(step.condition, {**variables, "item": item}, typed)
    except ToolError as e:
        if e.code != "NOT_A_NUMBER":
            raise
        raise ToolError(e.code, f"FILTER step {step.id}, item {index}: {e.message}") from None
    if not isinstance(outcome, bool):
        raise ToolError("NOT_A_CONDITION", f"FILTER step {step.id}: condition "
                        f"{step.condition!r} yields the number {outcome}, not true or false; "
                        "compare it, e.g. `$item > 90`")
    return outcome


def check_filter(step: FilterStep) -> list[Finding]:
    found: list[Finding] = []
    if not VAR_RE.fullmatch(step.source.strip()):
        found.append(("bad_field", f"step {step.id}'s source is not one variable; FILTER "
                      "reads the list an earlier step bound: write its $VAR"))
    if not step.condition and not step.pattern:
        found.append(("bad_field", "FILTER needs a condition (an expression over $item, like "
                      "\"$item > 90\") or a pattern (a regex an item must contain); add one"))
    if step.condition:
        found += check_expression(step.id, "condition", step.condition)
    if step.pattern is not None:
        found += check_pattern(step.id, "pattern", step.pattern)
    return found

"""MERGE: consumes a MergeStep and the results of its `sources`, some of which may have
failed, produces one value from the ok ones in `sources` order:

- `first`: the first ok value, with that input's evidence and quantity;
- `list`: every ok value, a list value flattened into its items;
- `unique`: as `list`, without repeats (numbers compare as Decimals: "91.7" == "91.70").

For `list`/`unique`, `documents` is parallel to the items (item i came from
documents[i]) when every item has a document; otherwise it holds each document behind
the inputs that gave a kept item once. `note` names the skipped failed inputs.

ToolError codes: NO_INPUTS (every source failed; names each failure).
"""

from __future__ import annotations

from shared.errors import ToolError
from shared.models import Evidence, MergeStep, StepResult
from shared.models.plan import VAR_RE
from shared.models.quantity import Quantity

from .base import Finding, ToolOutput
from .numbers import as_number
from .variables import as_text, bare, unique_evidence

CONFIDENCE = "merged"


def ok_sources(sources: list[str], inputs: dict[str, StepResult]
               ) -> tuple[list[tuple[str, StepResult]], list[str]]:
    """(name, result) of each ok source in order, and a description of each failed one."""
    ok, failed = [], []
    for reference in sources:
        name = bare(reference)
        result = inputs.get(name)
        if result is None:
            failed.append(f"${name} (no result)")
        elif result.status != "ok":
            message = (result.error_message or "")[:120]
            failed.append(f"${name} ({result.error_code}: {message})")
        else:
            ok.append((name, result))
    return ok, failed


def run_merge(step: MergeStep, inputs: dict[str, StepResult]) -> ToolOutput:
    """The values of `step.sources` combined by `step.strategy`."""
    ok, failed = ok_sources(step.sources, inputs)
    if not ok:
        raise ToolError("NO_INPUTS", f"MERGE step {step.id}: every source failed: "
                        f"{'; '.join(failed)}; fix those steps or add a source that can succeed")
    skipped = [f"skipped {', '.join(failed)}"] if failed else []
    if step.strategy == "first":
        name, result = ok[0]
        return ToolOutput(value=result.value, confidence=CONFIDENCE, document=result.document,
                          documents=list(result.documents), inputs=[result.action_id],
                          note="; ".join([f"took ${name}"] + skipped),
                          quantity=result.quantity)
    items: list[object] = []
    item_docs: list[Evidence | None] = []
    origins: list[StepResult] = []
    for _, result in ok:
        values, docs = _items(result)
        items += values
        item_docs += docs
        origins += [result] * len(values)
    if step.strategy == "unique":
        keep = _first_of_each(items)
        items, item_docs = [items[i] for i in keep], [item_docs[i] for i in keep]
        origins = [origins[i] for i in keep]
    parallel = all(d is not None for d in item_docs)
    return ToolOutput(value=items, confidence=CONFIDENCE,
                      document=item_docs[0] if parallel and item_docs else None,
                      documents=item_docs if parallel else unique_evidence(origins),
                      inputs=[r.action_id for _, r in ok], note="; ".join(skipped) or None)


def _items(result: StepResult) -> tuple[list[object], list[Evidence | None]]:
    """The items a result contributes, and the document of each (None when unknown)."""
    if not isinstance(result.value, list):
        return [result.value], [result.document]
    if len(result.documents) == len(result.value):
        return list(result.value), list(result.documents)
    return list(result.value), [None] * len(result.value)


def value_key(value: object, quantity: Quantity | None = None) -> tuple[str, object]:
    """What two values share when they are the same: their figure in units when they are
    typed ("$5.4 billion" is "5,400 million"), else their number, else their text."""
    if quantity is not None:
        return ("date", quantity.date) if quantity.kind == "date" else \
            ("number", quantity.absolute())
    number = as_number(value)
    return ("number", number) if number is not None else ("text", as_text(value).strip())


def _first_of_each(items: list[object]) -> list[int]:
    seen: set = set()
    keep = []
    for i, item in enumerate(items):
        key = value_key(item)
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return keep


def check_sources(step) -> list[Finding]:
    """`bad_field` for each of a MERGE's or ARBITRATE's sources that is not one variable."""
    return [("bad_field", f"step {step.id}'s sources[{i}] is not one variable; list "
             "the $VARs of earlier steps, like [\"$E1\", \"$E2\"]")
            for i, s in enumerate(step.sources) if not VAR_RE.fullmatch(s.strip())]

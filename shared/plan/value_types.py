"""What kind of value each step yields, and which steps read a kind they cannot use:
consumes a `Plan`, produces `(step position, code, message)` findings (codes
`type_mismatch` and `not_a_document`).

Kinds: GET yields a `document` (`documents` with top_k above 1); SEARCH `snippets`;
EXTRACT `text`; COMPUTE a `number`, or `bool` when its outermost operator compares or
combines with and/or/not; VALIDATE `bool`; FILTER the list kind it filters; MERGE the
common kind of its sources (`first`) or a list of them (`list`, `unique`); IF and
ARBITRATE the common kind of their values. Kinds that differ join to `value` (unknown),
which is never reported: only a mismatch that is certain is.

Rules: EXTRACT reads a document, documents or snippets; COMPUTE and IF conditions (and
FILTER conditions) read numbers or bools; VALIDATE reads one value, not a document or
list; FILTER reads a list.
"""

from __future__ import annotations

from collections.abc import Collection

from shared.models import (ComputeStep, ExtractStep, FilterStep, GetStep, IfStep, MergeStep,
                           Plan, SearchStep, ValidateStep)
from shared.models.plan import VAR_RE
from shared.tools.compute import expression_kind

DOCUMENTS = ("document", "documents", "snippets")
LISTS = ("documents", "snippets", "list")
_SAYS = {"document": "a document", "documents": "a list of documents",
         "snippets": "a list of search snippets", "text": "text", "number": "a number",
         "bool": "true/false", "list": "a list", "value": "a value"}


def infer_types(plan: Plan, order: list[int], unknown: Collection[str] = ()) -> dict[str, str]:
    """Bare variable -> kind, visiting steps in `order` (a source not yet seen is `value`,
    and so are the variables in `unknown`)."""
    kinds: dict[str, str] = dict.fromkeys(unknown, "value")
    for index in order:
        step = plan.steps[index]
        kinds.setdefault(step.var, _kind(step, kinds))
    return kinds


def type_findings(plan: Plan, kinds: dict[str, str]) -> list[tuple[int, str, str]]:
    """(position, code, message) for every step that reads a kind of value it cannot use."""
    bound = {s.var: s for s in reversed(plan.steps)}  # the first binder wins, as in graph.py
    found: list[tuple[int, str, str]] = []
    for index, step in enumerate(plan.steps):
        for name, message in _mismatches(step, kinds):
            binder = bound[name]
            what = f"${name} is {_SAYS[kinds[name]]} from step {binder.id} ({binder.operation})"
            code = "not_a_document" if isinstance(step, ExtractStep) else "type_mismatch"
            found.append((index, code, f"step {step.id} ({step.operation}): {what}; {message}"))
    return found


def _kind(step, kinds: dict[str, str]) -> str:
    if isinstance(step, GetStep):
        return "document" if step.top_k == 1 else "documents"
    if isinstance(step, SearchStep):
        return "snippets"
    if isinstance(step, ExtractStep):
        return "text"
    if isinstance(step, ComputeStep):
        return expression_kind(step.expression)
    if isinstance(step, ValidateStep):
        return "bool"
    if isinstance(step, FilterStep):
        kind = kinds.get(_one_var(step.source) or "")
        return kind if kind in LISTS else "list"
    if isinstance(step, MergeStep):
        parts = [kinds.get(_one_var(s) or "", "value") for s in step.sources]
        if step.strategy == "first":
            return _join(parts)
        if all(p in ("document", "documents") for p in parts):
            return "documents"
        return "snippets" if all(p == "snippets" for p in parts) else "list"
    if isinstance(step, IfStep):
        return _join([kinds.get(_one_var(v) or "", "value") if _one_var(v) else "text"
                      for v in (step.then, step.else_)])
    return _join([kinds.get(_one_var(s) or "", "value") for s in step.sources])  # ARBITRATE


def _mismatches(step, kinds: dict[str, str]) -> list[tuple[str, str]]:
    """(variable, how to fix) for each variable `step` reads that it cannot use."""
    def reading(names, bad):
        return [n for n in dict.fromkeys(names) if n in kinds and kinds[n] in bad]

    if isinstance(step, ExtractStep):
        return [(n, "EXTRACT reads a document: point source at a GET step's output (or a "
                 "SEARCH step's snippets)")
                for n in reading(step.references(), ("text", "number", "bool"))]
    if isinstance(step, ValidateStep):
        return [(n, "VALIDATE checks one value: EXTRACT the value first and validate that "
                 "step's output") for n in reading(step.references(), DOCUMENTS + ("list",))]
    found = []
    if isinstance(step, FilterStep):
        found += [(n, "FILTER needs a list: filter a SEARCH step, a GET with top_k above 1 "
                   "or a MERGE with strategy list")
                  for n in reading([_one_var(step.source)], ("document", "text", "number", "bool"))]
    if isinstance(step, (ComputeStep, IfStep, FilterStep)):
        text = step.expression if isinstance(step, ComputeStep) else step.condition or ""
        names = VAR_RE.findall(text)
        if isinstance(step, FilterStep):
            names = [n for n in names if n != "item"]
        found += [(n, f"{step.operation} expressions work on numbers: EXTRACT the number from "
                   f"${n} first and use that step's output")
                  for n in reading(names, DOCUMENTS + ("list",))]
    return found


def _one_var(text: str) -> str | None:
    m = VAR_RE.fullmatch(text.strip())
    return m[1] if m else None


def _join(kinds: list[str]) -> str:
    return kinds[0] if kinds and all(k == kinds[0] for k in kinds) else "value"

"""The tool registry: consumes a plan step, the StepResults of the variables it reads
(keyed by bare name: `R1` for `$R1`) and a search backend, produces the step's
ToolOutput by calling the runner registered for `step.operation`.

Every runner sets `ToolOutput.inputs` to the action_ids of the inputs it used and passes
evidence on: a value derived from one input carries that input's `document`, a list
value carries `documents`. Operations in TOLERATES_FAILED_INPUTS (MERGE, ARBITRATE)
receive failed inputs too and skip them; every other runner gets only ok inputs (the
caller guarantees it; run_tool refuses otherwise with INPUT_FAILED).

EXTRACT with `row` reads a cell from the tables of its source's documents, which the
backend keeps (cells/), and refuses with DOCUMENT_CHANGED when the store holds another
version of a document than the one its source read; with `pattern`, their text
(extract.py).

COMPUTE refuses with SAME_CELL when two of its variables hold one table cell (two steps
naming two rows that EXTRACT read as one): a figure computed with itself is no answer.

Each operation's check (CHECKS) finds what is wrong with a step's own fields before
anything runs, as `(code, message)` Findings: the plan checker asks `check_step`, so a
tool's parsers stay its own.

Add or replace a runner with `register("MY_OP", fn)`, where
`fn(step, inputs, backend) -> ToolOutput` raises ToolError on failure; `check=` gives
its check, `check(step) -> list[Finding]`.
"""

from __future__ import annotations

from typing import Any, Callable

from shared.errors import ToolError
from shared.models import StepResult
from shared.search import SearchBackend
from shared.stores.texts import DocumentText, changed

from .arbitrate import check_arbitrate, run_arbitrate
from .base import Finding, ToolOutput
from .cells import backend_tables, read_cell
from .cells.request import every_period
from .cells.series import read_series
from .compute import check_compute, run_compute
from .condition import check_if, run_if
from .extract import check_extract, run_extract
from .filter import check_filter, run_filter
from .get import check_scope, run_get
from .merge import check_sources, run_merge
from .search import run_search
from .validate import check_validate, run_validate
from .variables import lookup, quantities, substitute, unique_evidence, values

Runner = Callable[[Any, dict[str, StepResult], SearchBackend], ToolOutput]
"""`runner(step, inputs, backend) -> ToolOutput`."""
Check = Callable[[Any], list[Finding]]
"""`check(step) -> list[Finding]`: the problems with the step's own fields."""

TOLERATES_FAILED_INPUTS = {"MERGE", "ARBITRATE"}
"""Operations whose inputs may include StepResults with status "error"."""


def _get(step, inputs: dict[str, StepResult], backend: SearchBackend) -> ToolOutput:
    if not step.references():
        return run_get(step, backend)
    source, used = substitute(step.source, inputs, step.id)
    out = run_get(step.model_copy(update={"source": source}), backend)
    out.inputs = [inputs[name].action_id for name in dict.fromkeys(used)]
    return out


def _extract(step, inputs: dict[str, StepResult], backend: SearchBackend) -> ToolOutput:
    source = lookup(inputs, step.source, step.id)
    if step.row is not None:  # a table's cell, from the tables of the source's documents
        texts = source.value if isinstance(source.value, list) else [source.value]
        for text in texts:  # the store's tables are those of its current version only
            if isinstance(text, DocumentText) and not text.current:
                raise changed(text.ref, step.id, "was re-indexed with other tables")
        read = read_series if every_period(step.period) else read_cell
        out = read(step, [source.document, *source.documents], backend_tables(backend, step))
        out.inputs = [source.action_id]
        return out
    documents: Any = source.document
    if isinstance(source.value, list):  # evidence per text only when parallel to the texts
        parallel = len(source.documents) == len(source.value)
        documents = list(source.documents) if parallel else [None] * len(source.value)
    out = run_extract(step, source.value, documents)
    out.inputs = [source.action_id]
    return out


CELL_READS = ("table_row", "line_item")
"""The confidences of an EXTRACT that read a table's cell (cells/read.py)."""


def _one_cell_twice(step, inputs: dict[str, StepResult]) -> None:
    """SAME_CELL when two variables of a COMPUTE's expression hold one table cell: a plan
    whose steps name two rows ("non-vested shares vested", "total non-vested shares")
    that EXTRACT read as one ("Non-vested at December 31, 2019") would compute a figure
    with itself (100%, a change of 0), an answer the question did not ask. A cell is its
    document, page and row as quoted (the row's label and every figure, the column read)."""
    seen: dict[tuple, str] = {}
    for name in dict.fromkeys(step.references()):
        result = inputs.get(name)
        if result is None or result.operation != "EXTRACT" or result.document is None \
                or result.confidence not in CELL_READS or not result.quote:
            continue
        cell = (result.document.doc_id, result.document.page, result.quote)
        first = seen.setdefault(cell, name)
        if first != name:
            raise ToolError("SAME_CELL", f"expression {step.expression!r}: ${first} and "
                            f"${name} hold one cell (page {result.document.page}: "
                            f"{result.quote}), so the "
                            "expression computes a figure with itself; name each row as "
                            "its table writes it, or give each step the period that tells "
                            "its column apart")


def _compute(step, inputs: dict[str, StepResult], backend: SearchBackend) -> ToolOutput:
    _one_cell_twice(step, inputs)
    out = run_compute(step, values(inputs), quantities(inputs))
    used = [inputs[name] for name in dict.fromkeys(step.references()) if name in inputs]
    out.inputs = [r.action_id for r in used]
    if len(used) == 1:
        out.document, out.documents = used[0].document, list(used[0].documents)
    else:
        out.documents = unique_evidence(used)
    return out


RUNNERS: dict[str, Runner] = {
    "GET": _get,
    "SEARCH": run_search,
    "EXTRACT": _extract,
    "COMPUTE": _compute,
    "IF": lambda step, inputs, backend: run_if(step, inputs),
    "VALIDATE": lambda step, inputs, backend: run_validate(step, inputs),
    "MERGE": lambda step, inputs, backend: run_merge(step, inputs),
    "FILTER": lambda step, inputs, backend: run_filter(step, inputs),
    "ARBITRATE": lambda step, inputs, backend: run_arbitrate(step, inputs),
}
"""Operation -> runner; `register` adds to it."""

CHECKS: dict[str, Check] = {
    "GET": check_scope,
    "SEARCH": check_scope,
    "EXTRACT": check_extract,
    "COMPUTE": check_compute,
    "IF": check_if,
    "VALIDATE": check_validate,
    "MERGE": check_sources,
    "FILTER": check_filter,
    "ARBITRATE": check_arbitrate,
}
"""Operation -> the check of its steps' own fields; `register` adds to it."""


def register(operation: str, runner: Runner, tolerates_failed_inputs: bool = False,
             check: Check | None = None) -> None:
    """Run steps whose `operation` is `operation` with `runner` (replacing any before)
    and, given `check`, check their fields with it."""
    if not isinstance(operation, str) or not operation.strip():
        raise ValueError(f"operation {operation!r} must be a non-empty name such as \"LOOKUP\"")
    if not callable(runner):
        raise TypeError(f"runner for {operation} must be callable as "
                        "runner(step, inputs, backend) -> ToolOutput")
    RUNNERS[operation] = runner
    if check is not None:
        CHECKS[operation] = check
    if tolerates_failed_inputs:
        TOLERATES_FAILED_INPUTS.add(operation)
    else:
        TOLERATES_FAILED_INPUTS.discard(operation)


def check_step(step: Any) -> list[Finding]:
    """Every problem with `step`'s own fields, by the check registered for its operation
    (none for an operation without one)."""
    check = CHECKS.get(step.operation)
    return check(step) if check is not None else []


def run_tool(step: Any, inputs: dict[str, StepResult], backend: SearchBackend) -> ToolOutput:
    """Run `step` with the registered runner for its operation; ToolError on failure."""
    runner = RUNNERS.get(step.operation)
    if runner is None:
        raise ToolError("UNKNOWN_OPERATION", f"step {step.id}: no tool runs operation "
                        f"{step.operation!r}; use one of {', '.join(RUNNERS)}, or add one with "
                        "shared.tools.registry.register(operation, runner)")
    if step.operation not in TOLERATES_FAILED_INPUTS:
        failed = [f"${name} ({r.error_code})" for name, r in inputs.items() if r.status != "ok"]
        if failed:
            raise ToolError("INPUT_FAILED", f"step {step.id} ({step.operation}) cannot use "
                            f"failed inputs: {', '.join(failed)}; only MERGE and ARBITRATE "
                            "skip failed inputs")
    return runner(step, inputs, backend)

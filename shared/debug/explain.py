"""Explain a run: consumes a RunRecord (and the search store, when at hand), produces one
Diagnosis per failed or empty step: what went wrong, why, and what to change.

    NO_MATCH         why the pattern missed (too strict, wrong units, case), the
                     document sentence holding its keywords, a pattern checked to match
    NOT_FOUND        (GET) the candidates the matching rules refused and why, and the
                     change that lets the right one in (`candidates.py`); for a record
                     without candidates, the nearest titles in the search store;
                     (EXTRACT by row, also AMBIGUOUS and NOT_A_VALUE) the nearest rows of
                     the fetched documents' tables and their periods (`rows.py`)
    AMBIGUOUS        the documents that fit equally, to name one
    INPUT_FAILED     the step whose failure started the chain
    PATTERN_TIMEOUT  catastrophic backtracking, and a lazy/atomic form that finishes
    BAD_SCOPE, DIVISION_BY_ZERO, NOT_A_NUMBER, NOT_A_VALUE, CURRENCY_MISMATCH,
    UNIT_MISMATCH, REDELIVERY_CAP, TIME_LIMIT and the other codes: cause and fix. An EXTRACT
    that fell back is diagnosed as a NO_MATCH.
"""

from __future__ import annotations

from shared.errors import InputError, StoreError
from shared.models import TERMINAL, Plan, RunRecord, StepResult
from shared.render.chain import PASSED_ON, document_texts, own_evidence, read_by, root_failure
from shared.search import SearchBackend, format_scope, parse_scope, year_in
from shared.search.dates import ACCEPTED_FORMS
from shared.tools.numbers import parse_number

from . import patterns
from .candidates import get_diagnosis
from .diagnosis import FIXES, Diagnosis
from .rows import row_diagnosis


def explain(record: RunRecord, backend: SearchBackend | None = None) -> list[Diagnosis]:
    """A Diagnosis for every failed or empty step of `record`, in plan order."""
    found = [Diagnosis(step=p.step, code=p.code, cause=p.message,
                       suggestion="fix the plan as the message says and ask again")
             for p in record.problems]
    plan = record.plan
    if plan is None:
        return found
    results = {r.step_id: r for r in record.steps}
    for step in plan.steps:
        r = results.get(step.id)
        if r is None:
            if record.status in TERMINAL:
                found.append(Diagnosis(step=step.id, code="NO_RESULT", cause=(
                    f"step {step.id} never reported a result"
                    + (f"; the query failed: {record.error}" if record.error else "")),
                    suggestion="make sure executor workers run, then ask again"))
            continue
        if r.status == "error":
            found.append(_failed(plan, results, step, r, backend))
        elif r.confidence == "fallback" and getattr(step, "row", None) is not None:
            d = _row(plan, results, step, "NOT_FOUND", r.note or "", backend)
            d.cause = f"fell back to {r.value!r}: {d.cause}"
            found.append(d)
        elif r.confidence == "fallback" and step.operation == "EXTRACT":
            d = _no_match(plan, results, step)
            d.cause = f"fell back to {r.value!r}: {d.cause}"
            found.append(d)
        elif r.value is None or r.value == "" or r.value == []:
            found.append(_empty(step, r, backend))
    return found


def _failed(plan: Plan, results: dict[str, StepResult], step, r: StepResult,
            backend: SearchBackend | None) -> Diagnosis:
    code = r.error_code or "UNKNOWN"
    if getattr(step, "row", None) is not None and code in ("NOT_FOUND", "AMBIGUOUS",
                                                         "NOT_A_VALUE"):
        return _row(plan, results, step, code, r.error_message or "", backend)
    if code == "NO_MATCH":
        return _no_match(plan, results, step)
    if code in ("NOT_FOUND", "AMBIGUOUS") and step.operation == "GET" and r.candidates:
        return get_diagnosis(step.id, code, r.error_message or "", r.candidates)
    if code == "NOT_FOUND" and step.operation == "GET":
        return _nearest(step.id, code, step.source, step.temporal_scope, backend)
    if code in PASSED_ON and (root := root_failure(plan, results, step.id)) != step.id:
        cause = results.get(root)
        why = (f"failed with {cause.error_code}: {cause.error_message}" if cause
               else "never reported a result")
        return Diagnosis(step=step.id, code=code, cause=(
            f"step {step.id} did not run: its inputs go back to step {root}, which {why}"),
            suggestion=f"fix step {root} first (see its diagnosis); {step.id} runs once its "
                       "inputs have values", root=root)
    if code == "PATTERN_TIMEOUT":
        texts = document_texts(plan, results, step.id)
        f = patterns.timeout(step.pattern, texts)
        fix = (f"use `{f.pattern}`: it finishes on the document"
               + (f" and captures {f.value!r}" if f.value else "") if f.pattern else
               "replace nested repetition like (a+)+ by a+ and greedy .* by .{0,80}?")
        return Diagnosis(step=step.id, code=code, cause=f.cause, suggestion=fix, pattern=f.pattern)
    if code == "BAD_SCOPE":
        return _bad_scope(step, r)
    if code in ("DIVISION_BY_ZERO", "NOT_A_NUMBER"):
        return _arithmetic(plan, results, step, r, code)
    cause, fix = FIXES.get(code, ("", "see the message; fix the step and ask again"))
    return Diagnosis(step=step.id, code=code, cause=f"{cause}{r.error_message}", suggestion=fix)


def _row(plan: Plan, results: dict[str, StepResult], step, code: str, message: str,
         backend: SearchBackend | None) -> Diagnosis:
    documents = [e for sid in read_by(plan, results, step.id) if sid in results
                 for e in own_evidence(results[sid])]
    return row_diagnosis(step, code, message, documents, backend)


def _no_match(plan: Plan, results: dict[str, StepResult], step) -> Diagnosis:
    texts = document_texts(plan, results, step.id)
    if not texts:
        return Diagnosis(step=step.id, code="NO_MATCH", cause=(
            "the pattern found nothing, and the run record holds no document text to "
            "compare it with"), suggestion="check the GET step that feeds it")
    f = patterns.no_match(step.pattern, getattr(step, "quantity", None), texts)
    if f.pattern:
        fix = f"use `{f.pattern}`: it matches that sentence and captures {f.value!r}"
    elif f.sentence:
        fix = "write the pattern from that sentence's own words, with (…) around the figure"
    else:
        fix = "check that GET fetched the right document, or use words the document uses"
    return Diagnosis(step=step.id, code="NO_MATCH", cause=f.cause, suggestion=fix,
                     sentence=f.sentence, pattern=f.pattern)


def _nearest(step_id: str, code: str, source: str, scope: str | None,
             backend: SearchBackend | None) -> Diagnosis:
    """The candidates the matching rules judge for `source` now (a record made before
    GET kept its candidates, or an empty SEARCH)."""
    try:
        window = parse_scope(scope) if scope else None
    except InputError:
        window = None
    try:
        match = backend.best(source, window) if backend is not None else None
    except StoreError:
        match = None
    if match is None:
        return Diagnosis(step=step_id, code=code, cause=f"no document matches {source!r}",
                         suggestion="run `chordal debug` where the search store is reachable "
                                    "to see the nearest titles")
    refused = [c for c in match.candidates if c.verdict == "rejected"]
    return get_diagnosis(step_id, code, match.reason, refused or match.candidates)


def _bad_scope(step, r: StepResult) -> Diagnosis:
    scope = getattr(step, "temporal_scope", None) or ""
    guess = year_in(scope)
    fix = (f"write it as {format_scope(guess)!r}" if guess else "write it in one of the forms")
    fix += f" (accepted: {ACCEPTED_FORMS})"
    return Diagnosis(step=step.id, code="BAD_SCOPE", cause=(
        f"temporal_scope {scope!r} is not a date scope, so no date range could be searched"),
        suggestion=fix)


def _arithmetic(plan: Plan, results: dict[str, StepResult], step, r: StepResult,
                code: str) -> Diagnosis:
    var_of = {s.id: s.var for s in plan.steps}
    read = {sid: results[sid] for sid in read_by(plan, results, step.id) if sid in results}
    if code == "DIVISION_BY_ZERO":
        zero = [f"${var_of[sid]} (step {sid}) is {x.value!r}" for sid, x in read.items()
                if parse_number(str(x.value)) == 0]
        return Diagnosis(step=step.id, code=code, cause=(
            "the expression divides by zero" + (": " + "; ".join(zero) if zero else "")),
            suggestion="check that the pattern caught the right figure (a 0 is often the "
                       "wrong one); guard the division with an IF step whose condition "
                       "tests the divisor != 0")
    bad = [(sid, x) for sid, x in read.items() if parse_number(str(x.value)) is None
           and not isinstance(x.value, bool)]
    what = "; ".join(f"${var_of[sid]} (step {sid}) is {str(x.value)[:60]!r}"
                     + (" — its fallback" if x.confidence == "fallback" else "")
                     for sid, x in bad)
    fix = ("give the EXTRACT a numeric fallback, or none so the gap is reported"
           if any(x.confidence == "fallback" for _, x in bad) else
           "make the EXTRACT's capture group hold only the number, e.g. (\\d+(?:\\.\\d+)?)")
    return Diagnosis(step=step.id, code=code, suggestion=fix,
                     cause=f"an input is not a number: {what or r.error_message}")


def _empty(step, r: StepResult, backend: SearchBackend | None) -> Diagnosis:
    if step.operation == "SEARCH":
        return _nearest(step.id, "EMPTY", step.query, step.temporal_scope, backend)
    cause, fix = FIXES.get(f"EMPTY_{step.operation}", FIXES["EMPTY"])
    return Diagnosis(step=step.id, code="EMPTY", cause=cause + (f" ({r.note})" if r.note else ""),
                     suggestion=fix)

"""Render the answer: plan + step results in, `Answer` with evidence footnotes out.

The plan's `answer` template (or the default one of shared/templates/) is rendered in
a Jinja2 `SandboxedEnvironment` with `StrictUndefined`. Every value printed by the
template carries the footnote number of the documents it rests on (`91.7[1]`). When a
step the answer needs has failed, the answer does not invent the value: it says which
value is missing and why, and lists what was found.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined, TemplateError, meta
from jinja2.sandbox import SandboxedEnvironment

from shared.models import Answer, Evidence, Footnote, Plan, StepResult

TEMPLATES = Path(__file__).parent / "templates"
PLAIN_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


class CitedStr(str):
    footnotes: tuple[int, ...] = ()


class CitedDecimal(Decimal):
    footnotes: tuple[int, ...] = ()


def _mark(value: object) -> object:
    notes = getattr(value, "footnotes", ())
    if not notes:
        return value
    shown = str(Decimal(value)) if isinstance(value, Decimal) else str.__str__(value)
    return shown + "".join(f"[{n}]" for n in notes)


def environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined,
                                finalize=_mark, autoescape=False, keep_trailing_newline=False)


def _typed(value: object, notes: tuple[int, ...]) -> object:
    """A template value: plain numbers become Decimals so templates can compare them."""
    if isinstance(value, bool) or value is None:
        return value
    text = str(value)
    if PLAIN_NUMBER.match(text.strip()):
        try:
            out = CitedDecimal(text.strip())
        except InvalidOperation:
            out = CitedStr(text)
    else:
        out = CitedStr(text)
    out.footnotes = notes
    return out


def _evidence(plan: Plan, results: dict[str, StepResult]) -> dict[str, list[Evidence]]:
    """step id -> documents its value rests on (a COMPUTE inherits its inputs')."""
    by_action = {r.action_id: r for r in results.values()}
    memo: dict[str, list[Evidence]] = {}

    def of(step_id: str) -> list[Evidence]:
        if step_id not in memo:
            r = results.get(step_id)
            memo[step_id] = []
            if r is not None and r.document is not None:
                memo[step_id] = [r.document]
            elif r is not None:
                for aid in r.inputs:
                    if aid in by_action:
                        memo[step_id] += [e for e in of(by_action[aid].step_id)
                                          if e not in memo[step_id]]
        return memo[step_id]

    return {s.id: of(s.id) for s in plan.steps}


def _used_vars(env: SandboxedEnvironment, plan: Plan, template: str | None) -> list[str]:
    if template is None:
        consumed = {v for s in plan.steps for v in s.references()}
        return [s.var for s in plan.steps if s.var not in consumed]
    found = meta.find_undeclared_variables(env.parse(template))
    return [s.var for s in plan.steps if s.var in found]


def _gap(step_id: str, var: str, results: dict[str, StepResult]) -> str:
    r = results.get(step_id)
    if r is None:
        return f"{var} is missing: step {step_id} never reported a result."
    return (f"{var} is missing: step {step_id} ({r.operation}) failed with "
            f"{r.error_code}: {r.error_message}")


def render_answer(plan: Plan, results: dict[str, StepResult], question: str = "") -> Answer:
    env = environment()
    used = _used_vars(env, plan, plan.answer)
    producer = plan.producers()
    evidence = _evidence(plan, results)
    footnotes: dict[str, Footnote] = {}
    values: dict[str, object] = {}
    missing: list[str] = []
    for var in used:
        sid = producer[var]
        r = results.get(sid)
        if r is None or r.status != "ok":
            missing.append(_gap(sid, var, results))
            continue
        notes = []
        for e in evidence[sid]:
            fn = footnotes.setdefault(e.doc_id, Footnote(number=len(footnotes) + 1, evidence=e))
            fn.variables.append(var)
            notes.append(fn.number)
        values[var] = _typed(r.value, tuple(notes))
    items = [{"var": v, "step": producer[v], "value": values[v]} for v in used if v in values]
    context = {"question": question, "values": items, "missing": missing}
    if plan.answer is not None and not missing:
        try:
            text = env.from_string(plan.answer).render(**context, **values)
        except TemplateError as exc:
            missing.append(f"the plan's answer template failed: {exc}")
            text = env.get_template("missing.j2").render(**context)
    elif missing:
        text = env.get_template("missing.j2").render(**context)
    else:
        text = env.get_template(f"{plan.domain}.j2" if (TEMPLATES / f"{plan.domain}.j2")
                                .exists() else "default.j2").render(**context)
    return Answer(text=text.strip(), footnotes=list(footnotes.values()),
                  missing=missing, complete=not missing)

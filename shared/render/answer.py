"""Render the answer: consumes a plan, its step results and the question, produces the `Answer`
— text with footnote markers, the evidence footnotes, and the gaps. The plan's `answer`
template is used when it has one and every value it names was obtained. Otherwise the domain
template `shared/templates/<domain>.j2` (generic, finance, legal, medical; any other domain
gets generic) states the gaps first — which value is missing and why — then every value
found. Templates render in a sandboxed Jinja2 environment with StrictUndefined, the plan's
own in a child process bounded in time and memory (isolated.py); every printed value carries
the markers of the documents it rests on (see `cited.py`). A typed value (its `quantity`)
prints with its unit and scale (`$9,576 thousand`, `-$9.6 million`, `12.5%`), in the domain
templates and in a plan's own where `{{ CAPEX }}` stands bare; a plan's template that writes
the unit itself (`${{ CAPEX }}M`) gets the bare amount, in the scale it names. In domain
`medical` every printed value, gap and footnote title has patient identifiers masked (see
`redact.py`).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Callable

from jinja2 import TemplateError

from shared.models import DOMAINS, Answer, Evidence, Footnote, Plan, StepResult
from shared.models.quantity import Quantity
from shared.tools.numbers import parse_number
from shared.tables.quantities import display, rescale

from . import chain, isolated, labels, period
from .environment import environment
from .cited import CitedList, cite, cite_figure, kind, union
from .redact import mask_identifiers
from .sandbox import RENDER_BUDGET_S, template_reads

SHORT = 240
"""Characters of a text value a domain template shows before cutting it short."""


def template_name(domain: str) -> str:
    return f"{domain}.j2" if domain in DOMAINS else "generic.j2"


class _Footnotes:
    """One footnote per document (per page of it, when values name their pages),
    numbered in order of first use."""

    def __init__(self, mask: Callable[[str], str] | None):
        self.by_doc: dict[tuple[str, int | None], Footnote] = {}
        self.mask = mask

    def number(self, e: Evidence, var: str) -> int:
        key = (e.doc_id, e.page)
        if key not in self.by_doc:
            cited = e.model_copy(update={"title": self.mask(e.title)}) if self.mask else e
            self.by_doc[key] = Footnote(number=len(self.by_doc) + 1, evidence=cited)
        note = self.by_doc[key]
        if var not in note.variables:
            note.variables.append(var)
        return note.number


def _used_vars(plan: Plan) -> list[str]:
    if plan.answer is None:
        consumed = {v for s in plan.steps for v in s.references()}
        return [s.var for s in plan.steps if s.var not in consumed]
    found = template_reads(plan.answer)
    return [s.var for s in plan.steps if s.var in found]


def _gap(plan: Plan, results: dict[str, StepResult], step_id: str, var: str) -> str:
    r = results.get(step_id)
    if r is None:
        return f"{var} is missing: step {step_id} never reported a result."
    root = chain.root_failure(plan, results, step_id)
    if root == step_id:
        return (f"{var} is missing: step {step_id} ({r.operation}) failed with "
                f"{r.error_code}: {r.error_message}")
    cause = results.get(root)
    why = ("never reported a result" if cause is None else
           f"failed with {cause.error_code}: {cause.error_message}")
    return (f"{var} is missing: step {step_id} ({r.operation}) could not run because "
            f"step {root} ({plan.step(root).operation}) {why}")


def _cited(r: StepResult, docs: list[Evidence], notes: _Footnotes, var: str,
           written: tuple[bool, int | None] = (False, None)) -> object:
    """The template value of `r`; `written` is whether the plan's template writes a unit
    around it and the scale it names (labels.written_unit)."""
    if isinstance(r.value, bool) or r.value is None:
        return r.value  # printed as yes/no or n/a, without a marker: no footnote to point to
    quoted = bool(chain.own_evidence(r))  # not a plan's own words picked by IF
    per_item = chain.item_evidence(r)
    if per_item:
        item_notes = [(notes.number(e, var),) for e in per_item]
        return cite(r.value, union(*item_notes), item_notes, quoted)
    numbers = tuple(notes.number(e, var) for e in docs)
    q = r.quantity
    if q is not None and q.kind != "date" and not isinstance(r.value, list):
        return cite_figure(*_figure(str(r.value), q, written), numbers)
    return cite(r.value, numbers, quoted=quoted)


def _figure(value: str, q: Quantity, written: tuple[bool, int | None]) -> tuple[Decimal, str]:
    """The amount a template sees of a typed value and how it prints: with its unit and
    scale (`$9,576 thousand`), or, where the template writes the unit, bare in the scale
    the template names (`${{ CAPEX }}M`: `9.576`) or as the step gave it."""
    writes, scale = written
    if not writes:
        return q.amount, display(q)
    stated = rescale(q, scale) if scale is not None else q
    if stated is q and parse_number(value) == q.amount:
        return q.amount, value.strip()
    return stated.amount, f"{stated.amount:,f}"


def _short(text: str) -> str:
    if len(text) <= SHORT:
        return text
    cut = text[:SHORT]
    end = max(cut.rfind(". "), cut.rfind("\n"))
    return (cut[:end + 1] if end > SHORT // 3 else cut.rsplit(" ", 1)[0]).rstrip() + " …"


def _shown(step, value: object) -> object:
    """The value as a domain template prints it: with its unit, long text cut short."""
    quoted = getattr(value, "quoted", True)
    if isinstance(value, CitedList):
        return cite([_short(str(v)) for v in value], value.footnotes,
                    [getattr(v, "footnotes", ()) for v in value],
                    all(getattr(v, "quoted", True) for v in value))
    if kind(value) not in ("number", "text") or getattr(value, "shown", None):
        return value  # a typed figure prints its own unit and scale
    prefix, suffix = labels.unit(step, str(value))
    return cite(_short(f"{prefix}{value}{suffix}"), value.footnotes, quoted=quoted)


def render_answer(plan: Plan, results: dict[str, StepResult], question: str = "",
                  today: date | None = None, budget_s: float = RENDER_BUDGET_S,
                  renderer: isolated.Renderer | None = None) -> Answer:
    """The answer to `question` from the step `results` of `plan`, as of `today`; the
    plan's template renders in a process of `renderer` (default: this process's, see
    isolated.py) for at most `budget_s` seconds."""
    today = today or date.today()
    mask = mask_identifiers if plan.domain == "medical" else None
    used = _used_vars(plan)
    notes = _Footnotes(mask)
    spans = _spans(plan, results, used)
    values, items, missing = _found(plan, results, used, spans, notes, today)
    context = _context(question, items, missing, spans, today)
    text = None
    if plan.answer is not None and not missing:
        text = _plan_text(plan, {**context, **values}, mask, budget_s, renderer, missing)
    if text is None:
        text = _domain_text(plan, context, mask, budget_s)
    gaps = [mask(g) for g in missing] if mask else missing
    return Answer(text=text.strip(), footnotes=list(notes.by_doc.values()),
                  missing=gaps, complete=not missing)


def _spans(plan: Plan, results: dict[str, StepResult], used: list[str]) -> dict[str, list]:
    """variable -> the periods its value is about, for each variable the answer uses."""
    producer, spans = plan.producers(), period.periods(plan, results)
    return {var: spans[producer[var]] for var in used}


def _labels(plan: Plan) -> dict[str, str]:
    """variable -> its label; a COMPUTE names its inputs by their labels where unambiguous."""
    names: dict[str, str] = {}
    for s in plan.steps:
        unique = {v: n for v, n in names.items() if list(names.values()).count(n) == 1}
        names[s.var] = labels.label(s, unique)
    return names


def _found(plan: Plan, results: dict[str, StepResult], used: list[str],
           spans: dict[str, list], notes: _Footnotes,
           today: date) -> tuple[dict[str, object], list[dict], list[str]]:
    """The cited value of each used variable that was obtained, one domain-template item
    per value, and one gap line per variable that was not."""
    producer, evidence, names = plan.producers(), chain.evidence(plan, results), _labels(plan)
    values: dict[str, object] = {}
    items: list[dict] = []
    missing: list[str] = []
    for var in used:
        sid = producer[var]
        r = results.get(sid)
        if r is None or r.status != "ok":
            missing.append(_gap(plan, results, sid, var))
            continue
        written = labels.written_unit(plan.answer, var) if plan.answer else (False, None)
        values[var] = value = _cited(r, evidence[sid], notes, var, written)
        items.append(_item(plan, results, sid, var, value, names[var], evidence[sid],
                           spans[var], today))
    return values, items, missing


def _item(plan: Plan, results: dict[str, StepResult], sid: str, var: str, value: object,
          label: str, docs: list[Evidence], span: list, today: date) -> dict:
    """What a domain template prints of one value: shown form, kind, label, tense, period,
    the documents' titles and the provision it was found in."""
    r = results[sid]
    texts = chain.document_texts(plan, results, sid) if kind(value) != "list" else []
    where = labels.provision(str(r.value), texts) if kind(value) in ("number", "text") else None
    return {
        "var": var, "step": sid, "value": value, "shown": _shown(plan.step(sid), value),
        "kind": kind(value), "label": label,
        "tense": period.tense(span, today), "period": period.describe(span),
        "title": "; ".join(dict.fromkeys(e.title for e in docs)),
        "provision": cite(where, getattr(value, "footnotes", ())) if where else None,
    }


def _context(question: str, items: list[dict], missing: list[str],
             spans: dict[str, list], today: date) -> dict:
    """What every template sees besides the values themselves."""
    every = sorted({r for span in spans.values() for r in span})
    return {"question": question, "values": items, "missing": missing,
            "tense": period.tense(every, today), "period": period.describe(every),
            "tenses": {v: period.tense(span, today) for v, span in spans.items()},
            "periods": {v: period.describe(span) for v, span in spans.items()}}


def _plan_text(plan: Plan, context: dict, mask: Callable[[str], str] | None,
               budget_s: float, renderer: isolated.Renderer | None,
               missing: list[str]) -> str | None:
    """The plan's own template rendered in a render process; None (and a gap line in
    `missing`) when it fails."""
    try:
        return (renderer or isolated.renderer()).render(
            plan.answer, context, medical=mask is not None, budget_s=budget_s)
    except TemplateError as exc:
        missing.append(f"the plan's answer template failed: {exc}")
        return None


def _domain_text(plan: Plan, context: dict, mask: Callable[[str], str] | None,
                 budget_s: float) -> str:
    """The domain template: gaps first, then every value found."""
    domain = environment(mask, yes_no=True, budget_s=budget_s)
    return domain.get_template(template_name(plan.domain)).render(**context)

"""ARBITRATE: consumes an ArbitrateStep and the results of its `sources` (conflicting
values of one fact; some may have failed), produces the value its `prefer` rules choose,
with that input's evidence and quantity and a `note` saying why.

Rules, tried in order over the ok inputs; each narrows the candidates (a rule that
would leave none leaves them all), and the first that narrows them to one value decides:
- `source_type == "official_report"`: inputs whose document is of that type;
- `newest` / `oldest`: inputs whose document has the latest / earliest date;
- `majority`: inputs holding the most common value (numbers compare as Decimals, typed
  values as their figures in units: "$5.4 billion" is "5,400 million").
When every input agrees no rule is needed; when no rule decides, the first remaining
input (in `sources` order) is taken and the note says so.

ToolError codes: BAD_RULE (names the accepted forms), NO_INPUTS (every source failed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import regex

from shared.errors import ToolError
from shared.models import ArbitrateStep, Evidence, StepResult

from .base import Finding, ToolOutput
from .merge import check_sources, ok_sources, value_key
from .variables import as_text

CONFIDENCE = "arbitrated"
ACCEPTED_RULES = 'source_type == "TYPE", newest, oldest, majority'
_SOURCE_TYPE = regex.compile(r"""source_type\s*==\s*(["'])([^"']+)\1""")

Candidate = tuple[str, StepResult]


@dataclass(frozen=True)
class Rule:
    kind: str
    """`source_type`, `newest`, `oldest` or `majority`."""
    text: str
    source_type: str | None = None


def parse_rule(text: str) -> Rule:
    """One `prefer` rule; BAD_RULE names the accepted forms."""
    word = text.strip()
    if word in ("newest", "oldest", "majority"):
        return Rule(word, word)
    if m := _SOURCE_TYPE.fullmatch(word):
        return Rule("source_type", word, m[2])
    raise ToolError("BAD_RULE", f"prefer rule {text!r} is not one ARBITRATE knows; use one of: "
                    f"{ACCEPTED_RULES}")


def run_arbitrate(step: ArbitrateStep, inputs: dict[str, StepResult]) -> ToolOutput:
    """The value of `step.sources` that the `step.prefer` rules choose."""
    rules = [parse_rule(r) for r in step.prefer]
    ok, failed = ok_sources(step.sources, inputs)
    if not ok:
        raise ToolError("NO_INPUTS", f"ARBITRATE step {step.id}: every source failed: "
                        f"{'; '.join(failed)}; fix those steps or add a source that can succeed")
    remaining, decided_by = ok, None
    if _distinct(ok) > 1:
        for rule in rules:
            remaining = _apply(rule, remaining) or remaining
            if _distinct(remaining) == 1:
                decided_by = rule.text
                break
    name, chosen = remaining[0]
    others = [c for c in ok if _key(c[1]) != _key(chosen)]
    if len(ok) == 1:
        why = f"chose {_describe(name, chosen)}: the only source with a value"
    elif not others:
        why = f"chose {_describe(name, chosen)}: every source agrees"
    elif decided_by:
        why = f"chose {_describe(name, chosen)} over {_list(others)} by rule {decided_by}"
    else:
        why = (f"no rule decided between {_describe(name, chosen)} and {_list(others)}; "
               f"took the first remaining, ${name}")
    note = why + (f"; skipped {', '.join(failed)}" if failed else "")
    return ToolOutput(value=chosen.value, confidence=CONFIDENCE, document=_document(chosen),
                      documents=list(chosen.documents), note=note,
                      inputs=[r.action_id for _, r in ok], quantity=chosen.quantity)


def _apply(rule: Rule, candidates: list[Candidate]) -> list[Candidate]:
    docs = [(c, _document(c[1])) for c in candidates]
    if rule.kind == "source_type":
        return [c for c, d in docs if d is not None and d.source_type == rule.source_type]
    if rule.kind == "majority":
        counts = Counter(_key(c[1]) for c in candidates)
        top = max(counts.values())
        return [c for c in candidates if counts[_key(c[1])] == top]
    dated = [(c, d.date) for c, d in docs if d is not None and d.date]
    if not dated:
        return []
    target = (max if rule.kind == "newest" else min)(day for _, day in dated)
    return [c for c, day in dated if day == target]


def _distinct(candidates: list[Candidate]) -> int:
    return len({_key(r) for _, r in candidates})


def _key(result: StepResult) -> tuple[str, object]:
    return value_key(result.value, result.quantity)


def _document(result: StepResult) -> Evidence | None:
    return result.document or (result.documents[0] if result.documents else None)


def _describe(name: str, result: StepResult) -> str:
    doc = _document(result)
    facts = [f for f in (doc.source_type, doc.date) if f] if doc else []
    return f"${name} = {as_text(result.value)} ({', '.join(facts) or 'no document'})"


def _list(candidates: list[Candidate]) -> str:
    return ", ".join(_describe(n, r) for n, r in candidates)


def check_arbitrate(step: ArbitrateStep) -> list[Finding]:
    found: list[Finding] = []
    for i, rule in enumerate(step.prefer):
        try:
            parse_rule(rule)
        except ToolError:
            found.append(("bad_rule", f"step {step.id}'s prefer[{i}] is not a rule ARBITRATE "
                          f"knows; use one of: {ACCEPTED_RULES}"))
    return found + check_sources(step)

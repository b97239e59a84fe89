"""The checks of one step's own fields: consumes a step, produces `(code, message)`
findings — `bad_scope`, `bad_pattern`, `capture_groups`, `number_group`,
`bad_expression`, `bad_rule`, `bad_field` — without looking at the other steps.

Patterns are vetted as the tools compile them (shared/tools/pattern_vetting.py: the
static size limits, then a compile in a child process bounded in time and memory, with
the tools' flags), so a pattern that passes here compiles at execution time and none is
compiled in this process; an EXTRACT pattern's group is then read by the `regex` module's
parser (shared/tools/capture_shape.py): one that reads a figure yet can match text
without a digit, like `([\\d,]+)`, which captures a lone comma, is a `number_group`
finding. Expressions go through COMPUTE's own parser
(shared/tools/compute.py), never evaluated; ARBITRATE rules through ARBITRATE's
(shared/tools/arbitrate.py). A finding names the step and the field and says what is
wrong without quoting the field's text: it goes back to the client in a 422, and to the
model beside its own reply.
"""

from __future__ import annotations

from shared.errors import InputError, PatternRefused, ToolError
from shared.models import (ArbitrateStep, ComputeStep, ExtractStep, FilterStep, IfStep,
                           MergeStep, ValidateStep)
from shared.models.plan import VAR_RE
from shared.search.dates import parse_scope
from shared.tools.arbitrate import ACCEPTED_RULES, parse_rule
from shared.tools.capture_shape import capture_shape
from shared.tools.compute import parse_expression
from shared.tools.extract import FLAGS
from shared.tools.pattern_vetting import vet

def check_fields(step) -> list[tuple[str, str]]:
    """Every problem with `step`'s own fields."""
    found: list[tuple[str, str]] = []
    if getattr(step, "temporal_scope", None) is not None:
        try:
            parse_scope(step.temporal_scope)
        except InputError as e:  # its message starts by quoting the scope
            why = str(e).removeprefix(f"date scope {step.temporal_scope!r} ")
            found.append(("bad_scope", f"step {step.id}'s temporal_scope {why}; or leave "
                          "temporal_scope out"))
    if isinstance(step, ExtractStep) and step.pattern is not None:
        problems = _pattern(step.id, "pattern", step.pattern, groups=1)
        found += problems or _number_group(step.id, step.pattern)
    elif isinstance(step, ComputeStep):
        found += _expression(step.id, "expression", step.expression)
    elif isinstance(step, IfStep):
        found += _expression(step.id, "condition", step.condition)
    elif isinstance(step, ValidateStep):
        found += _pattern(step.id, "pattern", step.pattern) if step.pattern is not None else []
        if step.min is not None and step.max is not None and step.min > step.max:
            found.append(("bad_field", f"min {step.min:g} is above max {step.max:g}; swap them"))
    elif isinstance(step, FilterStep):
        found += _filter(step)
    elif isinstance(step, ArbitrateStep):
        found += _rules(step.id, step.prefer)
    if isinstance(step, (MergeStep, ArbitrateStep)):
        found += [("bad_field", f"step {step.id}'s sources[{i}] is not one variable; list "
                   "the $VARs of earlier steps, like [\"$E1\", \"$E2\"]")
                  for i, s in enumerate(step.sources) if not VAR_RE.fullmatch(s.strip())]
    return found


def _filter(step: FilterStep) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if not VAR_RE.fullmatch(step.source.strip()):
        found.append(("bad_field", f"step {step.id}'s source is not one variable; FILTER "
                      "reads the list an earlier step bound: write its $VAR"))
    if not step.condition and not step.pattern:
        found.append(("bad_field", "FILTER needs a condition (an expression over $item, like "
                      "\"$item > 90\") or a pattern (a regex an item must contain); add one"))
    if step.condition:
        found += _expression(step.id, "condition", step.condition)
    if step.pattern is not None:
        found += _pattern(step.id, "pattern", step.pattern)
    return found


def _rules(step_id: str, prefer: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for i, rule in enumerate(prefer):
        try:
            parse_rule(rule)
        except ToolError:
            found.append(("bad_rule", f"step {step_id}'s prefer[{i}] is not a rule ARBITRATE "
                          f"knows; use one of: {ACCEPTED_RULES}"))
    return found


def _expression(step_id: str, field: str, expression: str) -> list[tuple[str, str]]:
    try:
        parse_expression(expression)
    except ToolError as e:
        why = e.message.removeprefix("expression: ")
        return [("bad_expression", f"step {step_id}'s {field}: {why}")]
    return []


def _pattern(step_id: str, field: str, pattern: str,
             groups: int | None = None) -> list[tuple[str, str]]:
    try:
        found = vet(pattern, FLAGS)
    except PatternRefused as e:
        return [("bad_pattern", f"step {step_id}'s {field} {e.reason}")]
    if groups is not None and found != groups:
        return [("capture_groups", f"step {step_id}'s {field} has {found} capture groups; it "
                 "needs exactly one ( ) around the value to extract; make other groups "
                 "non-capturing with (?: )")]
    return []


def _number_group(step_id: str, pattern: str) -> list[tuple[str, str]]:
    shape = capture_shape(pattern, FLAGS)
    if shape is None or not shape.reads_figure or not shape.digitless:
        return []
    return [("number_group", f"step {step_id}'s pattern: its capture group reads a figure but "
             "can match text without a digit (a lone comma, a period, or nothing), which "
             "EXTRACT would not take for a value; make the group start with a digit, like "
             "(\\d[\\d,]*(?:\\.\\d+)?) for 1,234.5, or (\\d+(?:\\.\\d+)?) for 91.7")]

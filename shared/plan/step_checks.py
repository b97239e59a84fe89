"""The checks of one step's own fields: consumes a step, produces `(code, message)`
findings — `bad_scope`, `bad_pattern`, `capture_groups`, `number_group`,
`bad_expression`, `bad_rule`, `bad_field`, `bad_period` — without looking at the other
steps.

An EXTRACT by row needs a row of words (a line item, not a regex, without the period
in it; a bare total's words in parentheses count: `Total (loan)`) and, with `period`,
one a table column can be of (`FY2018`, `2018`, `fiscal 2018`, `2019-Q3`, `Q3 FY2019`,
`December 31, 2018`); its `quantity` is a figure's kind.

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

import re

from shared.errors import InputError, PatternRefused, ToolError
from shared.models import (ArbitrateStep, ComputeStep, ExtractStep, FilterStep, IfStep,
                           MergeStep, ValidateStep)
from shared.models.plan import VAR_RE
from shared.search.dates import parse_scope
from shared.search.periods import named_period
from shared.tables.periods import bare_quarter, period_of
from shared.tools.arbitrate import ACCEPTED_RULES, parse_rule
from shared.tools.capture_shape import capture_shape
from shared.tools.compute import parse_expression
from shared.tools.extract import FLAGS
from shared.tools.pattern_vetting import vet
from shared.tools.rows import aside_words, hints, label_words

_REGEX_SIGNS = re.compile(r"\\[dDsSwWb.()$]|\.[*+?]|\(\?|\[[^\]]*[\\-][^\]]*\]")
"""What marks a row as a regular expression: `\\d`, `.*`, `(?:`, `[0-9]`."""
_FISCAL_QUARTER = re.compile(r"^FY\s*'?(?:\d{4}|\d{2})\s*-\s*Q[1-4]$", re.IGNORECASE)
PERIOD_FORMS = "FY2018, 2018, fiscal 2018, 2019-Q3, Q3 FY2019, December 31, 2018, Q3 (the newest year's)"

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
    if isinstance(step, ExtractStep):
        if step.pattern is not None:
            problems = _pattern(step.id, "pattern", step.pattern, groups=1)
            found += problems or _number_group(step.id, step.pattern)
        found += _row(step)
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


def _row(step: ExtractStep) -> list[tuple[str, str]]:
    """A row of words, without a period or regex in it; a period a column can be of."""
    if step.row is None:
        return []
    found: list[tuple[str, str]] = []
    item = hints(step.row)[0]
    if _REGEX_SIGNS.search(step.row):
        found.append(("bad_field", f"step {step.id}'s row is written as a regular expression; "
                      "write the line item's words as the table writes them (\"purchases of "
                      "property and equipment\"), or use `pattern` to read a sentence"))
    elif not has_words(step.row):
        found.append(("bad_field", f"step {step.id}'s row has no words to match a table row "
                      "by; name the line item as the table writes it (\"Purchases of property "
                      "and equipment\") or as analysts do (\"capital expenditure\")"))
    elif step.period is None and named_period(item) is not None:
        found.append(("bad_field", f"step {step.id}'s row names a period; put the period in "
                      f"`period` ({PERIOD_FORMS}) and keep the line item's words in `row`"))
    if step.period is not None and not _readable(step.period):
        found.append(("bad_period", f"step {step.id}'s period is not one a table column can "
                      f"be of; write it as one of: {PERIOD_FORMS} (or a scope: "
                      "2018-10-01..2019-09-30)"))
    if step.quantity == "article":
        found.append(("bad_field", f"step {step.id} reads a table cell, a figure: give "
                      "quantity money, number, percent or date, or leave it out"))
    return found


def has_words(row: str) -> bool:
    """Whether a requested row has words to match a table row by: its line item's, or
    those a bare total says in parentheses (`Total (loan)`); `Total` alone, or with a
    footnote mark, has none."""
    item = hints(row)[0]
    return bool(label_words(item).words or aside_words(item))


def _readable(period: str) -> bool:
    text = " ".join(period.split())
    if named_period(text) or period_of(text) or _FISCAL_QUARTER.match(text) or \
            bare_quarter(text) is not None:
        return True
    try:
        parse_scope(re.sub(r"^FY\s?", "", text, flags=re.IGNORECASE))
    except InputError:
        return False
    return True


def _number_group(step_id: str, pattern: str) -> list[tuple[str, str]]:
    shape = capture_shape(pattern, FLAGS)
    if shape is None or not shape.reads_figure or not shape.digitless:
        return []
    return [("number_group", f"step {step_id}'s pattern: its capture group reads a figure but "
             "can match text without a digit (a lone comma, a period, or nothing), which "
             "EXTRACT would not take for a value; make the group start with a digit, like "
             "(\\d[\\d,]*(?:\\.\\d+)?) for 1,234.5, or (\\d+(?:\\.\\d+)?) for 91.7")]

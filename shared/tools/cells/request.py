"""What an EXTRACT by row asks for, in words: consumes the step (its `row`, `period`
and `quantity`), produces the `Request` the cell reader matches table rows with — the
names the row goes by (the step's own words first, then those the domain library gives
the line item), the heading words that prefer a row (the library's sections, and what
the step says in parentheses or before a colon), the kind of figure asked for.

`check_row` finds what is wrong with such a step before it runs: a row needs words (a
line item, not a regex, without the period in it; a bare total's words in parentheses
count: `Total (loan)`), a `period` one a table column can be of (PERIOD_FORMS), a
`quantity` that is a figure's kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import regex

from shared.errors import InputError
from shared.models import ExtractStep
from shared.search.dates import parse_scope
from shared.search.periods import named_period
from shared.tables.periods import bare_quarter, period_of

from ..base import Finding
from ..line_items import LineItem, items_named
from ..rows import Label, aside_words, hints, label_words

FIGURE_KINDS = ("money", "number", "percent", "date")


@dataclass(frozen=True)
class Request:
    """What the step asks for, in words."""

    row: str
    names: tuple[tuple[Label, bool], ...]
    """Each name the row goes by, and whether it is the step's own words."""
    context: frozenset[str]
    """Heading words that prefer a row: the library's sections and the step's asides."""
    words: frozenset[str]
    """Every word of the names and asides: a label's parenthetical words beyond them
    count against it."""
    items: tuple[LineItem, ...]
    kind: str | None
    """The kind the step asks for (`quantity`), else the one the library gives the line
    item: a cell of another kind is not a value."""
    period: str | None

    @cached_property
    def own(self) -> frozenset[str]:
        """The words of the step's own name for the row."""
        return frozenset(w for name, own in self.names if own for w in name.words)

    def names_sharing(self, label: Label) -> tuple[tuple[Label, bool], ...]:
        """The names that share a word with `label` (every name for a label without
        words): only those can fit it."""
        if not label.words:
            return self.names
        found = {i for w in label.distinct for i in self._by_word.get(w, ())}
        return tuple(self.names[i] for i in sorted(found))

    @cached_property
    def _by_word(self) -> dict[str, tuple[int, ...]]:
        index: dict[str, list[int]] = {}
        for i, (name, _) in enumerate(self.names):
            for w in name.distinct:
                index.setdefault(w, []).append(i)
        return {w: tuple(ids) for w, ids in index.items()}


_PERCENT_ROW = regex.compile(r"^\s*(?:the\s+)?(?:per\s?cent(?:age)?s?|%)\s+of\b", regex.I)
"""A row named as a percentage of something ("percentage of sales from APAC")."""


def request_of(step: ExtractStep) -> Request:
    """The row, its names, the heading words and the kind `step` asks for."""
    item_text, aside = hints(step.row)
    items = items_named(item_text) or items_named(step.row)
    names: dict[tuple[str, ...], tuple[Label, bool]] = {}
    for text, own in [(item_text, True), *((n, False) for i in items for n in i.all_names())]:
        label = label_words(text)
        names.setdefault(label.words, (label, own))  # the step's own words first
    unique = tuple(names.values())
    context = {w for text in (aside, *(s for i in items for s in i.sections))
               for w in label_words(text).words}
    kinds = {i.kind for i in items}
    # a row asked as a percentage ("percentage of sales from APAC") is a percent cell
    kind = step.quantity if step.quantity in FIGURE_KINDS else (
        "percent" if _PERCENT_ROW.search(step.row) else kinds.pop() if len(kinds) == 1
        else None)
    words = {w for name, _ in unique for w in name.words} | context
    return Request(step.row, unique, frozenset(context), frozenset(words), tuple(items), kind,
                   step.period)


def period_text(request: Request) -> str:
    return f" for {request.period}" if request.period else ""


def item_names(request: Request) -> str:
    return " / ".join(repr(i.name) for i in request.items) or "asked for"


_REGEX_SIGNS = re.compile(r"\\[dDsSwWb.()$]|\.[*+?]|\(\?|\[[^\]]*[\\-][^\]]*\]")
"""What marks a row as a regular expression: `\\d`, `.*`, `(?:`, `[0-9]`."""
_FISCAL_QUARTER = re.compile(r"^FY\s*'?(?:\d{4}|\d{2})\s*-\s*Q[1-4]$", re.IGNORECASE)
ALL_PERIODS = "all"
"""The `period` of an EXTRACT that reads its row in every period of its table (series.py);
`all 3`: of a table of three periods."""
_ALL = re.compile(r"^all(?:\s+(?P<count>[2-9]|[1-9]\d))?$", re.IGNORECASE)
PERIOD_FORMS = ("FY2018, 2018, fiscal 2018, 2019-Q3, Q3 FY2019, December 31, 2018, Q3 (the newest "
                "year's), all (every period of the table), all 3 (every period of a table of "
                "three)")


def check_row(step: ExtractStep) -> list[Finding]:
    """A row of words, without a period or regex in it; a period a column can be of."""
    if step.row is None:
        return []
    found: list[Finding] = []
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
    if every_period(step.period) and step.fallback is not None:
        found.append(("bad_field", f"step {step.id} reads its row in every period, a list of "
                      "figures, which one fallback cannot stand in for; drop `fallback`, or "
                      "name one period"))
    if step.period is not None and not every_period(step.period) and \
            not _readable(step.period):
        found.append(("bad_period", f"step {step.id}'s period is not one a table column can "
                      f"be of; write it as one of: {PERIOD_FORMS} (or a scope: "
                      "2018-10-01..2019-09-30)"))
    if step.quantity == "article":
        found.append(("bad_field", f"step {step.id} reads a table cell, a figure: give "
                      "quantity money, number, percent or date, or leave it out"))
    return found


def every_period(period: str | None) -> bool:
    """Whether `period` asks for the row in every period of its table (`all`, `all 3`)."""
    return _every(period) is not None


def periods_counted(period: str | None) -> int | None:
    """How many periods `all N` says the table has ("across the 3 year period": 3);
    None for `all` and any other period."""
    m = _every(period)
    return int(m["count"]) if m and m["count"] else None


def _every(period: str | None) -> re.Match | None:
    return _ALL.match(" ".join(period.split())) if period is not None else None


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

"""What an EXTRACT by row asks for, in words: consumes the step (its `row`, `period`
and `quantity`), produces the `Request` the cell reader matches table rows with — the
names the row goes by (the step's own words first, then those the domain library gives
the line item), the heading words that prefer a row (the library's sections, and what
the step says in parentheses or before a colon), the kind of figure asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import regex

from shared.models import ExtractStep

from ..line_items import LineItem, items_named
from ..rows import Label, hints, label_words

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

"""Cited values: consumes a step's raw value and the footnote numbers of the documents
it rests on, produces the value a template sees, and prints it with its markers.

- numbers become `CitedDecimal`: templates compare them (`{% if GAP < 0 %}`) and do
  arithmetic on them, and the result keeps the footnotes of every operand; a typed value
  (`cite_figure`) is its amount, printed with its unit and scale (`$9,576 thousand`) or
  bare where the template writes the unit itself;
- text becomes `CitedStr`, lists become `CitedList` (each item cited on its own),
  bools and None stay as they are.

`show` is the Jinja `finalize` hook. It puts the markers right after every number of a
cited value (`91.7[1]%`, `$412.5[1] million`), or at the end of a text without numbers
when the text is a document's own words (`quoted`); a plan's own words picked by IF
(`then: "above"`) carry none. Default templates also print bools as yes/no.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Callable, Iterable

NUMBER = re.compile(r"(?<![\w.,/:\[\-])(?:\d{4}-\d{2}-\d{2}|\d+/\d+|-?\d(?:[\d,]*\d)?(?:\.\d+)?)"
                    r"(?![\w/:]|[.,]\d)")
"""A number as the answer text shows it: `412.5`, `-0.3`, `1,234`, `120/80`, `2023-09-30`.
Digits inside words (`Q3`) and footnote markers (`[1]`) are not numbers."""
MARKER = re.compile(r"(?:\[\d+\])+")
PLAIN_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def union(*groups: Iterable[int]) -> tuple[int, ...]:
    """Footnote numbers of all `groups`, each once, in order of first appearance."""
    return tuple(dict.fromkeys(n for g in groups for n in g))


class CitedStr(str):
    footnotes: tuple[int, ...] = ()
    quoted: bool = True
    """The text is a document's words: cited at its end even when it holds no number."""


class CitedDecimal(Decimal):
    footnotes: tuple[int, ...] = ()
    shown: str | None = None
    """How it prints, when not as its digits: `$9,576 thousand`, `12,088`."""


class CitedList(list):
    footnotes: tuple[int, ...] = ()


def _keeping_footnotes(name: str) -> Callable:
    base = getattr(Decimal, name)

    def op(self, *args):
        result = base(self, *args)
        if not isinstance(result, Decimal):
            return result
        return _with(CitedDecimal(result), union(self.footnotes, *(getattr(a, "footnotes", ())
                                                                   for a in args)))
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__",
              "__neg__", "__pos__", "__abs__", "__round__"):
    setattr(CitedDecimal, _name, _keeping_footnotes(_name))


def _with(value, notes: tuple[int, ...]):
    value.footnotes = notes
    return value


def cite(value: object, notes: tuple[int, ...],
         item_notes: list[tuple[int, ...]] | None = None, quoted: bool = True) -> object:
    """The template value of a step's `value`; list items take `item_notes[i]` when given."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        per = item_notes if item_notes and len(item_notes) == len(value) else [notes] * len(value)
        return _with(CitedList(cite(v, n, quoted=quoted) for v, n in zip(value, per)),
                     union(*per))
    text = str(value)
    if PLAIN_NUMBER.match(text.strip()):
        try:
            return _with(CitedDecimal(text.strip()), notes)
        except InvalidOperation:
            pass
    out = _with(CitedStr(text), notes)
    out.quoted = quoted
    return out


def cite_figure(amount: Decimal, shown: str, notes: tuple[int, ...]) -> CitedDecimal:
    """A typed value: compares and computes as `amount`, prints as `shown`."""
    value = _with(CitedDecimal(amount), notes)
    value.shown = shown
    return value


def kind(value: object) -> str:
    """`bool`, `list`, `number`, `text` or `none`: how default templates phrase a value."""
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "none"
    if isinstance(value, list):
        return "list"
    return "number" if isinstance(value, Decimal) else "text"


def marked(text: str, notes: Iterable[int], quoted: bool = True) -> str:
    """`text` with the markers of `notes` after each of its numbers (or, when `quoted`,
    at its end)."""
    markers = "".join(f"[{n}]" for n in notes)
    if not markers:
        return text
    out, count = NUMBER.subn(lambda m: m.group() + markers, text)
    return out if count or not quoted else text + markers


def show(value: object, mask: Callable[[str], str] | None = None,
         yes_no: bool = False) -> object:
    """How a template prints `value` (the Jinja `finalize` hook); `mask` hides identifiers,
    `yes_no` prints bools as yes/no."""
    if isinstance(value, bool) and yes_no:
        return "yes" if value else "no"
    if value is None:
        return "n/a"
    if isinstance(value, CitedList):
        return "; ".join(str(show(v, mask, yes_no)) for v in value)
    if isinstance(value, (CitedStr, CitedDecimal)):
        text = (value.shown or str(Decimal(value))) if isinstance(value, Decimal) \
            else str.__str__(value)
        return marked(mask(text) if mask else text, value.footnotes,
                      getattr(value, "quoted", True))
    if isinstance(value, str) and mask:
        return mask(value)
    return value

"""A capture judged in its document: consumes a document's text, the span EXTRACT
captured in it and what the step asks for, produces the capture's `Quantity` (its kind,
unit and scale read from the text around it) or why it is not a value.

What is asked (`Asked`): the step's `quantity` when it gives one (`money`, `percent`,
`number` (any figure, typed as written), `date`); else, for a pattern whose group reads a figure (shared/tools/
capture_shape.py), an `amount` of any kind, or a `year` when the group matches exactly
four digits; else nothing (`text`: a capture is typed when it states a figure, and
refused only when it holds neither letter nor digit).

Not a value, with the reason said (each a clause after the capture, "',' has no digit"):
- no digit (a lone comma or dash; a dash stands for zero only as a table's cell);
- part of a longer figure or word (`1` of `1,234`, `10` of `10-K`, `3` of `Q3`; a
  figure set against Chinese or Japanese words, which have no spaces, stands alone);
- a page number: a figure alone on its line, or ending a table-of-contents line
  ("Item 7.   Management's Discussion …   23", a line under a "Page" heading);
- a footnote mark: a small number in brackets or superscript right after a word
  (`Revenue(1)`, `Total[2]`, `Sales¹`);
- a date fragment: a day of a month, a part of `12/31/2019` or `2019-09-30`, a time;
- a year (1900–2100, written bare) where an amount is asked;
- a figure of another kind than asked (`12.5%` where money is asked).

The unit and scale: a currency just before the capture (`$ 94,785`, spaces allowed as
tables set them), a scale word or percent sign just after it (`$5.4 billion`, `12.3
million`, `7.5 per cent`); for a figure set in a table's columns without a scale of
its own, the unit its table states: the nearest statement above it on its page
(`(In thousands, except per share amounts)`, `(Dollars in thousands)`) on a line whose
figures are not its own, or one in the figure's own row label ("Revenue miles (in
thousands)"); per-share and share rows are left unscaled when the statement excepts
them. A currency sign in the table's rows between the statement and the figure makes
a bare figure money in that currency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import regex

from shared.models.quantity import Quantity

from .capture_shape import capture_shape
from .entities import find_dates
from .figures import not_alone
from shared.tables.quantities import CURRENCIES, DASHES, is_year, parse_quantity, unit_statement

Asked = Literal["money", "percent", "number", "date", "amount", "year", "text"]
UNIT_LINES = 100
"""How many lines above a figure its table's unit statement may be."""

_CURRENCY = "|".join(regex.escape(c) for c in sorted(CURRENCIES, key=len, reverse=True))
_CURRENCY_BEFORE = regex.compile(rf"(?<!\w)(?:{_CURRENCY})\s{{0,16}}$", regex.I)
_AFTER = regex.compile(r"\s?(?:(?:thousand|million|billion|trillion|mn|bn|tn|[kmb])\b"
                       r"(?:\s?(?:%|per\s?cent\b|percent\b))?|%|per\s?cent\b|percent\b)",
                       regex.I)
_CELL_GAP = regex.compile(rf"(?:\s{{2,}}|\t|\.{{3,}}\s*)(?:(?:{_CURRENCY})\s*)?\(?$", regex.I)
_LONGER_BEFORE = regex.compile(r"(?:\d[.,]?|\p{Latin})$")
_LONGER_AFTER = regex.compile(r"[.,]?\d|-?\p{Latin}")
"""A figure glued to a digit or a Latin letter is part of a longer one, a word or a code;
scripts written without spaces (`营业收入为128.6亿元`) set figures against their words."""
_DATE_BEFORE = regex.compile(r"\d{1,4}[/.-]$|\d:$")
_DATE_AFTER = regex.compile(r"[/.-]\d{1,4}\b|:\d\d")
_REFERENCE = regex.compile(r"\b(?:notes?|items?|sections?|parts?|pages?|exhibits?|schedules?"
                           r"|rules?|articles?)\s*$", regex.I)
_FOOTNOTE_AROUND = regex.compile(r"[^\W\d_)%][ ]?[(\[]$")
_SUPERSCRIPT = regex.compile(r"^[¹²³⁴⁵⁶⁷⁸⁹⁰]+$")
_PAGE_DECOR = regex.compile(r"^(?:page\s+)?[-–—]?\s*(?:[A-Z]-)?\d{1,4}\s*[-–—]?(?:\s+of\s+\d{1,4})?$",
                            regex.I)
_TOC_LINE = regex.compile(r"^\s*(?:item\s+\d{1,2}[a-z]?\.?|part\s+[ivx]+\b|note\s+\d{1,2}\b)",
                          regex.I)
_TOC_GAP = regex.compile(r"(?:\s{2,}|\.{3,}\s*|(?:\.\s){3,})$")
_DOT_LEADER = regex.compile(r"(?:\.{3,}|(?:\.\s){3,})\s*$")
_TOC_HEADING = regex.compile(r"^\s*(?:page|page\s+no\.?|pages)\s*$", regex.I | regex.M)
_FIGURE = regex.compile(r"(?<![\w.,])\(?(?:[$€£]\s?)?\d[\d,]*(?:\.\d+)?\)?(?![\w%])")
_PER_SHARE = regex.compile(r"\bper\b[\w\s]{0,20}\bshare|\bshares?\b", regex.I)


@dataclass(frozen=True)
class Verdict:
    """What a capture is: a value (with its quantity, None for text or a year) or not."""

    quantity: Quantity | None = None
    not_a_value: str | None = None
    """Why the capture is not a value (a clause: "is a year, not an amount")."""

    @property
    def ok(self) -> bool:
        return self.not_a_value is None


def asked_for(quantity: str | None, pattern: str | None) -> Asked:
    """What a step asks for: its `quantity`, else what its pattern's group reads."""
    if quantity in ("money", "percent", "number", "date"):
        return quantity
    shape = capture_shape(pattern) if pattern and quantity is None else None
    if shape is not None and shape.reads_figure:
        return "year" if shape.year else "amount"
    return "text"


def judge(text: str, start: int, end: int, asked: Asked) -> Verdict:
    """What text[start:end] (a capture, stripped) is, as a value of the kind `asked`."""
    capture = text[start:end]
    if not any(c.isdigit() for c in capture):
        if asked == "text":
            return Verdict() if any(c.isalpha() for c in capture) else \
                Verdict(not_a_value="holds neither a letter nor a digit")
        if asked not in ("date", "year") and capture in DASHES and \
                _stands_as_cell(text, start, end):
            return Verdict(quantity=_typed(text, start, end, asked, capture))
        return Verdict(not_a_value="has no digit")
    if asked == "text" and parse_quantity(capture) is None:
        return Verdict()  # words with a figure in them: a text group's business
    if why := _not_standing_alone(text, start, end, capture):
        return Verdict(not_a_value=why)
    if asked == "date":
        q = parse_quantity(capture.rstrip(".,;:"), kind="date")
        if q is not None or _is_date(capture):
            return Verdict(quantity=q)
        return Verdict(not_a_value="is not a date")
    q = _typed(text, start, end, asked, capture)
    if q is None:
        if asked in ("money", "percent"):
            found = _typed(text, start, end, "amount", capture)
            kind = _A[found.kind] if found else "not a figure as written"
            return Verdict(not_a_value=f"is {kind}, not {_A[asked]}")
        return Verdict()  # a figure this reader does not know (`12亿元`): kept as text
    if is_year(q):
        if asked in ("year", "text"):
            return Verdict()
        return Verdict(not_a_value=f"is a year, not {_A.get(asked, 'an amount')}")
    return Verdict(quantity=q)


def _is_date(capture: str) -> bool:
    """A month, quarter or year written alone (`March 2024`, `Q3 2023`, `2024`)."""
    return any(s[0] == 0 and s[1] == len(capture) for s in find_dates(capture))


_A = {"money": "an amount of money", "percent": "a percent", "number": "a number",
      "amount": "an amount"}


def _typed(text: str, start: int, end: int, asked: Asked, capture: str) -> Quantity | None:
    """The capture read with the currency before it and the scale or percent after it,
    in its table's unit when it is a table's cell without a scale of its own."""
    core = capture.rstrip(".,;:") if capture[-1:] in ".,;:" and capture[:-1][-1:].isdigit() \
        else capture
    before = text[max(0, start - 20):start]
    sign = _CURRENCY_BEFORE.search(before)
    after = _AFTER.match(text, end, min(len(text), end + 16))
    written = ((sign.group().strip() if sign else "") + core
               + (after.group() if after and core == capture else ""))
    kind = asked if asked in ("money", "percent") else None  # a number: any figure
    stated = None
    if not after and "%" not in capture and _stands_as_cell(text, start, end):
        stated = _table_unit(text, start)
    if stated is None:
        return parse_quantity(written, kind=kind)
    currency, scale = stated
    return parse_quantity(written, kind=kind, unit=currency, scale=scale)


def _line(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the line holding text[start:end] (a form feed starts a line too)."""
    lo = max(text.rfind("\n", 0, start), text.rfind("\f", 0, start)) + 1
    hi = min(i for i in (text.find("\n", end), text.find("\f", end), len(text)) if i >= 0)
    return lo, hi


def _stands_as_cell(text: str, start: int, end: int) -> bool:
    """Whether the capture is set in a table's column: a run of spaces (or a tab, or a
    currency sign and spaces) before it, and a label before that."""
    lo, _ = _line(text, start, end)
    before = text[lo:start]
    gap = _CELL_GAP.search(before)
    return bool(gap) and bool(before[:gap.start()].strip())


def _not_standing_alone(text: str, start: int, end: int, capture: str) -> str | None:
    """Why a capture holding digits is not a figure of its own, or None."""
    before, after = text[max(0, start - 12):start], text[end:end + 12]
    bare = capture.strip("()[]")
    if capture[0].isdigit() and _LONGER_BEFORE.search(before) or \
            capture[-1].isdigit() and _LONGER_AFTER.match(after) and not _AFTER.match(after):
        lo, hi = _line(text, start, end)
        word = regex.search(r"\S*$", text[lo:start]).group() + capture + \
            regex.match(r"\S*", text[end:hi]).group()
        return f"is part of {word[:40]!r}"
    if _DATE_BEFORE.search(before) or _DATE_AFTER.match(after):
        return "is part of a date or time"
    if not_alone(text, start, end) == "a day of a month":
        return "is a day of a month"
    if _SUPERSCRIPT.match(capture) or (bare.isdigit() and len(bare) <= 2
                                       and _footnote(text, start, end, capture)):
        return "is a footnote mark"
    if bare.isdigit() and _REFERENCE.search(before):
        return "is the number of a note, item or page, not a figure"
    if bare.isdigit() and len(bare) <= 4 and not _is_year_text(bare) and \
            (why := _page_number(text, start, end)):
        return why
    return None


def _footnote(text: str, start: int, end: int, capture: str) -> bool:
    """A one- or two-digit capture in brackets right after a word: `Revenue(1)`,
    `Total revenue (2)`, `Sales[3]`, the brackets in the capture or around it."""
    if capture[0] in "([":
        return bool(regex.search(r"[^\W\d_)%][ ]?$", text[max(0, start - 2):start]))
    return bool(_FOOTNOTE_AROUND.search(text[max(0, start - 3):start])) and \
        text[end:end + 1] in (")", "]")


def _page_number(text: str, start: int, end: int) -> str | None:
    """Why a small whole number is a page number: alone on its line, or the one figure
    ending a line of a table of contents (an "Item 7." line, dot leaders, a "Page"
    heading above it on its page); None otherwise."""
    lo, hi = _line(text, start, end)
    if _CURRENCY_BEFORE.search(text[max(lo, start - 20):start]):
        return None  # money is never a page number
    if _PAGE_DECOR.match(text[lo:hi].strip()):
        return "is a page number (alone on its line)"
    label = text[lo:start]
    item = _TOC_LINE.match(label)
    if text[end:hi].strip(" .)(abc") or not _TOC_GAP.search(label) or \
            _FIGURE.search(label, item.end() if item else 0):
        return None
    page_start = text.rfind("\f", 0, lo) + 1
    if item or _DOT_LEADER.search(label) or \
            _TOC_HEADING.search(text, max(page_start, lo - 6000), lo):
        return "is a page number (a table of contents line)"
    return None


def _table_unit(text: str, start: int) -> tuple[str | None, int] | None:
    """(currency, scale) the table of a figure at `start` states: in its own row label,
    else the nearest statement above it on its page on a line without figures of its
    own; None when there is none within UNIT_LINES lines."""
    lo, _ = _line(text, start, start)
    row = text[lo:start]
    own = unit_statement(row)
    if own is not None:
        return own[1], 0 if own[3] and _PER_SHARE.search(row) else own[2]
    currency, per_share, in_block = None, bool(_PER_SHARE.search(row)), True
    hi = lo - 1
    for _ in range(UNIT_LINES):
        if hi <= 0 or text[hi] == "\f":
            return None
        top = max(text.rfind("\n", 0, hi), text.rfind("\f", 0, hi)) + 1
        line = text[top:hi]
        if (found := unit_statement(line)) is not None:
            (_, stop), stated_currency, scale, excepted = found
            rest = line[stop:]
            if not any(not _is_year_text(f) for f in _FIGURE.findall(rest)):
                return stated_currency or currency, 0 if excepted and per_share else scale
        elif in_block and _PER_SHARE.search(line) and not _FIGURE.search(line):
            per_share = True  # the heading of the row's block: "Per common share:"
        in_block = in_block and bool(line.strip())
        sign = regex.search(rf"(?:{_CURRENCY})(?=\s*[\d(—–-])", line, regex.I)
        if sign and currency is None:
            currency = CURRENCIES.get(sign.group().lower())
        if text[top - 1:top] == "\f":
            return None
        hi = top - 1
    return None


def _is_year_text(figure: str) -> bool:
    return figure.isdigit() and len(figure) == 4 and 1900 <= int(figure) <= 2100

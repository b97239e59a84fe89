"""Figures that do not stand alone: consumes a text and the span of a number in it,
produces why that number is not a figure to report on its own — a day of a month ("on 17
January"), one end of a range ("between 4% and 5%", "16–17 billion"), a negative written
in words or in accounting brackets ("negative $41 million", "a net loss of NOK 45
million", "(12.3)") — or None.

Both readers of documents use it: the heuristic planner (shared/planners/reading.py) and the
EXTRACT tool's built-in layers (shared/tools/entities.py), so neither reports 4 for
"between 4% and 5%" or $41 million for "negative $41 million".
"""

from __future__ import annotations

import regex

_CODE = r"(?:[A-Z]{3}\s?|[$€£¥₹])?"  # "between NOK 16 billion and NOK 17 billion"
_RANGE_BEFORE = regex.compile(rf"\bbetween\s+{_CODE}$|\bbetween\b[^,;]{{0,32}}\band\s+{_CODE}$|"
                              r"(?<!\bfrom\s\S{0,12})(?P<other>[$€£¥₹]?\d[\d.,]*\s?%?)\s*(?:-|–|to)\s*$",
                              regex.I)
_RANGE_AFTER = regex.compile(r"^\s*(?:-|–|to)\s*(?P<other>[$€£¥₹]?\d[\d.,]*\s?%?)|"
                             rf"^\s*and\s+{_CODE}\d", regex.I)
_NEGATIVE = regex.compile(r"(?:\bnegative|\bminus|\bloss(?:es)?\s+of|\bdeficit\s+of|\boutflow\s+of|"
                          r"亏损|净亏)\s*(?:[A-Z]{3}\s)?\s*$", regex.I)
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
"""A month's name or its short form: "margin 12%" and "decreased 5%" name no month."""
_MONTH_AFTER = regex.compile(rf"^\s*(?:st|nd|rd|th)?\s*(?:of\s+)?{_MONTH}\b", regex.I)
_MONTH_BEFORE = regex.compile(rf"\b{_MONTH}\b\.?\s*$", regex.I)


def _form(figure: str) -> tuple[bool, bool]:
    """Whether a figure is a percentage and whether it carries a currency symbol."""
    return "%" in figure or "cent" in figure.lower(), bool(regex.search(r"[$€£¥₹]", figure))


def not_alone(text: str, start: int, end: int) -> str | None:
    """Why the number at text[start:end] is not a figure on its own, or None."""
    before, after = text[max(0, start - 48):start], text[end:end + 16]
    if _MONTH_BEFORE.search(before[-12:]) or _MONTH_AFTER.match(after):
        return "a day of a month"
    figure = text[start:end]
    for m in (_RANGE_BEFORE.search(before), _RANGE_AFTER.match(after)):
        if m and (not m["other"] or _form(m["other"]) == _form(figure)):
            return "one end of a range"  # "4% to 5%", not "rose 22% to $121 million"
    if text[max(0, start - 1):start] == "(" and text[end:end + 1] == ")":
        return "a negative in brackets"
    if _NEGATIVE.search(before):
        return "a negative or a loss"
    return None

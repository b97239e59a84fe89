"""Regular expressions as tools run them: consumes a plan's pattern (EXTRACT, VALIDATE,
FILTER) and text, produces a compiled pattern or a match; and the built-in library of
patterns per quantity (percent, money, date, number, article) that EXTRACT falls back on.

A plan's pattern is compiled only once it passed the static limits and compiled in a
child process (pattern_vetting.py), so a pattern that would expand to gigabytes is a
BAD_PATTERN step error, not a worker out of memory; every search runs under the `regex`
module's timeout, so a catastrophic pattern such as `(a+)+$` becomes a PATTERN_TIMEOUT
step error instead of a hung worker. Flags: IGNORECASE (LLM-written patterns rarely get
a document's capitalization right) but not DOTALL, so `.*?` stays within one line.

ToolError codes: BAD_PATTERN (past a size limit, does not compile, its compile overran,
or it lacks a needed capture group), PATTERN_TIMEOUT.
"""

from __future__ import annotations

import regex

from shared.errors import PatternRefused, ToolError
from shared.search.terms import keywords

from .base import Finding
from .pattern_vetting import compile_vetted, vet

FLAGS = regex.IGNORECASE
DEFAULT_TIMEOUT_S = 1.0
"""Seconds one tool may spend matching one plan pattern."""

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s?(?:thousand|million|billion|trillion|mn|bn|tn|[kmb])\b)?"
DATE_FORMS = (rf"\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}\s+{_MONTH}\s+\d{{4}}"
              rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}")
"""A calendar date as documents write it (no groups): 2024-03-29, 29 March 2024, March 29, 2024."""

LIBRARY: dict[str, regex.Pattern] = {
    "percent": regex.compile(
        rf"(?<![\w.,])([-−]?(?:{_AMOUNT}))\s?(?:%|per\s?cent\b)", FLAGS),
    "money": regex.compile(
        rf"(?<![\w.,])([-−]?[$€£¥₹]\s?(?:{_AMOUNT}){_SCALE})", FLAGS),
    "date": regex.compile(rf"(?<![\w-])({DATE_FORMS})(?![\w-])", FLAGS),
    "number": regex.compile(
        rf"(?<![\w.,$€£¥₹-])([-−]?(?:{_AMOUNT}){_SCALE})(?![\d%]|\.\d|\s?per\s?cent)",
        FLAGS),
    "article": regex.compile(
        r"((?:article|art\.|section|sec\.|§{1,2})\s*\d+[a-z]?(?:\.\d+)*(?:\(\d+\))?)(?![\w.]*\d)",
        FLAGS),
}
"""One pattern per `ExtractStep.quantity`; group 1 is the value. A percent is the number
without its sign (as plans usually capture it); money and articles keep their symbol,
scale word or label, since dropping them would change the meaning."""

_SYNTAX = regex.compile(
    r"\\[pPN]\{[^}]*\}"                 # \p{L}
    r"|\\[a-zA-Z]"                      # \d \s \b \w …
    r"|\[(?:\\.|[^\]\\])*\]"            # [0-9.,] character classes
    r"|\{\d*,?\d*\}"                    # {0,80}
    r"|\(\?(?:P?<[A-Za-z_]\w*>|<[=!]|[=!:>]|[a-zA-Z-]+[:)])"  # (?P<name> (?<= (?: (?i)
)


def literal_words(pattern: str) -> list[str]:
    """The words a pattern spells out literally, without regex syntax and stopwords:
    `battery yield rate.*?(\\d+\\.\\d+)%` -> ["battery", "yield", "rate"]."""
    return keywords(_SYNTAX.sub(" ", pattern))


def compile_pattern(pattern: str, field: str, groups: int = 0) -> regex.Pattern:
    """`pattern` compiled with FLAGS (pattern_vetting.py); BAD_PATTERN names `field` and
    says why when it is refused or has fewer than `groups` capture groups."""
    try:
        compiled = compile_vetted(pattern, FLAGS)
    except PatternRefused as e:
        raise ToolError("BAD_PATTERN", f"{field} `{pattern}` {e.reason}") from None
    if compiled.groups < groups:
        raise ToolError("BAD_PATTERN", f"{field} `{pattern}` has no capture group; wrap the "
                        "value to extract in ( ), e.g. 'yield rate.*?(\\d+\\.\\d+)%'")
    return compiled


def search(compiled: regex.Pattern, text: str, timeout_s: float, where: str,
           remaining_s: float | None = None, pos: int = 0):
    """The first match of `compiled` in `text` from `pos` (`where` describes it), or
    None; PATTERN_TIMEOUT past `remaining_s` of a `timeout_s` budget (default: all of it)."""
    limit = timeout_s if remaining_s is None else remaining_s
    try:
        return compiled.search(text, pos, timeout=max(limit, 0.001))
    except TimeoutError:
        raise timeout_error(f"pattern `{compiled.pattern}`", timeout_s, where) from None


def timeout_error(what: str, timeout_s: float, where: str, hint: str = "") -> ToolError:
    """The PATTERN_TIMEOUT error for `what` (e.g. "pattern `(a+)+$`") running past
    `timeout_s` on `where`; `hint` replaces the advice on writing the pattern."""
    advice = hint or ("avoid nested repetition like (a+)+ and prefer lazy, anchored parts "
                      "like 'label.{0,80}?(\\d+)'")
    return ToolError("PATTERN_TIMEOUT", f"{what} ran longer than {timeout_s:g} s on {where}; "
                     f"{advice}")


def check_pattern(step_id: str, field: str, pattern: str,
                  groups: int | None = None) -> list[Finding]:
    """`bad_pattern` when `pattern` would be refused as the tools compile it (vetted in a
    child process, nothing compiled here); `capture_groups` when it has not `groups`."""
    try:
        found = vet(pattern, FLAGS)
    except PatternRefused as e:
        return [("bad_pattern", f"step {step_id}'s {field} {e.reason}")]
    if groups is not None and found != groups:
        return [("capture_groups", f"step {step_id}'s {field} has {found} capture groups; it "
                 "needs exactly one ( ) around the value to extract; make other groups "
                 "non-capturing with (?: )")]
    return []

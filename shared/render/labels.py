"""How a sentence names a value: consumes a plan step (and for legal answers the text of
the document it came from), produces its label ("Battery yield rate"), the unit printed
around it ("%", "$… billion") and the provision it sits under ("Article 17").

An EXTRACT's label and unit are the literal words of its pattern around the capture
group, or, for a table's cell, its row (the cell's quantity carries its unit); a COMPUTE
is named by its variable and expression; other steps by their variable.
`written_unit` says whether a plan's own template writes a unit around a variable
(`${{ RA }}M`, `{{ Y }}%`): such a template prints the bare amount, in the scale it names.
"""

from __future__ import annotations

import re

from shared.models import ComputeStep, ExtractStep, GetStep, SearchStep
from shared.models.plan import VAR_RE

_FILLER = {"of", "was", "is", "at", "to", "the", "a", "an", "were", "are", "by", "for",
           "as", "reached", "stood", "totaled", "totalled", "about", "around", "be"}
_SUFFIX_UNITS = re.compile(r"^(?:%|(?:percent|per cent|million|billion|thousand|trillion|bn|mn|"
                           r"mg|mcg|g|kg|ml|l|mmhg|bpm|units|days|weeks|months|years)\b)", re.I)
PROVISION = re.compile(r"\b(?:Article|Art\.|Section|Sec\.|Clause|Rule|Chapter|Paragraph|§)"
                       r"\s*\d+[A-Za-z]?(?:\(\w{1,3}\))*(?:\.\d+)*", re.I)


def capture_span(pattern: str) -> tuple[int, int] | None:
    """Start and end (after its `)`) of the first capture group of `pattern`."""
    depth, start, i = 0, None, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            close = pattern.find("]", i + 2)
            i = (close if close > 0 else len(pattern)) + 1
            continue
        if c == "(":
            depth += 1
            if start is None and not pattern.startswith("(?", i):
                start, opened = i, depth
        elif c == ")":
            if start is not None and depth == opened:
                return start, i + 1
            depth -= 1
        i += 1
    return None


def literal(fragment: str) -> str:
    """The plain words of a regex fragment: escapes, classes, groups and quantifiers out."""
    text = re.sub(r"\[([A-Za-z])[A-Za-z]\]", r"\1", fragment)
    text = re.sub(r"\(\?[:=!<>]?[^()]*\)|\[[^\]]*\]|\\[dDsSwWbBAZ]|\{\d*,?\d*\}\??|[.*+?^$|()]",
                  " ", text)
    return re.sub(r"\s+", " ", re.sub(r"\\(.)", r"\1", text)).strip()


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def label(step, names: dict[str, str] | None = None) -> str:
    """How an answer names the value of `step`; `names` maps the variables a COMPUTE
    reads to their own labels ("GAP (battery yield rate - 92)")."""
    if isinstance(step, ExtractStep) and step.row is not None:
        return _sentence_case(" ".join(step.row.split()))
    if isinstance(step, ExtractStep) and step.pattern and (span := capture_span(step.pattern)):
        words = re.findall(r"[A-Za-z][\w'’-]*", literal(step.pattern[:span[0]]))
        while words and words[-1].lower() in _FILLER:
            words.pop()
        if words:
            return _sentence_case(" ".join(words[-6:]))
    if isinstance(step, ComputeStep):
        return f"{step.var} ({VAR_RE.sub(lambda m: _named(m[1], names or {}), step.expression)})"
    if isinstance(step, SearchStep):
        return f"Passages on “{step.query}”"
    if isinstance(step, GetStep):
        return _sentence_case(step.source)
    return step.var


def _named(var: str, names: dict[str, str]) -> str:
    own = names.get(var, var)
    return var if own == var else own[:1].lower() + own[1:]


def unit(step, value: str) -> tuple[str, str]:
    """(prefix, suffix) an EXTRACT's pattern puts around its value and the value lacks."""
    if not isinstance(step, ExtractStep) or not step.pattern or not (
            span := capture_span(step.pattern)):
        return "", ""
    before = step.pattern[:span[0]]
    after = re.sub(r"^(?:\\s[*+?]?|\s)+", " ", step.pattern[span[1]:])
    prefix = next((c for c in "$€£" if before.endswith(("\\" + c, c))), "")
    found = _SUFFIX_UNITS.match(after.strip())
    suffix = ""
    if found:
        suffix = found.group() if found.group() == "%" else " " + found.group()
    elif step.quantity == "percent":
        suffix = "%"
    prefix = "" if value.lstrip("-").startswith(prefix) else prefix
    suffix = "" if value.rstrip().lower().endswith(suffix.strip().lower()) else suffix
    return prefix, suffix


def provision(value: str, texts: list[str]) -> str | None:
    """The article or section `value` sits under: named in the value itself, else the
    last one named before the value in the document that states it."""
    if found := PROVISION.search(value):
        return found.group()
    if not value.strip():
        return None
    stated = re.compile(rf"(?<![\w.]){re.escape(value.strip())}(?!\w|\.\d)")
    for text in texts:
        if at := stated.search(text):
            before = PROVISION.findall(text[:at.start()])
            return before[-1] if before else None
    return None


_WRITTEN_BEFORE = re.compile(r"(?:[$€£¥₹]|\b(?:US\$|USD|EUR|GBP|JPY|CNY|INR)\s?)$", re.I)
_WRITTEN_AFTER = re.compile(r"\s?(?:(?P<scale>thousand|million|billion|trillion|mn|bn|tn|"
                            r"[kmb])\b|%|percent\b|per cent\b|(?:percentage\s)?points?\b|"
                            r"pts\b|pp\b|basis points\b|bps\b|(?:USD|EUR|GBP)\b)", re.I)
_SCALE_WRITTEN = {"thousand": 3, "k": 3, "million": 6, "m": 6, "mn": 6, "billion": 9,
                  "b": 9, "bn": 9, "trillion": 12, "tn": 12}


def written_unit(template: str, var: str) -> tuple[bool, int | None]:
    """Whether `template` writes a unit right around `{{ var }}` (a currency before it, a
    percent sign, "points" or a scale after it), and the scale it names (`M`: 6), if any."""
    writes, scale = False, None
    for m in re.finditer(r"\{\{-?\s*" + re.escape(var) + r"\s*-?\}\}", template):
        after = _WRITTEN_AFTER.match(template, m.end())
        if after or _WRITTEN_BEFORE.search(template, 0, m.start()):
            writes = True
            if after and after["scale"]:
                scale = _SCALE_WRITTEN[after["scale"].lower()]
    return writes, scale

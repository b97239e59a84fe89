"""Anchored EXTRACT patterns for the heuristic planner: consumes a document's text and
the span of the value (or sentence) chosen in it, produces a regular expression whose
one group captures exactly that span when the EXTRACT tool runs it on that text.

A value's pattern is the few words before it, spelled literally, then a generic
capture of its kind (shared/planners/reading.py: VALUE_PATTERNS); more words are added until
the first match in the whole text is the chosen value, with and without IGNORECASE (the
EXTRACT tool ignores case).
"""

from __future__ import annotations

import re

from .reading import VALUE_PATTERNS

MIN_WORDS, MAX_WORDS = 3, 8
"""How many words before the value a pattern spells out, at least and at most."""


def value_pattern(content: str, start: int, end: int, kind: str,
                  sentence: tuple[int, int]) -> str | None:
    """A pattern capturing content[start:end]; None when no prefix of up to MAX_WORDS
    words within its sentence makes the value the first match."""
    value, (s0, s1) = content[start:end], sentence
    before = content[s0:start].split()
    after = content[end:s1].split()
    for n in range(MIN_WORDS, MAX_WORDS + 1):
        prefix = " ".join(before[-n:]) + (" " if before and content[start - 1].isspace() else "")
        suffix = "" if before else " " + " ".join(after[:n])
        pattern = _literal(prefix) + f"({VALUE_PATTERNS[kind]})" + _literal(suffix)
        if captures(pattern, content) == value:
            return pattern
    return None


def sentence_pattern(content: str, start: int, end: int) -> str:
    """A pattern whose one group captures the sentence content[start:end]."""
    sentence = content[start:end]
    tokens = sentence.split()
    for n in range(6, len(tokens)):
        if sentence[-1] not in ".!?。！？":
            break
        pattern = "(" + _literal(" ".join(tokens[:n])) + r"[\s\S]*?[.!?。！？])(?=\s|$)"
        if captures(pattern, content) == sentence:
            return pattern
    return "(" + _literal(sentence) + ")"


def captures(pattern: str, content: str) -> str | None:
    """What `pattern` captures in `content`, if it captures the same with and without
    IGNORECASE (the EXTRACT tool ignores case); None otherwise."""
    found = [re.search(pattern, content, flags) for flags in (0, re.IGNORECASE)]
    values = {m.group(1) if m else None for m in found}
    return values.pop() if len(values) == 1 else None


def _literal(text: str) -> str:
    """`text` as a regex: escaped, any run of whitespace matching any other."""
    return "".join(r"\s+" if part.isspace() else re.escape(part) for part in re.split(r"(\s+)", text))

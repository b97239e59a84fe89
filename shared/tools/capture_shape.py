"""What an EXTRACT pattern's capture group can match: consumes a pattern (and the flags
the tools run it with), produces its `CaptureShape` — whether the group reads a figure
(it holds a digit class such as `\\d` or `[0-9.,]` and no letters), whether it can match
text without a single digit (`([\\d,]+)` matches a lone `,`, `([\\d.,]*)` nothing at
all), and whether it matches exactly four digits (a year: `(\\d{4})`, `(20\\d\\d)`).

The pattern is read by the `regex` module's own parser (pattern_limits.py), never
compiled here; callers pass only patterns that passed the size limits. What the
parser builds that this does not know (references, conditionals, fuzzy matching) is
taken as reading digits, so an unusual pattern is never reported by mistake.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex
from regex import _regex_core as core

from .pattern_limits import _parse

_DIGITS = [ord(c) for c in "0123456789"]
_LETTERS = [ord(c) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]
_OTHERS = [ord(c) for c in ",. $%-()/—'\n\tx"]
"""Characters tried on a class to learn whether it can match something other than a digit."""
_ATOMS = (core.Character, core.Property, core.Range, core.SetBase)
_ANY = (core.Any, core.AnyAll, core.AnyU)
_ZERO_WIDTH = tuple(c for c in (getattr(core, "ZeroWidthBase", None), core.LookAround,
                                getattr(core, "LookAroundConditional", None)) if c)


@dataclass(frozen=True)
class CaptureShape:
    reads_figure: bool
    """The group holds a class of digits and nothing that matches letters: it is meant to
    capture a number."""
    digitless: bool
    """The group can match text that holds no digit (or nothing)."""
    year: bool
    """The group matches exactly four digits and nothing else."""


@lru_cache(maxsize=1024)
def capture_shape(pattern: str, flags: int = regex.IGNORECASE) -> CaptureShape | None:
    """The shape of `pattern`'s first capture group; None when it has none or does not
    parse."""
    try:
        group = _first_group(_parse(pattern, flags))
    except (regex.error, OverflowError, ValueError, RecursionError):
        return None
    if group is None:
        return None
    body = group.subpattern
    width = _width(body)
    return CaptureShape(reads_figure=_reads_figure(body), digitless=_digitless(body),
                        year=width == (4, 4) and _only_digits(body))


def _children(node) -> list:
    found = [getattr(node, name, None) for name in ("subpattern", "yes_item", "no_item")]
    found += list(getattr(node, "items", None) or ()) + list(getattr(node, "branches", None) or ())
    return [c for c in found if c is not None]


def _first_group(node):
    if isinstance(node, core.Group) and node.group == 1:
        return node
    for child in _children(node):
        if (found := _first_group(child)) is not None:
            return found
    return None


def _matches(node, chars: list[int]) -> bool:
    return any(node.matches(c) for c in chars)


def _reads_figure(node) -> bool:
    """Some atom of `node` matches digits and no letter."""
    if isinstance(node, _ATOMS):
        return _matches(node, _DIGITS) and not _matches(node, _LETTERS)
    if isinstance(node, core.String):
        return any(chr(c).isdigit() for c in node.characters)
    return any(_reads_figure(c) for c in _children(node))


def _digitless(node) -> bool:
    """Whether `node` can match some text (the empty one included) without a digit."""
    if isinstance(node, _ATOMS):
        return _matches(node, _OTHERS) or _matches(node, _LETTERS)
    if isinstance(node, _ANY) or isinstance(node, _ZERO_WIDTH):
        return True
    if isinstance(node, core.String):
        return not any(chr(c).isdigit() for c in node.characters)
    if isinstance(node, core.Sequence):
        return all(_digitless(c) for c in node.items)
    if isinstance(node, core.Branch) and not isinstance(node, core.StringSet):
        return any(_digitless(c) for c in node.branches)
    if isinstance(node, core.GreedyRepeat):  # lazy and possessive repeats too
        return node.min_count == 0 or _digitless(node.subpattern)
    if isinstance(node, (core.Group, core.Atomic)):
        return _digitless(node.subpattern)
    return False  # a reference, conditional or fuzzy match: assume it reads a digit


def _only_digits(node) -> bool:
    if isinstance(node, _ATOMS):
        return _matches(node, _DIGITS) and not _matches(node, _OTHERS + _LETTERS)
    if isinstance(node, core.String):
        return all(chr(c).isdigit() for c in node.characters)
    if isinstance(node, (core.Sequence, core.Branch, core.GreedyRepeat, core.Group, core.Atomic)):
        return all(_only_digits(c) for c in _children(node))
    return False


def _width(node) -> tuple[int, int | None]:
    """The fewest and most characters `node` matches (None: no bound)."""
    if isinstance(node, _ATOMS) or isinstance(node, _ANY):
        return 1, 1
    if isinstance(node, core.String):
        return len(node.characters), len(node.characters)
    if isinstance(node, _ZERO_WIDTH):
        return 0, 0
    if isinstance(node, core.Sequence):
        parts = [_width(c) for c in node.items]
        high = None if any(h is None for _, h in parts) else sum(h for _, h in parts)
        return sum(lo for lo, _ in parts), high
    if isinstance(node, core.Branch):
        parts = [_width(c) for c in node.branches]
        high = None if any(h is None for _, h in parts) else max(h for _, h in parts)
        return min(lo for lo, _ in parts), high
    if isinstance(node, core.GreedyRepeat):
        lo, hi = _width(node.subpattern)
        top = None if hi is None or node.max_count is None else hi * node.max_count
        return lo * node.min_count, top
    if isinstance(node, (core.Group, core.Atomic)):
        return _width(node.subpattern)
    return 0, None

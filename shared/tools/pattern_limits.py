"""Static limits on a regular expression a user or a model wrote, checked before it is
compiled: consumes a pattern and the flags it runs with, produces the number of elements
the `regex` module builds when it compiles it, or `PatternRefused` saying which limit it
passes (or why it does not parse), without quoting the pattern.

The `regex` module writes counted repeats out when it compiles a pattern: a repeat with
a minimum count m (`x{m}`, `x{m,n}`, `x{m,}`, `x+` for m = 1) becomes m + 1 copies of x,
`x?`, `x*` and `x{0,n}` one copy, `x{1}` none extra; the maximum n costs nothing. So
nested counts multiply: measured (compile alone, VmHWM growth): `a{100000}` 26 MB,
`(?:a{1000}){1000}` 262 MB in 0.4 s, `(?:a{8000}){1000}` 2.1 GB in 7 s, twenty nested
`(?:…)+` 657 MB; but `a{2,100000}` and `(?:.{0,8000}){1000}` under 1 MB. A pattern's
size in elements counts what the module builds: each atom (a character, a class member,
an escape, `.`) and branch as 1, a group or lookaround as 2, a repeat as 3 (`\\X` as the
7 it compiles to), times the copies of every repeat around it. Compiling costs at most
about 400 bytes per element (measured 90 to 310; tests/shared/tools/
test_pattern_limits.py holds that against tracemalloc, which sees the module's
allocations). The limits:

- `MAX_PATTERN_CHARS` characters: reading the pattern here costs at most about 60 ms;
- `MAX_PATTERN_ELEMENTS` elements: at most about 6 MB and 50 ms to compile. The
  largest extraction pattern of the prompts' examples, the bundled plans and the
  benchmarks' cases has 58 elements and 61 characters; the heuristic planner's longest
  sentence pattern on the bundled corpora 418 and 335.

The pattern is read by the `regex` module's own parser (`regex._regex_core`, the code
`regex.compile` runs before it builds anything), so every syntax the module accepts is
read as the compiler reads it: verbose mode `(?x)` and its comments, inline flags,
`\\N{…}`, `\\p{…}`, classes such as `[]a]`, version-1 set operations, fuzzy constraints
(`{e<=1}`) and a `{` that starts no quantifier (a literal). Parsing is linear in the
pattern's length and builds no copies.
"""

from __future__ import annotations

import regex
from regex import _regex_core as core

from shared.errors import PatternRefused

MAX_PATTERN_CHARS = 5_000
"""Longest pattern a plan may give, in characters."""
MAX_PATTERN_ELEMENTS = 20_000
"""Most elements a pattern may compile to (its counted repeats written out)."""
_SHOWN_UP_TO = 10**15
"""Sizes past this are said as "more than" it (nested repeats reach 10**45 and more)."""
_OWN = {core.Sequence: 0, core.Group: 2, core.Atomic: 2, core.LookAround: 2,
        core.GreedyRepeat: 3, core.LazyRepeat: 3, core.PossessiveRepeat: 4, core.Grapheme: 7}
"""Elements of a node itself, where it is not 1: a sequence is only its items; a capture
group, an atomic group and a lookaround have a start and an end; a repeat is a loop, its
end and a branch out (a possessive one an atomic group too); `\\X` compiles to an atomic
lazy repeat and a boundary."""


def pattern_elements(pattern: str, flags: int) -> int:
    """How many elements `pattern` compiles to with `flags` (capped just past
    `_SHOWN_UP_TO`); PatternRefused when it is too long or does not parse."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternRefused(f"is {len(pattern):,} characters long, more than the "
                             f"{MAX_PATTERN_CHARS:,} allowed; shorten it")
    try:
        return _elements(_parse(pattern, flags))
    except (regex.error, OverflowError, ValueError, RecursionError) as e:
        raise PatternRefused(does_not_compile(e)) from None


def check_pattern_size(pattern: str, flags: int) -> int:
    """`pattern_elements(pattern, flags)`; PatternRefused when past MAX_PATTERN_ELEMENTS."""
    size = pattern_elements(pattern, flags)
    if size > MAX_PATTERN_ELEMENTS:
        shown = f"more than {_SHOWN_UP_TO:,}" if size > _SHOWN_UP_TO else f"{size:,}"
        raise PatternRefused(
            f"expands to {shown} elements when compiled, more than the "
            f"{MAX_PATTERN_ELEMENTS:,} allowed: the regex module writes a repeat with a "
            "minimum count m ({m}, {m,n}, {m,}, +) out m+1 times, and nested repeats "
            "multiply; lower the minimum counts, e.g. .{0,80} rather than .{1000}")
    return size


def does_not_compile(e: Exception) -> str:
    """What to say of a pattern whose compile raised `e` (regex.error, OverflowError,
    ValueError, RecursionError)."""
    if isinstance(e, RecursionError):
        return "nests its groups too deeply to compile; flatten it"
    return (f"does not compile: {e}; fix the regular expression (escape literal ( ) . $ % "
            "with a backslash)")


def _parse(pattern: str, flags: int):
    """The parse tree `regex.compile(pattern, flags)` builds before compiling it (the
    first part of `regex._main._compile`)."""
    core.DEFAULT_VERSION = regex.DEFAULT_VERSION
    global_flags = flags
    while True:
        source = core.Source(pattern)
        info = core.Info(global_flags, source.char_type, {})
        info.guess_encoding = regex.UNICODE
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            parsed = core._parse_pattern(source, info)
            break
        except core._UnscopedFlagSet:  # a global flag such as (?x) past the start: again
            global_flags = info.global_flags
    if not source.at_end():
        raise regex.error("unbalanced parenthesis", pattern, source.pos)
    return parsed


def _elements(node) -> int:
    if isinstance(node, core.GreedyRepeat):  # Lazy and Possessive repeats too
        low, high = node.min_count, node.max_count
        copies = 1 if low == high == 1 else low + 1
        return min(copies * _elements(node.subpattern) + _OWN[type(node)], _SHOWN_UP_TO + 1)
    size = _OWN.get(type(node), 1)
    for name in ("subpattern", "yes_item", "no_item"):
        if (child := getattr(node, name, None)) is not None:
            size += _elements(child)
    for child in (*(getattr(node, "items", None) or ()), *(getattr(node, "branches", None) or ())):
        size += _elements(child)
    return min(size, _SHOWN_UP_TO + 1)

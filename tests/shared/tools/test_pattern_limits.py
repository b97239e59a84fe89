"""The static limits on a plan's pattern (shared/tools/pattern_limits.py): what a pattern
compiles to, read the way the `regex` module reads it, held against what compiling it
really allocates (tracemalloc sees the module's allocations)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shared.errors import PatternRefused
from shared.planners.prompts import EXAMPLE_STEPS, WORKED_EXAMPLE
from shared.tools.pattern_limits import (MAX_PATTERN_CHARS, MAX_PATTERN_ELEMENTS,
                                         check_pattern_size, pattern_elements)
from shared.tools.patterns import FLAGS

ROOT = Path(__file__).resolve().parents[3]
BYTES_PER_ELEMENT = 400
"""What compiling costs at most per element (measured: 90 to 310)."""
BYTES_AT_REST = 16 * 1024
"""What compiling any pattern costs besides (the compiled object, the module's tables)."""
BOMBS = [r"(?:a{8000}){1000}(\d+)", r"((a{1000}){1000}){1000}(x)", r"(?:[ab]{8000}){1000}",
         r"(?:a|b){100000}", r"(?:\d{4000,8000}){100}", r"(?:\d{8000,}){100}",
         "(?:" * 20 + "a" + ")+" * 20, r"(?x) (?: a {8000} ) {1000}", r"\X{20000}"]
"""Each compiles to 100 MB or more (the first 2.1 GB in 7 s; the second never finishes)."""


def compile_bytes(pattern: str) -> int:
    """Bytes the `regex` module allocates at the peak of compiling `pattern` (warm)."""
    regex.compile(pattern, FLAGS, cache_pattern=False)  # its tables loaded once
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        regex.compile(pattern, FLAGS, cache_pattern=False)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("pattern, elements", [
    ("a", 1),
    ("a{1}", 1),                   # one copy, and the module builds no loop
    ("a{1000}", 1004),             # m + 1 copies, and the loop (3)
    ("a{1000,}", 1004),
    ("a{2,100000}", 6),            # the maximum costs nothing
    ("a*", 4), ("a?", 4), ("a{0,8000}", 4), ("a{,5}", 4), ("a+", 5),
    ("(?:.{0,8000}){1000}", 4007),
    ("(?:x{2,40}){2,40}", 21),
    ("a*+", 5),                    # a possessive loop is atomic too
    (r"\X", 7),                    # an atomic lazy loop and a boundary
    (r"battery yield rate.*?(\d+\.\d+)%", 36),
])
def test_a_pattern_counts_each_repeat_written_out_min_plus_one_times(pattern, elements):
    assert pattern_elements(pattern, FLAGS) == elements


@pytest.mark.parametrize("pattern, elements", [
    (r"(?x) a {1000}", 1004),             # verbose: the space does not end the atom
    ("(?x) a # {1000} is a comment\n", 1),
    (r"a\{1000}", 7),                     # an escaped brace: seven literal characters
    ("a{", 2), ("a{x}", 4), ("a{1,2,3}", 8),  # no quantifier: literal braces
    ("[]a]{1000}", 3 * 1001 + 3),         # `]` first in a class is a member
    ("[^]a]{1000}", 3 * 1001 + 3),
    (r"[\]{]{1000}", 3 * 1001 + 3),
    (r"\p{L}{1000}", 1004), (r"\N{DIGIT ONE}{1000}", 1004),
    (r"(?<name>a){1000}", 3 * 1001 + 3), (r"(?<=a{1000})", 1006), (r"(?!a){1000}", 3 * 1001 + 3),
    (r"(?:abc){e<=1}", 4),                # fuzzy matching: no copies
])
def test_syntax_is_read_as_the_regex_module_reads_it(pattern, elements):
    assert pattern_elements(pattern, FLAGS) == elements


@pytest.mark.parametrize("pattern", BOMBS)
def test_patterns_that_compile_to_hundreds_of_megabytes_are_refused_saying_why(pattern):
    with pytest.raises(PatternRefused) as e:
        check_pattern_size(pattern, FLAGS)
    assert " elements when compiled, more than the 20,000 allowed" in e.value.reason
    assert "lower the minimum counts" in e.value.reason
    assert pattern not in e.value.reason


def test_the_refusal_says_how_far_the_repeats_nest():
    with pytest.raises(PatternRefused, match=r"expands to 8,012,014 elements"):
        check_pattern_size(r"(?:a{8000}){1000}(\d+)", FLAGS)
    with pytest.raises(PatternRefused, match=r"expands to more than 1,000,000,000,000,000 "):
        check_pattern_size("(?:" * 60 + "a" + ")+" * 60, FLAGS)


def test_a_pattern_past_the_character_limit_is_refused_before_it_is_read():
    with pytest.raises(PatternRefused, match=r"is 5,001 characters long, more than the 5,000 "
                                             r"allowed; shorten it"):
        pattern_elements("a" * (MAX_PATTERN_CHARS + 1), FLAGS)


@pytest.mark.parametrize("pattern, said", [
    (r"yield (\d+", "does not compile: missing ) at position 10"),
    (r"a{5,3}", "min repeat greater than max repeat"),
    (r"a{99999999999}", "repeat count too big"),
    ("(" * 600 + "a" + ")" * 600, "nests its groups too deeply to compile"),
])
def test_a_pattern_that_does_not_parse_is_refused_with_the_modules_reason(pattern, said):
    with pytest.raises(PatternRefused, match=regex.escape(said)):
        pattern_elements(pattern, FLAGS)


def realistic_patterns() -> list[str]:
    """Every pattern of the prompts' examples, the bundled plans and the benchmarks' cases."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            found.extend(v for k, v in value.items() if k == "pattern" and isinstance(v, str))
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk([EXAMPLE_STEPS, WORKED_EXAMPLE])
    walk([json.loads(p.read_text()) for p in (ROOT / "shared/data/plans").glob("*.json")])
    walk([json.loads(line) for p in (ROOT / "bench").glob("*/cases.jsonl")
          for line in p.read_text().splitlines() if line.strip()])
    return found


def test_every_realistic_pattern_is_far_below_the_limits():
    patterns = realistic_patterns()
    assert len(patterns) > 50
    for pattern in patterns:
        assert check_pattern_size(pattern, FLAGS) <= MAX_PATTERN_ELEMENTS // 100, pattern
        assert len(pattern) <= MAX_PATTERN_CHARS // 50, pattern


def test_the_element_limit_bounds_what_compiling_costs():
    for pattern in ["a" * MAX_PATTERN_CHARS, r"(?:\d{19}){800}", r"(a){6000}", r"(?:(?=a)){6000}",
                    r"\X{2800}"]:
        size = check_pattern_size(pattern, FLAGS)
        assert compile_bytes(pattern) <= size * BYTES_PER_ELEMENT + BYTES_AT_REST, pattern


ATOMS = ["a", "b", "xyz", ".", r"\d", r"\w", r"\s", r"\b", r"\.", r"\(", r"\{", "[ab]", "[]a]",
         "[^]a]", "[a-z0-9_]", r"[\d.,]", r"\p{L}", r"\P{Lu}", r"\N{DIGIT ONE}", r"\X", "ß",
         "{", "a{", "{,}", "}", "^", "$", "(?1)", r"\1"]
WRAPS = ["(%s)", "(?:%s)", "(?>%s)", "(?=%s)", "(?!%s)", "(?<=%s)", "(?<!%s)", "(?i:%s)",
         "(?<n>%s)", "(?:%s){e<=1}", "(?(1)%s|b)", "(?|%s|b)"]


def counted(low: int, extra: int, form: str, mode: str) -> str:
    return {"m": f"{{{low}}}", "m,n": f"{{{low},{low + extra}}}", "m,": f"{{{low},}}",
            ",n": f"{{,{low + extra}}}"}[form] + mode


QUANTIFIERS = st.one_of(
    st.sampled_from(["", "", "*", "+", "?", "*?", "+?", "*+"]),
    st.builds(counted, st.integers(0, 9), st.integers(0, 5),
              st.sampled_from(["m", "m,n", "m,", ",n"]), st.sampled_from(["", "?", "+"])))
NODES = st.recursive(st.sampled_from(ATOMS), lambda inner: st.one_of(
    st.builds(lambda wrap, x, q: wrap % x + q, st.sampled_from(WRAPS), inner, QUANTIFIERS),
    st.builds(lambda x, q: x + q, inner, QUANTIFIERS),
    st.builds("".join, st.lists(inner, min_size=1, max_size=4)),
    st.builds("|".join, st.lists(inner, min_size=2, max_size=3))), max_leaves=12)
NESTED = st.builds(lambda atom, quantifiers: "(?:" * len(quantifiers) + atom + "".join(
    ")" + q for q in quantifiers), st.sampled_from(ATOMS), st.lists(QUANTIFIERS, max_size=14))
"""Repeats nested deep, where copies multiply: `(?:(?:a)+){2}`."""
PATTERNS = st.one_of(NODES, NODES.map(lambda p: "(?x) " + " ".join(p)), NESTED)
"""Patterns of every construct, nested; some verbose with spaces between every character."""


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(PATTERNS)
def test_compiling_a_pattern_within_the_limit_costs_at_most_its_elements(pattern):
    try:
        size = check_pattern_size(pattern, FLAGS)
    except PatternRefused as e:
        assume("does not compile" in e.reason)
        with pytest.raises((regex.error, ValueError, OverflowError, RecursionError)):
            regex.compile(pattern, FLAGS, cache_pattern=False)
        return
    try:
        cost = compile_bytes(pattern)
    except regex.error:  # a group reference the parser leaves to the compiler
        return
    assert cost <= size * BYTES_PER_ELEMENT + BYTES_AT_REST


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab(){}[]^$.*+?|\\,:=!<>-019pPNXxe#&~ \n", max_size=60))
def test_any_text_is_either_sized_or_refused_and_a_refused_one_does_not_compile(text):
    try:
        size = pattern_elements(text, FLAGS)
    except PatternRefused:
        with pytest.raises((regex.error, ValueError, OverflowError, RecursionError)):
            regex.compile(text, FLAGS, cache_pattern=False)
        return
    assert size >= 0
    if size <= MAX_PATTERN_ELEMENTS:
        try:
            regex.compile(text, FLAGS, cache_pattern=False)
        except regex.error as e:  # only what the parser leaves to the compiler
            assert "group" in str(e), (text, e)

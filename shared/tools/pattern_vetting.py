"""A regular expression a user or a model wrote, vetted before this process compiles
it: consumes a pattern and its flags, produces its number of capture groups (`vet`) or
the compiled pattern (`compile_vetted`), or `PatternRefused` saying why not.

Every plan pattern is compiled through here: by the plan checks (the API, the planner,
`chordal ask --plan`), the tools (EXTRACT, FILTER, VALIDATE) and `chordal debug`. Two
lines, since the `regex` module's compile cannot be interrupted and expands counted
repeats (pattern_limits.py):

1. the static limits (pattern_limits.py) refuse a pattern too long or too large before
   anything is compiled;
2. a child process (shared/isolation.py, kind `pattern`) compiles it under
   `COMPILE_MEMORY_MB` and `COMPILE_BUDGET_S`; one that runs out of memory, overruns
   (then it is killed) or dies refuses the pattern. This process compiles only what a
   child compiled.

Per process, the verdicts on the last `VERDICTS_KEPT` patterns are kept, so a pattern is
vetted once, and the compiled patterns up to `COMPILED_KEPT_ELEMENTS` elements in all
(compiled without the `regex` module's own cache, which keeps 500 of any size). At most
`CHILDREN` children run at once per process; idle ones are kept and stopped with it.
Cost (docs/plans.md): a new pattern one round trip to a child, a kept one a dictionary lookup.

`handle` is what the child runs for each pattern.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

import regex
from regex import _main

from shared.errors import PatternRefused
from shared.isolation import STARTUP_S, ChildFailed, Pool

from .pattern_limits import check_pattern_size, does_not_compile

COMPILE_BUDGET_S = 5.0
"""Seconds a child may take to compile one pattern (those within the static limits take
under 0.2 s)."""
COMPILE_MEMORY_MB = 64
"""Megabytes a child may allocate to compile one pattern (those within the static limits
take under 10 MB)."""
CHILDREN = 2
"""Children one process runs at once; more callers wait for one."""
VERDICTS_KEPT = 1024
"""Patterns whose verdict a process keeps."""
COMPILED_KEPT_ELEMENTS = 100_000
"""Elements (pattern_limits.py) of the compiled patterns a process keeps, all together:
about 40 MB at most."""
UNPARSABLE = (regex.error, OverflowError, ValueError, RecursionError)
"""What `regex.compile` raises for a pattern that cannot be compiled."""


@dataclass(frozen=True)
class _Job:
    pattern: str
    flags: int
    budget_s: float
    kind = "pattern"

    def wire(self) -> bytes:
        return json.dumps({"kind": self.kind, "pattern": self.pattern, "flags": self.flags,
                           "budget_s": self.budget_s}).encode()


@dataclass(frozen=True)
class _Verdict:
    groups: int = 0
    elements: int = 0
    refused: str | None = None


_verdicts: OrderedDict[tuple[str, int], _Verdict] = OrderedDict()
_compiled: OrderedDict[tuple[str, int], tuple[regex.Pattern, int]] = OrderedDict()
_compiled_elements = 0
_lock = threading.Lock()
_pools: dict[int, Pool] = {}  # by PID: a forked process starts its own children


def vet(pattern: str, flags: int) -> int:
    """How many capture groups `pattern` has, compiled with `flags` in a child process;
    PatternRefused when it is past a limit, does not compile, or its compile overran."""
    return _verdict(pattern, flags).groups


def compile_vetted(pattern: str, flags: int) -> regex.Pattern:
    """`pattern` compiled with `flags` in this process, once a child compiled it
    (`vet`); PatternRefused otherwise."""
    global _compiled_elements
    key = (pattern, int(flags))
    with _lock:
        found = _compiled.get(key)
        if found is not None:
            _compiled.move_to_end(key)
            return found[0]
    elements = _verdict(pattern, flags).elements
    compiled = _compile(pattern, flags)
    with _lock:
        if key not in _compiled:
            _compiled[key] = (compiled, elements)
            _compiled_elements += elements
        while len(_compiled) > VERDICTS_KEPT or _compiled_elements > COMPILED_KEPT_ELEMENTS:
            _compiled_elements -= _compiled.popitem(last=False)[1][1]
    return compiled


def _verdict(pattern: str, flags: int) -> _Verdict:
    key = (pattern, int(flags))
    with _lock:
        verdict = _verdicts.get(key)
        if verdict is not None:
            _verdicts.move_to_end(key)
    if verdict is None:
        verdict, keep = _vet(pattern, int(flags))
        if keep:
            with _lock:
                _verdicts[key] = verdict
                while len(_verdicts) > VERDICTS_KEPT:
                    _verdicts.popitem(last=False)
    if verdict.refused is not None:
        raise PatternRefused(verdict.refused)
    return verdict


def _compile(pattern: str, flags: int) -> regex.Pattern:
    """`regex.compile` without the module's cache, and without the note it keeps of every
    pattern's locale use even then (a process would keep every pattern it ever saw)."""
    try:
        return regex.compile(pattern, flags, cache_pattern=False)
    finally:
        _main._locale_sensitive.pop((str, pattern), None)


def _vet(pattern: str, flags: int) -> tuple[_Verdict, bool]:
    """The verdict on `pattern` and whether to keep it (not when its child did not start,
    which says nothing about the pattern)."""
    try:
        elements = check_pattern_size(pattern, flags)
    except PatternRefused as e:
        return _Verdict(refused=e.reason), True
    try:
        reply = _pool().ask(_Job(pattern, flags, COMPILE_BUDGET_S))
    except ChildFailed as e:
        if e.how == "no_start":
            return _Verdict(refused=f"could not be checked: its compile process did not "
                                    f"start within {STARTUP_S:g} s; try again"), False
        return _Verdict(refused=(
            f"took more than {COMPILE_BUDGET_S:g} s to compile; simplify it"
            if e.how == "overran" else
            f"could not be compiled: its compile process ended (exit code {e.exit_code}); "
            "simplify it")), True
    if reply.get("memory"):
        return _Verdict(refused=f"needed more than {COMPILE_MEMORY_MB} MB to compile; "
                                "simplify it"), True
    if not reply["ok"]:
        return _Verdict(refused=reply["value"]), True
    return _Verdict(groups=reply["value"], elements=elements), True


def _pool() -> Pool:
    with _lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = Pool("pattern", COMPILE_MEMORY_MB, CHILDREN)
        return pool


def handle(job: dict) -> tuple[bool, int | str]:
    """The child's work on one pattern: (True, its capture groups) or (False, why it
    does not compile)."""
    try:
        return True, _compile(job["pattern"], job["flags"]).groups
    except UNPARSABLE as e:
        return False, does_not_compile(e)

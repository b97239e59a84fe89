"""A plan's pattern is compiled here only once a bounded child compiled it
(shared/tools/pattern_vetting.py): real child processes, no Redis."""

from __future__ import annotations

import os
import threading
import uuid

import pytest
import regex

from shared import isolation
from shared.errors import PatternRefused
from shared.tools import pattern_vetting
from shared.tools.pattern_vetting import CHILDREN, compile_vetted, vet

from ...conftest import peak_mb

FLAGS = regex.IGNORECASE
BOMBS = [r"(?:a{8000}){1000}(\d+)", r"((a{1000}){1000}){1000}(x)"]


def fresh(pattern: str = r"yield (\d+)") -> str:
    """`pattern` made new to this process's verdicts (a comment no match depends on)."""
    return f"(?#{uuid.uuid4().hex}){pattern}"


def children() -> set[int]:
    return {c.process.pid for c in pattern_vetting._pool().idle}


def test_a_pattern_compiles_in_a_child_once_and_then_here_without_one():
    pattern = fresh()
    assert vet(pattern, FLAGS) == 1
    assert children()  # the child that compiled it waits for the next pattern
    pattern_vetting._pool().close()
    assert vet(pattern, FLAGS) == 1  # kept: no child asked again
    assert compile_vetted(pattern, FLAGS).search("YIELD 42")[1] == "42"
    assert children() == set()


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_bomb_is_refused_by_the_static_limit_before_anything_compiles(bomb):
    before = peak_mb(os.getpid())
    with pytest.raises(PatternRefused, match=r"elements when compiled, more than the 20,000"):
        vet(bomb, FLAGS)
    with pytest.raises(PatternRefused):
        compile_vetted(bomb, FLAGS)
    assert peak_mb(os.getpid()) - before < 20


@pytest.mark.parametrize("bomb", BOMBS)
def test_past_the_static_limit_the_child_runs_out_of_memory_not_this_process(
        bomb, monkeypatch):
    monkeypatch.setattr(pattern_vetting, "check_pattern_size", lambda pattern, flags: 1)
    before, kept = peak_mb(os.getpid()), children()
    with pytest.raises(PatternRefused, match=r"needed more than 64 MB to compile; simplify it"):
        vet(fresh(bomb), FLAGS)
    assert peak_mb(os.getpid()) - before < 20
    assert children() <= kept  # the child that ran out of memory is gone


def test_a_compile_past_its_budget_is_killed_and_the_refusal_is_kept(monkeypatch):
    slow = fresh("a{" * 2400)  # about 40 ms to read and compile
    pattern_vetting._pool().close()
    vet(fresh(), FLAGS)  # one child, started and ready, under the real budget (a loaded
    assert len(children()) == 1  # machine can take over 1 ms for a trivial pattern)
    monkeypatch.setattr(pattern_vetting, "COMPILE_BUDGET_S", 0.001)
    monkeypatch.setattr(isolation, "GRACE_S", 0.0)
    with pytest.raises(PatternRefused, match=r"took more than 0.001 s to compile; simplify it"):
        vet(slow, FLAGS)
    assert children() == set()  # killed
    monkeypatch.undo()
    with pytest.raises(PatternRefused, match=r"took more than 0.001 s"):
        vet(slow, FLAGS)  # the verdict is kept: not compiled again


def test_a_pattern_that_does_not_compile_is_refused_with_the_compilers_reason():
    with pytest.raises(PatternRefused, match=r"does not compile: invalid group reference at position"):
        vet(fresh(r"(a)\2"), FLAGS)


def test_many_threads_at_once_share_at_most_the_allowed_children():
    found, threads = [], [threading.Thread(target=lambda: found.append(vet(fresh(), FLAGS)))
                          for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [1] * 6
    assert 1 <= len(children()) <= CHILDREN

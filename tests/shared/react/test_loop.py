"""Where a loop goes on after its stored iterations: the rule a re-sent task and the
resumer both follow."""

from __future__ import annotations

from shared.models import ReactIteration
from shared.react.loop import final_text, next_iteration


def it(n, tool="search", value="x", feedback=None):
    return ReactIteration(n=n, tool=tool, tool_input=value, feedback=feedback)


def test_a_loop_goes_on_with_the_iteration_after_its_last_stored_one():
    assert next_iteration([], 8) == 1
    assert next_iteration([it(1), it(2)], 8) == 3


def test_a_loop_whose_last_iteration_ends_it_runs_that_iteration_again_to_store_the_answer():
    assert next_iteration([it(1), it(2, "finish", "42")], 8) == 2
    assert next_iteration([it(1), it(2)], 2) == 2


def test_finish_without_an_answer_does_not_end_the_loop():
    empty = it(2, "finish", "  ", feedback="finish needs the final answer as its input (text)")
    assert final_text(empty) is None and next_iteration([it(1), empty], 8) == 3
    assert final_text(it(1, "finish", {"answer": "42 [R1]"})) == "42 [R1]"
    assert final_text(it(1, "search", "42")) is None

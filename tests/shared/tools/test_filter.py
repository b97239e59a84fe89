"""FILTER: keeps the items of a list that pass a condition over $item and/or a pattern."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import Evidence, FilterStep
from shared.tools.filter import run_filter

DOCS = [Evidence(doc_id=f"d{i}", title=f"Report {i}") for i in range(4)]


def filter_step(condition: str | None = None, pattern: str | None = None) -> FilterStep:
    return FilterStep(id="F1", operation="FILTER", source="$L", condition=condition,
                      pattern=pattern)


def test_a_condition_keeps_the_items_it_holds_for_with_their_documents(ok):
    inputs = {"L": ok("M1", ["91.7", "88.9", "94.2", "90.4"], documents=DOCS)}
    out = run_filter(filter_step(condition="$item > 90"), inputs)
    assert out.value == ["91.7", "94.2", "90.4"]
    assert out.documents == [DOCS[0], DOCS[2], DOCS[3]] and out.document == DOCS[0]
    assert out.inputs == ["q:M1"] and out.note == "kept 3 of 4 items"


def test_a_condition_may_compare_items_with_other_inputs(ok):
    inputs = {"L": ok("M1", ["91.7", "88.9"]), "T": ok("E5", "90")}
    out = run_filter(filter_step(condition="$item >= $T"), inputs)
    assert out.value == ["91.7"] and out.inputs == ["q:M1", "q:E5"]


def test_a_pattern_keeps_items_whose_text_contains_it(ok):
    items = ["Battery yield rate of 91.7%", "Gross margin was 17.9%", "Cell yield rate 94%"]
    inputs = {"L": ok("S1", items, documents=DOCS[:3])}
    out = run_filter(filter_step(pattern=r"yield\s+rate"), inputs)
    assert out.value == [items[0], items[2]] and out.documents == [DOCS[0], DOCS[2]]


def test_condition_and_pattern_must_both_hold(ok):
    items = ["91.7", "94.2", "88.9"]
    out = run_filter(filter_step(condition="$item > 90", pattern=r"^9[01]"), {"L": ok("M1", items)})
    assert out.value == ["91.7"]


def test_documents_not_parallel_to_the_items_pass_on_unchanged(ok):
    inputs = {"L": ok("M1", ["2", "0", "3"], documents=DOCS[:1])}
    out = run_filter(filter_step(condition="$item > 1"), inputs)
    assert out.value == ["2", "3"] and out.documents == DOCS[:1]


def test_a_source_that_is_not_a_list_is_rejected_with_a_fix(ok):
    with pytest.raises(ToolError) as e:
        run_filter(filter_step(condition="$item > 1"), {"L": ok("E2", "91.7")})
    assert e.value.code == "NOT_A_LIST" and "$L" in e.value.message and "SEARCH" in e.value.message


def test_a_filter_without_condition_or_pattern_says_to_set_one(ok):
    with pytest.raises(ToolError) as e:
        run_filter(filter_step(), {"L": ok("M1", ["1"])})
    assert e.value.code == "NO_CRITERIA" and "condition" in e.value.message


def test_a_condition_that_is_a_number_is_not_a_condition(ok):
    with pytest.raises(ToolError) as e:
        run_filter(filter_step(condition="$item * 2"), {"L": ok("M1", ["1"])})
    assert e.value.code == "NOT_A_CONDITION"


def test_an_item_that_is_not_a_number_names_its_index(ok):
    with pytest.raises(ToolError) as e:
        run_filter(filter_step(condition="$item > 1"), {"L": ok("M1", ["2", "n/a"])})
    assert e.value.code == "NOT_A_NUMBER" and "item 1" in e.value.message


def test_a_catastrophic_pattern_is_a_pattern_timeout(ok):
    with pytest.raises(ToolError) as e:
        run_filter(filter_step(pattern=r"(a+)+$"), {"L": ok("M1", ["a" * 10_000 + "b"])},
                   timeout_s=0.05)
    assert e.value.code == "PATTERN_TIMEOUT"

"""MERGE: first/list/unique over the ok inputs in order, failed ones skipped and named."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import Evidence, MergeStep
from shared.tools.merge import run_merge

Q3 = Evidence(doc_id="q3", title="Tesla Q3 2023 Financial Report")
Q2 = Evidence(doc_id="q2", title="Tesla Q2 2023 Financial Report")


def merge(strategy: str, *sources: str) -> MergeStep:
    return MergeStep(id="M1", operation="MERGE", sources=list(sources), strategy=strategy)


def test_first_takes_the_first_ok_input_in_sources_order_and_names_the_skipped(ok, failed):
    inputs = {"A": failed("E1", "NOT_FOUND"), "B": ok("E2", "90.4", document=Q2),
              "C": ok("E3", "91.7", document=Q3)}
    out = run_merge(merge("first", "$A", "$B", "$C"), inputs)
    assert (out.value, out.document, out.inputs) == ("90.4", Q2, ["q:E2"])
    assert "took $B" in out.note and "skipped $A (NOT_FOUND" in out.note


def test_list_keeps_every_ok_value_with_parallel_documents(ok, failed):
    inputs = {"A": ok("E1", "91.7", document=Q3), "B": failed("E2"),
              "C": ok("E3", "90.4", document=Q2)}
    out = run_merge(merge("list", "$A", "$B", "$C"), inputs)
    assert out.value == ["91.7", "90.4"]
    assert out.documents == [Q3, Q2] and out.inputs == ["q:E1", "q:E3"]
    assert out.note.startswith("skipped $B")


def test_list_flattens_list_values_into_their_items(ok):
    inputs = {"S": ok("S1", ["snippet one", "snippet two"], documents=[Q3, Q2]),
              "Y": ok("E2", "91.7", document=Q3)}
    out = run_merge(merge("list", "$S", "$Y"), inputs)
    assert out.value == ["snippet one", "snippet two", "91.7"]
    assert out.documents == [Q3, Q2, Q3]


def test_unique_drops_repeats_comparing_numbers_exactly(ok):
    inputs = {"A": ok("E1", "91.7", document=Q3), "B": ok("E2", "91.70", document=Q2),
              "C": ok("E3", "92")}
    out = run_merge(merge("unique", "$A", "$B", "$C"), inputs)
    assert out.value == ["91.7", "92"]
    assert out.documents == [Q3]  # "92" has no document, so documents are not per item


def test_when_every_input_failed_the_error_names_each_failure(failed):
    inputs = {"A": failed("E1", "NOT_FOUND", "no document matches 'X'"),
              "B": failed("E2", "NO_MATCH", "pattern found nothing")}
    with pytest.raises(ToolError) as e:
        run_merge(merge("first", "$A", "$B", "$C"), inputs)
    assert e.value.code == "NO_INPUTS"
    assert "$A (NOT_FOUND: no document matches 'X')" in e.value.message
    assert "$B (NO_MATCH" in e.value.message and "$C (no result)" in e.value.message


def test_nothing_skipped_means_no_note_for_a_list(ok):
    out = run_merge(merge("list", "$A"), {"A": ok("E1", "1")})
    assert out.note is None

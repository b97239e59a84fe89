"""Every operation end to end through real planner, executor and finalizer processes."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration
REVENUE = r"revenue of \$(\d+(?:\.\d+)?) million"


@pytest.fixture(scope="module")
def ops(pipeline):
    from pathlib import Path
    docs = Path(__file__).parent / "data" / "docs.jsonl"
    assert pipeline.cli("index", str(docs)).returncode == 0
    return pipeline


def step(step_id, operation, var=None, **fields):
    return {"id": step_id, "operation": operation, "output_var": var or f"${step_id}", **fields}


def values(record):
    assert record.status == "done", record.error or record.problems
    return {s.step_id: s for s in record.steps}


def test_search_returns_ranked_snippets_each_with_its_document(ops):
    steps = values(ops.ask("search", {"steps": [
        step("S", "SEARCH", query="Acme Robotics revenue", top_k=3)]}))
    s = steps["S"]
    assert s.status == "ok" and 1 <= len(s.value) <= 3
    assert len(s.documents) == len(s.value)
    assert any("Acme" in d.title for d in s.documents)


def test_get_with_top_k_lets_extract_take_the_first_document_that_matches(ops):
    steps = values(ops.ask("top_k", {"steps": [
        step("G", "GET", source="Acme Robotics Quarterly Report", top_k=2),
        step("X", "EXTRACT", source="$G", pattern=r"gross margin was (\d+(?:\.\d+)?)%")]}))
    assert isinstance(steps["G"].value, list) and len(steps["G"].value) == 2
    assert steps["X"].value in ("38.2", "36.9")
    assert steps["X"].document.doc_id in ("acme-q3-2023", "acme-q2-2023")


def test_extract_falls_back_to_the_library_for_the_requested_quantity(ops):
    steps = values(ops.ask("layers", {"steps": [
        step("G", "GET", source="Zenith Motors Q3 2023 Quarterly Report"),
        step("X", "EXTRACT", source="$G", pattern=r"gross margin stood at (\d+)", quantity="percent")]}))
    assert steps["X"].value == "41.0"
    assert steps["X"].confidence == "library:percent"


def test_if_validate_merge_filter_and_arbitrate_run_through_the_workers(ops):
    record = ops.ask("all the rest", {"steps": [
        step("G1", "GET", source="Acme Robotics Q3 2023 Quarterly Report"),
        step("R1", "EXTRACT", source="$G1", pattern=REVENUE),
        step("G2", "GET", source="Acme Robotics beats estimates, press reports"),
        step("R2", "EXTRACT", source="$G2", pattern=REVENUE),
        step("A", "ARBITRATE", sources=["$R2", "$R1"], prefer=['source_type == "official_report"']),
        step("V", "VALIDATE", value="$A", min=100, max=1000, source_type=["official_report"]),
        step("I", "IF", condition="$A > 400", then="above", **{"else": "below"}),
        step("M", "MERGE", sources=["$R1", "$R2"], strategy="list"),
        step("F", "FILTER", source="$M", condition="$item > 413")],
        "answer": "{{ A }} ({{ I }} 400; valid: {{ V }}); over 413: {{ F | join(', ') }}"})
    steps = values(record)
    assert steps["A"].value == "412.5" and "official_report" in steps["A"].note
    assert steps["V"].value is True
    assert steps["I"].value == "above"
    assert steps["M"].value == ["412.5", "415.0"]
    assert steps["F"].value == ["415.0"]
    assert record.answer.text.startswith("$412.5[1] million (above 400; valid: True")


def test_merge_takes_what_it_can_when_one_source_failed(ops):
    record = ops.ask("merge with a gap", {"steps": [
        step("G1", "GET", source="Acme Robotics Q3 2023 Quarterly Report"),
        step("R1", "EXTRACT", source="$G1", pattern=r"units shipped: (\d+)"),
        step("R2", "EXTRACT", source="$G1", pattern=REVENUE),
        step("M", "MERGE", sources=["$R1", "$R2"], strategy="first")],
        "answer": "Value: {{ M }}"})
    steps = values(record)
    assert steps["R1"].error_code == "NO_MATCH"
    assert steps["M"].value == "412.5" and "R1" in steps["M"].note
    assert record.answer.text.startswith("Value: $412.5[1] million")


def test_a_catastrophic_pattern_ends_as_a_step_error_and_the_query_still_answers(ops):
    record = ops.ask("redos", {"steps": [
        step("C", "COMPUTE", expression="1"),
        step("G", "GET", source="Acme Robotics Q3 2023 Quarterly Report"),
        step("X", "EXTRACT", source="$G", pattern=r"(\w+\s?)+$x")]})
    steps = values(record)
    assert steps["X"].error_code in ("PATTERN_TIMEOUT", "NO_MATCH")
    assert record.answer.complete is False

"""EXTRACT: a plan's pattern over a fetched document's text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.tools.extract import run_extract

REPORT = Evidence(doc_id="tesla-q3-2023", title="Tesla Q3 2023 Financial Report")
TEXT = "Highlights\nThe Battery Yield Rate reached 91.7% in the quarter.\nRevenue: $23.4 billion\n"


def extract(pattern: str, fallback: str | None = None) -> ExtractStep:
    return ExtractStep(id="E2", operation="EXTRACT", source="$R1", pattern=pattern,
                       output_var="$Y", fallback=fallback)


def test_the_value_is_capture_group_one_stripped_with_its_document_as_evidence():
    out = run_extract(extract(r"battery yield rate reached(\s+\d+\.\d+)%"), TEXT, REPORT)
    assert out.value == "91.7"
    assert out.confidence == "pattern"
    assert out.document == REPORT


def test_patterns_ignore_case_so_an_llm_need_not_guess_capitalization():
    assert run_extract(extract(r"REVENUE:\s*\$([\d.]+)"), TEXT, REPORT).value == "23.4"


def test_a_dot_does_not_cross_lines_so_a_label_never_pairs_with_a_distant_number():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"highlights.*?(\d+\.\d+)"), TEXT, REPORT)
    assert e.value.code == "NO_MATCH"


def test_no_match_uses_the_fallback_and_cites_no_document():
    out = run_extract(extract(r"gross margin\s+(\d+)", fallback="unknown"), TEXT, REPORT)
    assert (out.value, out.confidence, out.document) == ("unknown", "fallback", None)


def test_no_match_without_fallback_quotes_the_pattern_and_suggests_a_fix():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"gross margin\s+(\d+)"), TEXT, REPORT)
    assert e.value.code == "NO_MATCH"
    assert r"gross margin\s+(\d+)" in e.value.message
    assert "loosen" in e.value.message and "fallback" in e.value.message
    assert REPORT.title in e.value.message


def test_a_match_whose_group_captured_nothing_counts_as_no_match():
    out = run_extract(extract(r"revenue:\s*(x*)", fallback="n/a"), TEXT, REPORT)
    assert out.confidence == "fallback"


def test_a_catastrophic_pattern_times_out_into_a_step_error_instead_of_hanging():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"(a+)+$"), "a" * 5000 + "b", REPORT, timeout_s=0.05)
    assert e.value.code == "PATTERN_TIMEOUT"


@pytest.mark.parametrize("pattern", [r"(unclosed", r"no group here"])
def test_a_pattern_that_cannot_extract_anything_is_a_bad_pattern(pattern):
    with pytest.raises(ToolError) as e:
        run_extract(extract(pattern), TEXT, REPORT)
    assert e.value.code == "BAD_PATTERN"
    assert pattern in e.value.message


def test_a_source_that_holds_no_text_is_reported_not_crashed_on():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"(\d+)"), None, None)  # type: ignore[arg-type]
    assert e.value.code == "NOT_A_DOCUMENT"


@settings(max_examples=150, deadline=None)
@given(pattern=st.text(min_size=1, max_size=20), text=st.text(max_size=60))
def test_any_pattern_on_any_text_either_extracts_or_raises_a_tool_error(pattern, text):
    try:
        out = run_extract(extract(pattern, fallback="?"), text, None, timeout_s=0.2)
    except ToolError as e:
        assert e.code in {"BAD_PATTERN", "PATTERN_TIMEOUT"}
    else:
        assert isinstance(out.value, str) and out.value

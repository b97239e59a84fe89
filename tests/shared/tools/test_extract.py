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


def test_the_value_keeps_the_sentence_it_was_read_from_for_the_page_to_show():
    out = run_extract(extract(r"battery yield rate reached(\s+\d+\.\d+)%"), TEXT, REPORT)
    assert out.quote == "The Battery Yield Rate reached 91.7% in the quarter."
    long = "Intro. " + "word " * 200 + "yield 91.7% " + "more " * 200 + "end."
    quoted = run_extract(extract(r"yield (\d+\.\d+)%"), long, REPORT).quote
    assert "yield 91.7%" in quoted and quoted.startswith("…") and quoted.endswith("…")
    assert len(quoted) < 320


def test_a_value_the_library_layer_found_keeps_its_sentence_too():
    out = run_extract(layered(r"battery yield rate of (\d+\.\d+)%", "percent"), LONG, REPORT)
    assert out.quote == ("The battery yield rate stood at 91.7 percent this quarter, short of "
                         "the 92% target.")


def test_a_fallback_quotes_nothing():
    assert run_extract(extract(r"gross margin\s+(\d+)", fallback="unknown"), TEXT,
                       REPORT).quote is None


def test_patterns_ignore_case_so_an_llm_need_not_guess_capitalization():
    assert run_extract(extract(r"REVENUE:\s*\$(\d+(?:\.\d+)?)"), TEXT, REPORT).value == "23.4"


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


def layered(pattern: str, quantity: str | None, fallback: str | None = None) -> ExtractStep:
    return ExtractStep(id="E2", operation="EXTRACT", source="$R1", pattern=pattern,
                       output_var="$Y", fallback=fallback, quantity=quantity)


NEWS = Evidence(doc_id="news-1", title="Battery plant news")
LONG = ("Tesla reported revenue of $23.35 billion. The battery yield rate stood at 91.7 percent "
        "this quarter, short of the 92% target. Deliveries were 435,059 units.")


def test_a_catastrophic_pattern_on_ten_thousand_characters_is_a_pattern_timeout():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"(a+)+$"), "a" * 10_000 + "b", REPORT)
    assert e.value.code == "PATTERN_TIMEOUT"
    assert "(a+)+$" in e.value.message


def test_when_the_pattern_misses_the_library_pattern_finds_the_quantity_near_its_words():
    out = run_extract(layered(r"battery yield rate of (\d+\.\d+)%", "percent"), LONG, REPORT)
    assert (out.value, out.confidence, out.document) == ("91.7", "library:percent", REPORT)
    assert "library:percent" in out.note and "battery yield rate stood at" in out.note


def test_the_library_searches_only_sentences_holding_the_patterns_words():
    out = run_extract(layered(r"revenue of about (\d+)", "money"), LONG, REPORT)
    assert out.value == "$23.35 billion"
    with pytest.raises(ToolError) as e:
        run_extract(layered(r"cash position (\d+)", "money"), LONG, REPORT)
    assert e.value.code == "NO_MATCH"


def test_the_library_is_not_used_without_a_quantity():
    with pytest.raises(ToolError) as e:
        run_extract(layered(r"battery yield rate of (\d+\.\d+)%", None), LONG, REPORT)
    assert e.value.code == "NO_MATCH" and "quantity" in e.value.message


@pytest.mark.parametrize("quantity, text, value", [
    ("date", "The plant opened on September 30, 2023 after delays.", "September 30, 2023"),
    ("number", "The plant employs 1,250 people and 3 robots per line.", "1,250"),
    ("article", "Fees are governed by § 4.2 of the regulation.", "§ 4.2"),
])
def test_each_quantity_has_a_library_pattern(quantity, text, value):
    pattern = {"date": r"plant opened on (\d+)", "number": r"employs about (\d+)",
               "article": r"fees are governed by article (\d+)"}[quantity]
    out = run_extract(layered(pattern, quantity), text, REPORT)
    assert (out.value, out.confidence) == (value, f"library:{quantity}")


def test_the_entity_layer_finds_a_bare_number_the_library_pattern_misses():
    text = "Key figures. Battery yield rate: 91.7 in the quarter, up from 90.4."
    out = run_extract(layered(r"battery yield rate of (\d+\.\d+)%", "percent"), text, REPORT)
    assert (out.value, out.confidence) == ("91.7", "entity:number")
    assert "entity:number" in out.note


def test_the_entity_layer_finds_a_month_when_the_quantity_is_a_date():
    text = "The new coating line started production in March 2024 at the Nevada site."
    out = run_extract(layered(r"coating line started on (\d{4}-\d{2}-\d{2})", "date"), text, None)
    assert (out.value, out.confidence) == ("March 2024", "entity:date")


def test_a_number_inside_a_date_is_not_taken_for_the_number():
    text = "Headcount on 2023-09-30 reached 140,473."
    out = run_extract(layered(r"headcount was (\d+)", "number"), text, REPORT)
    assert out.value == "140,473"


def test_the_fallback_comes_after_every_layer_and_says_so():
    step = layered(r"gross margin of (\d+)%", "percent", fallback="unknown")
    out = run_extract(step, LONG, REPORT)
    assert (out.value, out.confidence, out.document) == ("unknown", "fallback", None)
    assert "fallback" in out.note


def test_over_several_documents_the_first_that_matches_wins_with_its_evidence():
    texts = ["Nothing about yields here.", "The battery yield rate reached 88.9% in Ohio."]
    out = run_extract(extract(r"yield rate reached (\d+\.\d+)%"), texts, [REPORT, NEWS])
    assert (out.value, out.document) == ("88.9", NEWS)


def test_over_several_documents_the_plans_pattern_anywhere_beats_the_library_in_the_first():
    texts = [LONG, "The battery yield rate of 88.9% trailed plan."]
    step = layered(r"battery yield rate of (\d+\.\d+)%", "percent")
    out = run_extract(step, texts, [REPORT, NEWS])
    assert (out.value, out.confidence, out.document) == ("88.9", "pattern", NEWS)


def test_no_match_over_several_documents_names_them():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"gross margin (\d+)"), ["a", "b"], [REPORT, NEWS])
    assert e.value.code == "NO_MATCH"
    assert REPORT.title in e.value.message and NEWS.title in e.value.message


def test_an_empty_list_of_documents_uses_the_fallback():
    out = run_extract(extract(r"(\d+)", fallback="none found"), [], [])
    assert out.value == "none found"


def test_a_list_holding_something_other_than_text_is_not_a_document():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"(\d+)"), ["91.7", 3], [None, None])
    assert e.value.code == "NOT_A_DOCUMENT" and "int" in e.value.message


def test_the_built_in_layers_also_end_as_a_pattern_timeout_on_a_huge_text():
    text = "yield rate " + "1 " * 500_000
    with pytest.raises(ToolError) as e:
        run_extract(layered(r"yield rate of (\d+)%", "number"), text, REPORT, timeout_s=0.001)
    assert e.value.code == "PATTERN_TIMEOUT" and "built-in number" in e.value.message

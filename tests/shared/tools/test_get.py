import json
import re
from pathlib import Path

import pytest

import shared
from shared.errors import ToolError
from shared.models import GetStep, Plan
from shared.plan.validate import validate_plan
from shared.ingest import load_jsonl
from shared.search import Document, SqliteSearch
from shared.tools.get import run_get

DATA = Path(shared.__file__).parent / "data"


@pytest.fixture
def corpus(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    yield backend
    backend.close()


def get(source, scope=None):
    return GetStep(id="E1", operation="GET", source=source, temporal_scope=scope, output_var="$R1")


def test_get_returns_the_named_documents_text_with_its_evidence(corpus):
    out = run_get(get("Tesla Q3 2023 Financial Report", "2023-Q3"), corpus)
    assert "battery yield rate of 91.7%" in out.value
    assert out.confidence == "title_match"
    assert out.document.title == "Tesla Q3 2023 Financial Report"
    assert out.document.url == "https://example.org/reports/tesla-2023-q3"


def test_get_with_temporal_scope_skips_documents_of_other_quarters(corpus):
    q2 = run_get(get("Tesla Financial Report", "2023-Q2"), corpus).document
    assert (q2.period, q2.date) == ("2023-Q2", "2023-07-19")  # published after the quarter
    assert run_get(get("Tesla Financial Report", "2023-Q4"), corpus).document.period == "2023-Q4"


def test_get_without_scope_keeps_to_the_quarter_named_in_the_source(corpus):
    out = run_get(get("Tesla Q2 2023 report"), corpus)
    assert out.document.title == "Tesla Q2 2023 Financial Report"


def test_get_that_describes_rather_than_names_a_document_is_refused_naming_the_nearest(corpus):
    with pytest.raises(ToolError) as caught:
        run_get(get("Tesla battery yield rate Q2 2023"), corpus)
    assert caught.value.code == "NOT_FOUND"
    assert ("'Tesla Q2 2023 Financial Report' (period 2023-Q2, published 2023-07-19): title "
            "lacks 'battery', 'rate', 'yield'") in caught.value.message


def test_get_of_a_missing_document_names_the_source_and_range_and_suggests_widening(corpus):
    with pytest.raises(ToolError) as caught:
        run_get(get("Tesla Financial Report", "2021-Q3"), corpus)
    error = caught.value
    assert error.code == "NOT_FOUND"
    assert "'Tesla Q3 2023 Financial Report' (period 2023-Q3, published 2023-10-18)" in error.message
    assert "outside temporal_scope 2021-Q3" in error.message
    assert "widen temporal_scope" in error.message


def test_a_source_whose_period_lies_outside_its_scope_says_no_document_can_be_both(corpus):
    with pytest.raises(ToolError, match="the source names 2023-Q3, outside its temporal_scope "
                                        "2021-Q3"):
        run_get(get("Tesla Q3 2023 Financial Report", "2021-Q3"), corpus)


def test_get_of_an_unknown_document_without_a_period_suggests_indexing_it(corpus):
    with pytest.raises(ToolError, match="chordal index") as caught:
        run_get(get("Zephyr Airlines cabin crew roster"), corpus)
    assert caught.value.code == "NOT_FOUND"


def test_get_with_an_unreadable_temporal_scope_is_a_bad_scope_error(corpus):
    with pytest.raises(ToolError) as caught:
        run_get(get("Tesla Q3 2023 Financial Report", "Q3 of last year"), corpus)
    assert caught.value.code == "BAD_SCOPE"
    assert "'Q3 of last year'" in caught.value.message and "2023-Q3" in caught.value.message


def test_get_on_an_empty_index_says_to_index_documents(tmp_path):
    with SqliteSearch(tmp_path / "empty.db") as empty:
        with pytest.raises(ToolError, match="index is empty.*chordal index"):
            run_get(get("Tesla Q3 2023 Financial Report"), empty)


def test_get_on_an_unreadable_store_is_a_search_failed_error(tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_text("not sqlite " * 200)
    with pytest.raises(ToolError) as caught:
        run_get(get("Tesla Q3 2023 Financial Report"), SqliteSearch(broken))
    assert caught.value.code == "SEARCH_FAILED" and "broken.db" in caught.value.message


def test_an_undated_document_whose_title_names_a_year_is_still_found(tmp_path):
    with SqliteSearch(tmp_path / "s.db") as store:
        store.add([Document(title="Style guide 2024", content="Write dates as YYYY-MM-DD.")])
        assert run_get(get("Style guide 2024"), store).value == "Write dates as YYYY-MM-DD."


@pytest.mark.parametrize("plan_file", ["tesla_yield.json", "two_branch.json"])
def test_bundled_plans_fetch_documents_their_patterns_match(corpus, plan_file):
    plan = Plan.model_validate(json.loads((DATA / "plans" / plan_file).read_text()))
    assert validate_plan(plan) == []
    fetched = {s.var: run_get(s, corpus).value for s in plan.steps if s.operation == "GET"}
    extracts = [s for s in plan.steps if s.operation == "EXTRACT"]
    assert extracts
    values = {s.var: re.search(s.pattern, fetched[s.source[1:]]).group(1) for s in extracts}
    expected = {"tesla_yield.json": {"Y": "91.7"}, "two_branch.json": {"A": "23.35", "B": "9.84"}}
    assert values == expected[plan_file]


def test_two_branch_plan_has_two_independent_get_extract_branches_and_a_compute_over_both():
    plan = Plan.model_validate(json.loads((DATA / "plans" / "two_branch.json").read_text()))
    gets = [s for s in plan.steps if s.operation == "GET"]
    compute = next(s for s in plan.steps if s.operation == "COMPUTE")
    assert len(gets) == 2 and not any(s.references() for s in gets)
    assert sorted(compute.references()) == ["A", "B"]
    assert "{{ A }}" in plan.answer and "{{ B }}" in plan.answer


def test_get_with_top_k_returns_the_texts_of_several_documents_best_first(corpus):
    step = GetStep(id="E1", operation="GET", source="Tesla Financial Report",
                   temporal_scope="2023", top_k=3)
    out = run_get(step, corpus)
    titles = [d.title for d in out.documents]
    assert len(out.value) == 3 and all(t.startswith("Tesla Q") for t in titles)
    assert out.value == [run_get(get(t, "2023"), corpus).value for t in titles]
    assert out.document == out.documents[0]


def test_get_with_top_k_keeps_the_period_rules_for_every_document(corpus):
    step = GetStep(id="E1", operation="GET", source="Tesla Financial Report",
                   temporal_scope="2023-Q3", top_k=5)
    out = run_get(step, corpus)
    assert [d.period for d in out.documents] == ["2023-Q3"]
    assert out.documents[0].title == "Tesla Q3 2023 Financial Report"


def test_get_with_top_k_puts_the_document_top_k_1_would_return_first(corpus):
    one = run_get(get("Tesla Q3 2023 Financial Report", "2023-Q3"), corpus)
    many = run_get(GetStep(id="E1", operation="GET", source="Tesla Q3 2023 Financial Report",
                           temporal_scope="2023-Q3", top_k=4), corpus)
    assert many.value[0] == one.value and many.document == one.document
    assert many.confidence == one.confidence


def test_get_with_top_k_still_reports_a_missing_document_as_not_found(corpus):
    step = GetStep(id="E1", operation="GET", source="Zephyr Airlines cabin crew roster", top_k=3)
    with pytest.raises(ToolError) as caught:
        run_get(step, corpus)
    assert caught.value.code == "NOT_FOUND"

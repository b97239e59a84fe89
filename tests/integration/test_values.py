"""Typed values end to end, through real Redis and real planner/executor/finalizer
processes, on the text of real filings (tests/shared/tools/data/README.md): a capture
that is not a value ends as an honest "not found" that says what was captured; COMPUTE
over a figure in millions and one in thousands gives the right ratio, and the answer
prints the unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
DATA = Path(__file__).parent.parent / "shared" / "tools" / "data"
TEN_K = "Patriot Transportation Holding Form 10-K fiscal 2023"
TEN_Q = "Patriot Transportation Holding Form 10-Q June 30 2015"


@pytest.fixture(scope="module")
def filings(pipeline, tmp_path_factory):
    corpus = tmp_path_factory.mktemp("filings") / "filings.jsonl"
    records = [
        {"title": TEN_K, "date": "2023-12-08", "source_type": "official_report",
         "content": (DATA / "pati-20230930-10k.pages.txt").read_text()},
        {"title": TEN_Q, "date": "2015-08-10", "source_type": "official_report",
         "content": (DATA / "pati-20150630-10q.pages.txt").read_text()},
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = pipeline.cli("index", str(corpus))
    assert result.returncode == 0, result.stderr
    return pipeline


def steps(*extra: dict, source: str = TEN_K) -> list[dict]:
    return [{"id": "E1", "operation": "GET", "source": source, "output_var": "$DOC"}, *extra]


def test_a_page_number_captured_from_the_contents_ends_as_not_found_saying_what_it_was(filings):
    record = filings.ask("On what does the 10-K report financial statements?", {
        "domain": "finance", "answer": "Financial statements: {{ FS }}.",
        "steps": steps({"id": "E2", "operation": "EXTRACT", "source": "$DOC",
                        "pattern": r"Financial Statements and Supplementary Data.*?(\d[\d,]*)",
                        "output_var": "$FS"})})
    assert record.status == "done", record.error
    step = record.steps[1]
    assert step.status == "error" and step.error_code == "NOT_A_VALUE"
    assert "'23'" in step.error_message and "page 3" in step.error_message
    assert "is a page number" in step.error_message
    answer = record.answer
    assert not answer.complete and "FS is missing" in answer.text
    assert "NOT_A_VALUE" in answer.text and "is a page number" in answer.text
    assert "Financial statements: 23" not in answer.text


def test_a_group_that_can_capture_a_lone_comma_is_refused_before_anything_runs(filings):
    record = filings.ask("What were capital expenditures?", {"steps": steps(
        {"id": "E2", "operation": "EXTRACT", "source": "$DOC",
         "pattern": r"capital expenditures.*?([\d,]+)", "output_var": "$CAPEX"})})
    assert record.status == "failed" and record.steps == []
    assert [(p.step, p.code) for p in record.problems] == [("E2", "number_group")]


def test_a_ratio_of_millions_over_thousands_is_right_and_the_answer_prints_the_units(filings):
    equity = r"Total shareholders’ equity/net investment\s+(\d[\d,]*)"
    minimum = r"a minimum \$(\d+(?:\.\d+)?) million tangible net worth"
    record = filings.ask("How far above its covenant was Patriot's equity?", {
        "domain": "finance",
        "answer": "Equity of {{ EQUITY }} is {{ TIMES }} times the covenant's minimum of "
                  "{{ MINIMUM }}, {{ HEADROOM }} above it.",
        "steps": steps(
            {"id": "E2", "operation": "EXTRACT", "source": "$DOC", "pattern": equity,
             "quantity": "money", "output_var": "$EQUITY"},
            {"id": "E3", "operation": "EXTRACT", "source": "$DOC", "pattern": minimum,
             "output_var": "$MINIMUM"},
            {"id": "E4", "operation": "COMPUTE", "expression": "round($EQUITY / $MINIMUM, 2)",
             "output_var": "$TIMES"},
            {"id": "E5", "operation": "COMPUTE", "expression": "$EQUITY - $MINIMUM",
             "output_var": "$HEADROOM"}, source=TEN_Q)})
    assert record.status == "done", record.error
    by_id = {s.step_id: s for s in record.steps}
    assert by_id["E2"].quantity.scale == 3 and by_id["E3"].quantity.scale == 6
    assert by_id["E2"].document.page == 4 and by_id["E3"].document.page == 26
    assert by_id["E4"].value == "1.42"  # 35,417 thousand / 25 million; plain: 1416.68
    assert by_id["E5"].value == "10417" and by_id["E5"].quantity.unit == "USD"
    assert record.answer.text == (
        "Equity of $35,417[1] thousand is 1.42[1][2] times the covenant's minimum of "
        "$25[2] million, $10,417[1][2] thousand above it.")
    pages = [f.evidence.cite() for f in record.answer.footnotes]
    assert "page 4" in pages[0] and "page 26" in pages[1]

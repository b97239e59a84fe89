"""Diagnosing failed runs from hand-built RunRecords; the search store is a SQLite file."""

from __future__ import annotations

import regex
import pytest
from typer.testing import CliRunner

from shared.debug import explain
from shared.models import Evidence, Plan, RunRecord, StepResult
from shared.search import Document, SqliteSearch

REPORT = Evidence(doc_id="tesla-q3", title="Tesla Q3 2023 Financial Report", date="2023-09-30")
TEXT = ("Tesla reported total revenue of $23.35 billion for the third quarter of 2023. "
        "Vehicle deliveries totaled 435,059 units in the quarter. "
        "At Gigafactory Nevada the battery yield rate of 91.7% remained below the "
        "company's 92% target.")


def ok(step_id, operation, value, **kw):
    return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                      status="ok", value=value, **kw)


def failed(step_id, operation, code, message="", **kw):
    return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                      status="error", error_code=code, error_message=message, **kw)


def record(steps: list[dict], results: list[StepResult], status="done") -> RunRecord:
    return RunRecord(query_id="q", question="?", status=status,
                     plan=Plan.model_validate({"steps": steps}), steps=results)


GET = {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
       "output_var": "$R"}


def extract(pattern, **kw):
    return {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": pattern,
            "output_var": "$Y", **kw}


def no_match(pattern, text=TEXT, **kw):
    run = record([GET, extract(pattern, **kw)],
                 [ok("E1", "GET", text, document=REPORT),
                  failed("E2", "EXTRACT", "NO_MATCH", f"pattern `{pattern}` found nothing")])
    (diagnosis,) = explain(run)
    return diagnosis


def assert_checked(diagnosis, captured):
    """The suggested pattern matches the nearest sentence and captures the figure."""
    m = regex.search(diagnosis.pattern, diagnosis.sentence, regex.IGNORECASE)
    assert m is not None and m.group(1) == captured
    assert diagnosis.pattern in diagnosis.suggestion


# -- NO_MATCH -------------------------------------------------------------------------

def test_a_pattern_with_the_wrong_unit_is_blamed_on_units_with_a_pattern_that_matches():
    d = no_match(r"battery yield rate.*?(\d+\.\d+) percent")
    assert d.code == "NO_MATCH" and d.cause.startswith("wrong units")
    assert "'%'" in d.cause
    assert d.sentence.startswith("At Gigafactory Nevada the battery yield rate of 91.7%")
    assert_checked(d, "91.7")


def test_a_pattern_with_the_wrong_words_is_too_strict_and_shows_what_the_document_says():
    d = no_match(r"total revenue was \$(\d+(?:\.\d+)?) billion")
    assert d.cause.startswith("pattern too strict")
    assert "'total revenue of $23.35'" in d.cause
    assert_checked(d, "23.35")


def test_a_number_with_thousands_separators_is_named_as_what_the_pattern_misses():
    d = no_match(r"Vehicle deliveries totaled (\d+) units")
    assert "435,059" in d.cause and "thousands separators" in d.cause
    assert_checked(d, "435,059")


def test_a_pattern_forcing_letter_case_is_blamed_on_case():
    d = no_match(r"(?-i)Battery Yield rate of (\d+\.\d+)%")
    assert d.cause.startswith("case")
    assert_checked(d, "91.7")


def test_a_figure_written_before_its_words_gets_a_pattern_that_captures_the_nearest_one():
    d = no_match(r"target of (\d+\.\d+)%")
    assert "decimal point" in d.cause
    assert_checked(d, "92")


def test_a_pattern_whose_words_the_document_never_uses_suggests_checking_the_document():
    d = no_match(r"warranty reserve of (\d+)")
    assert d.sentence is None and d.pattern is None
    assert "warranty" in d.cause and "right document" in d.suggestion


def test_an_extract_that_fell_back_is_diagnosed_like_a_miss():
    pattern = r"battery yield rate is (\d+\.\d+)%"
    run = record([GET, extract(pattern, fallback="unknown")],
                 [ok("E1", "GET", TEXT, document=REPORT),
                  ok("E2", "EXTRACT", "unknown", confidence="fallback")])
    (d,) = explain(run)
    assert d.code == "NO_MATCH" and d.cause.startswith("fell back to 'unknown'")
    assert_checked(d, "91.7")


def test_an_extract_over_several_documents_looks_in_all_of_them():
    texts = ["Nothing relevant here.", TEXT]
    run = record([{**GET, "top_k": 2}, extract(r"deliveries were (\d+)")],
                 [ok("E1", "GET", texts, documents=[REPORT, REPORT]),
                  failed("E2", "EXTRACT", "NO_MATCH")])
    (d,) = explain(run)
    assert d.sentence.startswith("Vehicle deliveries totaled")
    assert_checked(d, "435,059")


# -- NOT_FOUND ------------------------------------------------------------------------

@pytest.fixture
def store(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add([
        Document(id="t2", title="Tesla Q2 2023 Financial Report", content="Q2", date="2023-06-30"),
        Document(id="t4", title="Tesla Q4 2023 Financial Report", content="Q4", date="2023-12-31"),
        Document(id="n3", title="Northwind Q3 2023 Report", content="other", date="2023-09-30"),
    ])
    yield backend
    backend.close()


def test_a_document_kept_out_by_its_period_is_named_with_the_scope_that_excluded_it(store):
    step = {**GET, "source": "Tesla Financial Report", "temporal_scope": "2023-Q3"}
    run = record([step], [failed("E1", "GET", "NOT_FOUND", "no document matches")])
    (d,) = explain(run, store)
    assert d.code == "NOT_FOUND"
    assert {"Tesla Q2 2023 Financial Report", "Tesla Q4 2023 Financial Report"} <= set(d.titles)
    assert "about 2023-Q4, outside temporal_scope 2023-Q3" in d.cause
    assert "widen temporal_scope" in d.suggestion


def test_a_get_that_recorded_its_candidates_is_explained_from_them_without_the_store():
    from shared.models import Candidate

    refused = Candidate(doc_id="t2", title="Tesla Q2 2023 Financial Report", period="2023-Q2",
                        date="2023-07-19", verdict="rejected",
                        reason="title names 2023-Q2, the source names 2023-Q3")
    result = failed("E1", "GET", "NOT_FOUND", "no document fits 'Tesla Q3 2023 Financial Report'")
    run = record([GET], [result.model_copy(update={"candidates": [refused]})])
    (d,) = explain(run)
    assert d.candidates == [refused] and d.titles == ["Tesla Q2 2023 Financial Report"]
    assert "not substitute another period" in d.suggestion
    assert "rejected: 'Tesla Q2 2023 Financial Report' (period 2023-Q2, published 2023-07-19)" in (
        d.render())


def test_a_source_nothing_resembles_suggests_indexing_the_document(store):
    run = record([{**GET, "source": "Quarterly report of Nonexistent Widgets"}],
                 [failed("E1", "GET", "NOT_FOUND", "no document matches")])
    (d,) = explain(run, store)
    assert "Tesla Q2 2023 Financial Report" in d.titles
    assert "lacks 'Nonexistent', 'Quarterly', 'Widgets'" in d.cause
    assert "chordal index" in d.suggestion or "index it" in d.suggestion


def test_an_empty_search_store_says_so(tmp_path):
    run = record([GET], [failed("E1", "GET", "NOT_FOUND", "no document matches")])
    (d,) = explain(run, SqliteSearch(tmp_path / "empty.db"))
    assert "no document in the store shares a word" in d.cause and "chordal index" in d.suggestion


def test_without_a_search_store_not_found_says_where_to_look():
    run = record([GET], [failed("E1", "GET", "NOT_FOUND", "no document matches")])
    (d,) = explain(run)
    assert "Tesla Q3 2023 Financial Report" in d.cause and "search store" in d.suggestion


def test_a_search_that_found_nothing_lists_the_nearest_titles(store):
    step = {"id": "S1", "operation": "SEARCH", "query": "Tesla report", "temporal_scope": "2022"}
    run = record([step], [ok("S1", "SEARCH", [])])
    (d,) = explain(run, store)
    assert d.code == "EMPTY" and "outside temporal_scope 2022" in d.cause


# -- chains and other codes -----------------------------------------------------------

def test_input_failed_points_to_the_step_whose_failure_started_the_chain():
    steps = [GET, extract(r"revenue of \$(\d+(?:\.\d+)?)"),
             {"id": "E3", "operation": "COMPUTE", "expression": "$Y * 2", "output_var": "$D"}]
    run = record(steps, [failed("E1", "GET", "NOT_FOUND", "no document matches"),
                         failed("E2", "EXTRACT", "INPUT_FAILED", "$R is unavailable"),
                         failed("E3", "COMPUTE", "INPUT_FAILED", "$Y is unavailable")])
    by_step = {d.step: d for d in explain(run)}
    assert by_step["E3"].root == "E1" and by_step["E2"].root == "E1"
    assert "step E1, which failed with NOT_FOUND" in by_step["E3"].cause
    assert by_step["E3"].suggestion.startswith("fix step E1 first")


def test_a_pattern_timeout_is_explained_and_gets_a_form_that_finishes():
    pattern = r"battery(\w+\s?)+yield: (\d+)"
    long_text = "battery " + "word " * 3000 + "!"
    run = record([GET, extract(pattern)],
                 [ok("E1", "GET", long_text, document=REPORT),
                  failed("E2", "EXTRACT", "PATTERN_TIMEOUT", "ran longer than 1 s")])
    (d,) = explain(run)
    assert "catastrophic backtracking" in d.cause and "(\\w+\\s?)+" in d.cause
    assert d.pattern == r"battery((?>\w+\s?)+)yield: (\d+)"
    regex.search(d.pattern, long_text, timeout=1.0)  # finishes instead of timing out


def test_a_greedy_pattern_timeout_gets_a_lazy_bounded_form():
    run = record([GET, extract(r"battery.*yield.*rate.*of (\d+)")],
                 [ok("E1", "GET", TEXT, document=REPORT),
                  failed("E2", "EXTRACT", "PATTERN_TIMEOUT", "ran longer than 1 s")])
    (d,) = explain(run)
    assert d.pattern == r"battery.{0,80}?yield.{0,80}?rate.{0,80}?of (\d+)"


def test_a_bad_scope_suggests_the_form_it_probably_meant():
    run = record([{**GET, "temporal_scope": "Q3 2023"}],
                 [failed("E1", "GET", "BAD_SCOPE", "not a date scope")])
    (d,) = explain(run)
    assert "'Q3 2023'" in d.cause and "write it as '2023-Q3'" in d.suggestion


def test_a_division_by_zero_names_the_input_that_is_zero():
    steps = [GET, extract(r"revenue of \$(\d+(?:\.\d+)?)"),
             {"id": "E3", "operation": "COMPUTE", "expression": "100 / $Y", "output_var": "$D"}]
    run = record(steps, [ok("E1", "GET", TEXT), ok("E2", "EXTRACT", "0"),
                         failed("E3", "COMPUTE", "DIVISION_BY_ZERO", "division by zero")])
    (d,) = explain(run)
    assert "$Y (step E2) is '0'" in d.cause and "IF step" in d.suggestion


def test_not_a_number_names_the_input_and_blames_a_text_fallback():
    steps = [GET, extract(r"yield (\d+)", fallback="unknown"),
             {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$G"}]
    run = record(steps, [ok("E1", "GET", TEXT),
                         ok("E2", "EXTRACT", "unknown", confidence="fallback"),
                         failed("E3", "COMPUTE", "NOT_A_NUMBER", "$Y is 'unknown'")])
    d = {d.step: d for d in explain(run)}["E3"]
    assert "$Y (step E2) is 'unknown' — its fallback" in d.cause
    assert "numeric fallback" in d.suggestion


@pytest.mark.parametrize("code, cause, fix", [
    ("REDELIVERY_CAP", "died every time", "worker's log"),
    ("TIME_LIMIT", "time limit", "CHORDAL_TASK_TIME_LIMIT_S"),
])
def test_worker_failures_are_explained_with_a_fix(code, cause, fix):
    (d,) = explain(record([GET], [failed("E1", "GET", code, "delivered 4 times")]))
    assert d.code == code and cause in d.cause and "delivered 4 times" in d.cause
    assert fix in d.suggestion


def test_a_run_where_every_step_succeeded_needs_no_diagnosis():
    run = record([GET, extract(r"yield rate of (\d+(?:\.\d+)?)%")],
                 [ok("E1", "GET", TEXT, document=REPORT), ok("E2", "EXTRACT", "91.7")])
    assert explain(run) == []


def test_steps_that_never_reported_in_a_failed_query_are_named():
    run = record([GET], [], status="failed").model_copy(update={"error": "deadline exceeded"})
    (d,) = explain(run)
    assert d.code == "NO_RESULT" and "deadline exceeded" in d.cause


# -- the command ----------------------------------------------------------------------

class FakeStore:
    def __init__(self, records):
        self.records = records

    def ping(self):
        pass

    def record(self, query_id):
        return self.records.get(query_id)


@pytest.fixture
def cli(monkeypatch, tmp_path):
    from producers.cli import cli as command
    from shared.stores.runs import RunStore

    run = record([GET, extract(r"battery yield rate is (\d+\.\d+)%")],
                 [ok("E1", "GET", TEXT, document=REPORT), failed("E2", "EXTRACT", "NO_MATCH")])
    monkeypatch.setenv("CHORDAL_HOME", str(tmp_path))
    monkeypatch.setattr(RunStore, "from_url",
                        classmethod(lambda cls, url, ttl_s: FakeStore({"q": run})))
    return lambda *args: CliRunner().invoke(command, ["debug", *args])


def test_chordal_debug_prints_each_diagnosis_with_its_cause_and_fix(cli):
    result = cli("q")
    assert result.exit_code == 0, result.output
    assert "E2 [NO_MATCH]" in result.output and "cause: pattern too strict" in result.output
    assert "nearest sentence: At Gigafactory Nevada" in result.output


def test_chordal_debug_of_an_unknown_query_exits_1_naming_the_id(cli):
    result = cli("nope")
    assert result.exit_code == 1
    assert "no query 'nope'" in result.output


# -- EXTRACT by row ---------------------------------------------------------------------

TEN_K = Evidence(doc_id="pati-2018", title="Patriot Transportation Holding 2018 Form 10-K")
CASH_FLOWS = [  # page 46 of the 10-K, its investing section
    ["(In thousands)", "2018", "2017", "2016"],
    ["Cash flows from investing activities:", "", "", ""],
    ["Purchase of property and equipment", "(4,656)", "(6,332)", "(11,503)"],
    ["Proceeds from the sale of property, plant and equipment", "2,073", "1,107", "1,877"],
    ["Net cash used in investing activities", "(2,567)", "(5,214)", "(9,517)"]]


def row_run(row: str, period: str, code: str, message: str = "") -> RunRecord:
    step = {"id": "E2", "operation": "EXTRACT", "source": "$R", "row": row, "period": period,
            "output_var": "$CAPEX"}
    return record([GET, step], [ok("E1", "GET", "…", document=TEN_K),
                                failed("E2", "EXTRACT", code, message)])


def test_a_row_not_found_without_the_store_keeps_the_steps_message_and_says_where_to_look():
    (d,) = explain(row_run("capital spending", "FY2018", "NOT_FOUND", "no table row is it"))
    assert (d.step, d.code, d.cause) == ("E2", "NOT_FOUND", "no table row is it")
    assert "where the search store is reachable" in d.suggestion


def test_a_row_not_found_names_the_nearest_rows_of_the_fetched_documents_and_their_periods(
        tmp_path):
    from shared.tables.read import table_from_rows
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add([Document(id=TEN_K.doc_id, title=TEN_K.title, content="…",
                          tables=[table_from_rows(CASH_FLOWS, page=46)])])
    (d,) = explain(row_run("purchases of plant", "FY2018", "NOT_FOUND"), backend)
    backend.close()
    assert d.rows[0].startswith("'Purchase of property and equipment' in a table (page 46)")
    assert "'2018'" in d.rows[0] and "'2016'" in d.rows[0]
    assert "nearest row: 'Purchase of property and equipment'" in d.render()

"""ReAct tools: the model's input becomes a plan step run by the executors' registry,
with a timeout, and every failure becomes an error result the loop can show."""

from __future__ import annotations

import threading
import time

import pytest

from shared.errors import ConfigError, ToolError, TransientToolError
from shared.react import tools
from shared.react.act import run_action
from shared.react.observe import observe
from shared.search import SqliteSearch
from shared.tools import registry
from shared.tools.base import ToolOutput


def act(tool, value, results=None, backend=None, n=1, timeout_s=3.0):
    return run_action(tool, value, query_id="q", n=n, results=results or {}, backend=backend,
                      timeout_s=timeout_s)


def test_get_fetches_a_document_and_stores_it_under_the_iteration_action_id(corpus):
    r = act("get", "Tesla Q3 2023 Financial Report", backend=corpus, n=2)
    assert (r.action_id, r.step_id, r.operation, r.status) == ("q:R2", "R2", "GET", "ok")
    assert r.document.title == "Tesla Q3 2023 Financial Report"
    assert "$23.35 billion" in r.value


def test_search_returns_snippets_each_with_its_document(corpus):
    r = act("search", {"query": "Voltara cell shipments", "temporal_scope": "2023-Q3"},
            backend=corpus)
    assert r.status == "ok" and r.operation == "SEARCH"
    assert r.documents[0].title == "Voltara Energy Q3 2023 Quarterly Results"
    assert len(r.value) == len(r.documents) <= 3


def test_extract_reads_the_latest_document_when_no_source_is_named(corpus):
    fetched = act("get", "Northwind Motors Q3 2023 Financial Report", backend=corpus, n=1)
    r = act("extract", {"pattern": r"revenue of \$(\d+(?:\.\d+)?) billion"}, {"R1": fetched},
            backend=corpus, n=2)
    assert (r.value, r.document.title, r.inputs) == (
        "9.84", "Northwind Motors Q3 2023 Financial Report", ["q:R1"])


def test_calculate_over_earlier_results_carries_their_documents(corpus):
    q3 = act("get", "Tesla Q3 2023 Financial Report", backend=corpus, n=1)
    v3 = act("extract", {"source": "R1", "pattern": r"revenue of \$(\d+(?:\.\d+)?) billion"},
             {"R1": q3}, n=2)
    r = act("calculate", "$R2 - 20", {"R1": q3, "R2": v3}, n=3)
    assert r.value == "3.35" and r.document.title == "Tesla Q3 2023 Financial Report"


def test_current_time_is_a_registry_tool_that_answers_in_utc():
    r = act("current_time", None)
    assert r.status == "ok" and r.operation == "CURRENT_TIME" and r.value.endswith("+00:00")


@pytest.mark.parametrize("tool, value, code, words", [
    ("browse", "x", "UNKNOWN_TOOL", "use one of get, search"),
    ("get", "", "BAD_INPUT", "example input"),
    ("extract", {"pattern": "(x)"}, "BAD_INPUT", "get or search first"),
    ("calculate", "$R7 * 2", "BAD_INPUT", "$R7 is no earlier result"),
    ("extract", {"source": "$R1", "pattern": "no group"}, "BAD_PATTERN", "capture group"),
])
def test_bad_calls_become_error_results_that_say_how_to_fix_them(tool, value, code, words, corpus):
    results = {"R1": act("get", "Tesla Q3 2023 Financial Report", backend=corpus)} \
        if code == "BAD_PATTERN" else {}
    r = act(tool, value, results, backend=corpus, n=2)
    assert (r.status, r.error_code) == ("error", code)
    assert words in r.error_message
    assert observe(r).startswith(f"[ERROR] {code}: ")


def test_a_slow_tool_times_out_and_the_call_returns_without_waiting_for_it():
    release = threading.Event()

    def slow(step, inputs, backend):
        release.wait(10)
        return ToolOutput(value="late", confidence="slow")

    tools.register_tool("slow_unit", "sleeps", "x", slow)
    try:
        started = time.monotonic()
        r = act("slow_unit", "x", timeout_s=0.3)
        assert time.monotonic() - started < 2
        assert (r.status, r.error_code) == ("error", "TIMEOUT")
        assert observe(r).startswith("[ERROR] TIMEOUT: slow_unit did not answer within 0.3 s")
    finally:
        release.set()
        tools.TOOLS.pop("slow_unit")
        registry.RUNNERS.pop("SLOW_UNIT")


def test_a_user_tool_gets_the_models_input_and_a_crash_becomes_tool_crashed():
    def weather(step, inputs, backend):
        if step.input == "Atlantis":
            raise KeyError("Atlantis")
        if step.input == "Nowhere":
            raise ToolError("NOT_FOUND", "no station near Nowhere")
        return ToolOutput(value={"city": step.input, "temp_c": 21, "id": 9}, confidence="api")

    tools.register_tool("weather", "today's weather in a city", "Paris", weather)
    try:
        r = act("weather", "Paris")
        assert observe(r) == "city: Paris; temp_c: 21"
        assert act("weather", "Atlantis").error_code == "TOOL_CRASHED"
        assert observe(act("weather", "Nowhere")) == "[NO_DATA] no station near Nowhere"
    finally:
        tools.TOOLS.pop("weather")
        registry.RUNNERS.pop("WEATHER")


def test_a_tool_name_must_be_an_identifier_and_not_finish():
    with pytest.raises(ConfigError, match="identifier"):
        tools.register_tool("my tool", "d", None, lambda s, i, b: None)
    with pytest.raises(ConfigError, match="finish"):
        tools.register_tool("finish", "d", None, lambda s, i, b: None)


def test_a_tool_module_that_cannot_be_imported_is_named():
    with pytest.raises(ConfigError, match="no_such_tools_module"):
        tools.load_tool_modules(["no_such_tools_module"])


def test_a_search_outage_is_an_observation_with_its_own_code_not_a_crash():
    def flaky(step, inputs, backend):
        raise TransientToolError("SEARCH_UNAVAILABLE", "the search store timed out")

    tools.register_tool("flaky", "a tool whose backend is down", "x", flaky)
    try:
        r = act("flaky", "x")
        assert (r.status, r.error_code) == ("error", "SEARCH_UNAVAILABLE")
        assert r.error_message == "the search store timed out"
    finally:
        tools.TOOLS.pop("flaky")
        registry.RUNNERS.pop("FLAKY")


def test_the_cell_tool_reads_a_row_and_period_written_as_text_or_fields(corpus):
    fetched = act("get", "Tesla Q3 2023 Financial Report", backend=corpus, n=1)
    build = tools.TOOLS["cell"].build
    step = build("capital expenditure FY2023", "R2", {"R1": fetched})
    assert (step.source, step.row, step.period, step.pattern) == (
        "$R1", "capital expenditure", "FY2023", None)
    step = build({"source": "R1", "line_item": "Net cash provided by operating activities",
                  "year": "2023-Q3"}, "R2", {"R1": fetched})
    assert (step.source, step.row, step.period) == (
        "$R1", "Net cash provided by operating activities", "2023-Q3")
    assert build({"row": "revenue", "period": "FY2023"}, "R2", {"R1": fetched}).operation \
        == "EXTRACT"


@pytest.mark.parametrize("value, words", [
    ({"period": "FY2023"}, "give the row"),
    ("capital expenditure FY2023", "get or search first"),
])
def test_a_cell_call_without_a_row_or_a_document_says_what_to_give(value, words):
    r = act("cell", value)
    assert (r.status, r.error_code) == ("error", "BAD_INPUT") and words in r.error_message


def test_the_cell_tool_reads_a_figure_from_a_table_of_the_fetched_document(tmp_path):
    from shared.search import Document
    from shared.tables.read import table_from_rows
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add([Document(id="pati", title="Patriot Transportation Holding 2018 Form 10-K",
                          content="…", tables=[table_from_rows([
                              ["(In thousands)", "2018", "2017", "2016"],
                              ["Cash flows from investing activities:", "", "", ""],
                              ["Purchase of property and equipment", "(4,656)", "(6,332)",
                               "(11,503)"]], page=46)])])
    fetched = act("get", "Patriot Transportation Holding 2018 Form 10-K", backend=backend)
    r = act("cell", "capital expenditure FY2017", {"R1": fetched}, backend=backend, n=2)
    assert (r.status, r.value, r.document.page) == ("ok", "(6,332)", 46)
    assert observe(r).startswith("(6,332)")
    spending = act("cell", "capital expenditure, all periods", {"R1": fetched},
                   backend=backend, n=3)
    assert (spending.status, spending.value) == ("ok", ["(11,503)", "(6,332)", "(4,656)"])
    signed = act("calculate", "mean($R3)", {"R3": spending}, backend=backend, n=4)
    assert (signed.status, signed.error_code) == ("error", "UNCLEAR_ARITHMETIC")  # outflows
    assert "mean(abs($R3))" in signed.error_message
    amounts = act("calculate", "round(mean(abs($R3)), 1)", {"R3": spending}, backend=backend, n=5)
    assert (amounts.status, amounts.value) == ("ok", "7497.0")  # (11,503 + 6,332 + 4,656) / 3
    backend.close()

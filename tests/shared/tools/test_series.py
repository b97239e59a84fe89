"""EXTRACT of a row in every period (`period: "all"`) and COMPUTE's mean and sum over it,
on real report tables (TAT-QA's, and Patriot Transportation's 10-K with its five-year
summary beside its three-year statements): the figures of the one table that states the
row in every one of its periods, earliest first, typed; AMBIGUOUS when tables of other
periods or other figures state it too; a list is never a number."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from shared.errors import ToolError
from shared.models import ComputeStep, ExtractStep, GetStep
from shared.tables.read import table_from_rows
from shared.tools.cells.request import check_row
from shared.tools.cells.series import read_series
from shared.tools.compute import run_compute
from shared.tools.registry import run_tool

sys.path.insert(0, str(Path(__file__).parent))
from test_cells import DATA, TABLES, TEN_K, doc  # noqa: E402


def series(row: str, documents, tables=TABLES, period="all"):
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=row, period=period)
    return read_series(step, list(documents), lambda doc_id: tables.get(doc_id, []))


def refused(*args) -> ToolError:
    with pytest.raises(ToolError) as e:
        series(*args)
    return e.value


def test_a_row_in_every_period_is_its_figure_in_each_of_its_tables_periods_earliest_first():
    flows = series("operating cash flow", [doc("tatqa-185")])  # 2017, 2018, Change
    assert flows.value == ["$223,630", "$283,710"]  # the Change column is no period
    assert [(q.amount, q.scale) for q in flows.quantities] == [(Decimal(223630), 3),
                                                               (Decimal(283710), 3)]
    assert "Net cash provided by operating activities" in flows.quote
    newest_first = series("net cash provided by operating activities", [doc("tatqa-121")])
    assert newest_first.value == ["$15,386", "$14,551"]  # 2019, Change, 2018: FY2018 first
    assert newest_first.note.index("2017-06-01..2018-05-31") < newest_first.note.index(
        "2018-06-01..2019-05-31")


def test_mean_and_sum_take_the_series_in_its_unit():
    flows = series("operating cash flow", [doc("tatqa-185")])
    variables, quantities = {"T1": flows.value}, {"T1": flows.quantities}
    mean = run_compute(ComputeStep(id="C", operation="COMPUTE", expression="mean($T1)"),
                       variables, quantities)
    assert mean.value == "253670"  # (223,630 + 283,710) / 2, in thousands
    assert mean.quantity.scale == 3
    total = run_compute(ComputeStep(id="C", operation="COMPUTE", expression="sum($T1) / 1000"),
                        variables, quantities)
    assert (Decimal(total.value), total.quantity.scale) == (Decimal("507.34"), 6)


def test_a_series_is_no_number_and_one_written_in_parentheses_is_unclear_to_average():
    flows = series("operating cash flow", [doc("tatqa-185")])
    with pytest.raises(ToolError) as e:
        run_compute(ComputeStep(id="C", operation="COMPUTE", expression="$T1 + 1"),
                    {"T1": flows.value}, {"T1": flows.quantities})
    assert e.value.code == "NOT_A_NUMBER" and "mean($T1)" in e.value.message
    investing = series("net cash used in investing activities", [doc("tatqa-185")])
    assert investing.value == ["(74,599)", "(692,999)"]
    with pytest.raises(ToolError) as e:
        run_compute(ComputeStep(id="C", operation="COMPUTE", expression="mean($T1)"),
                    {"T1": investing.value}, {"T1": investing.quantities})
    assert e.value.code == "UNCLEAR_ARITHMETIC" and "(74,599)" in e.value.message
    assert "mean(abs($T1))" in e.value.message
    amounts = run_compute(ComputeStep(id="C", operation="COMPUTE", expression="mean(abs($T1))"),
                          {"T1": investing.value}, {"T1": investing.quantities})
    assert (amounts.value, amounts.quantity.scale) == ("383799", 3)  # (74,599 + 692,999) / 2
    largest = run_compute(ComputeStep(id="C", operation="COMPUTE", expression="max($T1)"),
                          {"T1": investing.value}, {"T1": investing.quantities})
    assert largest.value == "-74599"  # comparing signed figures is not unclear


def compute(expression, read, first=0):
    """COMPUTE over the series `read` binds, from its figure `first` on."""
    return run_compute(ComputeStep(id="C", operation="COMPUTE", expression=expression),
                       {"T1": read.value[first:]}, {"T1": read.quantities[first:]})


def compute_refused(expression, read, first=0) -> ToolError:
    with pytest.raises(ToolError) as e:
        compute(expression, read, first)
    return e.value


def test_change_and_percent_change_are_between_the_two_periods_of_a_series():
    flows = series("operating cash flow", [doc("tatqa-185")])  # 223,630 then 283,710
    change = compute("change($T1)", flows)
    assert (change.value, change.quantity.scale) == ("60080", 3)  # the later less the earlier
    assert compute("round(percent_change($T1), 2)", flows).value == "26.87"
    newest_first = series("net cash provided by operating activities", [doc("tatqa-121")])
    assert compute("change($T1)", newest_first).value == "-835"  # FY2019 14,551 - FY2018 15,386
    # three periods: which two is unclear
    sales = series("cost of sales", [doc("tatqa-237")])
    assert len(sales.value) == 3
    e = compute_refused("change($T1)", sales)
    assert e.code == "UNCLEAR_ARITHMETIC" and "3 figures" in e.message
    # a change of figures written in parentheses may be of amounts or signed figures; a
    # relative change of two is the same either way
    investing = series("net cash used in investing activities", [doc("tatqa-185")])
    assert compute_refused("change($T1)", investing).code == "UNCLEAR_ARITHMETIC"
    assert compute("round(percent_change($T1), 2)", investing).value == "828.97"
    # one figure is no series; a relative change of percentages is unclear
    with pytest.raises(ToolError) as e:
        run_compute(ComputeStep(id="C", operation="COMPUTE", expression="change($T1)"),
                    {"T1": "283,710"}, {})
    assert e.value.code == "BAD_EXPRESSION" and "($B - $A)" in e.value.message
    margin = series("gross margin", [doc("tatqa-237")])  # 2018 and 2019 of three
    assert compute_refused("percent_change($T1)", margin, 1).code == "UNCLEAR_ARITHMETIC"
    assert compute("change($T1)", margin, 1).quantity.kind == "percent"  # in points


def test_a_five_year_summary_beside_a_three_year_statement_is_ambiguous():
    e = refused("net income", [TEN_K])
    assert e.code == "AMBIGUOUS" and "different periods" in e.message
    assert "Five Year Summary" in e.message and "CONSOLIDATED STATEMENTS OF INCOME" in e.message


def test_a_counted_series_is_of_a_table_of_that_many_periods():
    # Patriot's 10-K: net income in a five-year summary and a three-year statement
    three = series("net income", [TEN_K], period="all 3")
    five = series("net income", [TEN_K], period="all 5")
    assert len(three.value) == 3 and len(five.value) == 5
    # FY2016 to FY2018, earliest first, in both
    assert [q.amount for q in three.quantities] == [q.amount for q in five.quantities[2:]]
    assert "Five Year Summary" in five.note and "Five Year Summary" not in three.note
    e = refused("cost of sales", [doc("tatqa-237")], TABLES, "all 2")  # of 2017-2019
    assert e.code == "NOT_FOUND" and "in each of 2 periods" in e.message
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="revenue", period="all 3")
    assert check_row(step) == []
    assert [c for c, _ in check_row(step.model_copy(update={"period": "all 1"}))] == [
        "bad_period"]


def test_a_row_stated_in_one_period_only_is_not_found_saying_where_it_is():
    one_year = {"one": [table_from_rows([["", "2019"], ["Revenue", "1,200"]])],
                "two": [table_from_rows([["", "2019"], ["Revenue", "1,200"]]),
                        table_from_rows([["", "2019", "2018"], ["Revenue", "1,200", ""],
                                             ["Cost of revenue", "700", "650"]])]}
    for name in one_year:
        e = refused("revenue", [doc(name)], one_year)
        assert e.code == "NOT_FOUND" and "row 'Revenue'" in e.message, name
        assert "each of two or more periods" in e.message
    assert refused("goodwill impairment", [doc("tatqa-185")]).code == "NOT_FOUND"


def test_quarters_beside_years_are_no_series():
    mixed = {"m": [table_from_rows([["", "Q4 2019", "2019", "2018"],
                                    ["Revenue", "300", "1,200", "1,100"]])]}
    assert refused("revenue", [doc("m")], mixed).code == "NOT_FOUND"


def test_period_all_is_a_period_but_takes_no_fallback():
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="revenue", period="all")
    assert check_row(step) == []
    with_fallback = step.model_copy(update={"fallback": "0"})
    assert [code for code, _ in check_row(with_fallback)] == ["bad_field"]


def test_extract_in_every_period_then_mean_through_the_executors_tools(tmp_path):
    from shared.ingest import load_jsonl
    from shared.journey.steps import tool_result
    from shared.search import SqliteSearch

    rows = DATA["tatqa"]["185"]["table"]
    report = {"title": "Tatqa cash flows annual report 2018", "content": "Cash flows.",
              "tables": [{"title": "Cash flows", "rows": rows}]}
    (tmp_path / "report.jsonl").write_text(json.dumps(report) + "\n")
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add(load_jsonl(tmp_path / "report.jsonl"))
    steps = [GetStep(id="E1", operation="GET", source="Tatqa cash flows annual report 2018",
                     output_var="$DOC"),
             ExtractStep(id="E2", operation="EXTRACT", source="$DOC", row="operating cash flow",
                         period="all", output_var="$OCF"),
             ComputeStep(id="E3", operation="COMPUTE", expression="round(mean($OCF), 1)",
                         output_var="$AVG"),
             ComputeStep(id="E4", operation="COMPUTE", expression="change($OCF)",
                         output_var="$CHANGE")]
    inputs = {}
    for step in steps:
        base = {"action_id": f"q:{step.id}", "step_id": step.id, "operation": step.operation}
        result = tool_result(base, run_tool(step, inputs, backend), 0.0)
        stored = type(result).model_validate_json(result.model_dump_json())  # as Redis holds it
        inputs[step.output_var.lstrip("$")] = stored
    backend.close()
    assert inputs["OCF"].value == ["$223,630", "$283,710"]
    assert len(inputs["OCF"].quantities) == 2 and inputs["OCF"].document.doc_id
    assert inputs["AVG"].value == "253670.0"
    assert inputs["AVG"].quantity.scale == 3
    assert (inputs["CHANGE"].value, inputs["CHANGE"].quantity.scale) == ("60080", 3)


def test_two_tables_stating_one_series_in_two_ways_are_one_answer():
    # Patriot's revenues for fiscal 2017 and 2018, in a summary in millions beside the
    # statement in thousands: the same figures, so no ambiguity
    tables = {"p": [table_from_rows([["", "2018", "2017"], ["Revenues", "$114.1", "$112.2"]],
                                    title="Summary (in millions)"),
                    table_from_rows([["", "2018", "2017"], ["Revenues", "114,065", "112,165"]],
                                    title="Statements of income (in thousands)")]}
    both = series("revenues", [doc("p")], tables)
    assert len(both.value) == 2
    tables["p"][1] = table_from_rows([["", "2018", "2017"], ["Revenues", "114,065", "99,000"]],
                                     title="Statements of income (in thousands)")
    assert refused("revenues", [doc("p")], tables).code == "AMBIGUOUS"

"""The registry: one runner and one check per operation, inputs and evidence passed on,
user runners and their checks."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import (ComputeStep, Evidence, ExtractStep, GetStep, MergeStep, OPERATIONS,
                           SearchStep)
from shared.tools import registry
from shared.tools.base import ToolOutput
from shared.tools.registry import (CHECKS, RUNNERS, TOLERATES_FAILED_INPUTS, check_step, register,
                                   run_tool)

REPORT = Evidence(doc_id="q3", title="Tesla Q3 2023 Financial Report")
OTHER = Evidence(doc_id="q2", title="Tesla Q2 2023 Financial Report")


def test_every_plan_operation_has_a_runner():
    assert set(OPERATIONS) <= set(RUNNERS)
    assert TOLERATES_FAILED_INPUTS >= {"MERGE", "ARBITRATE"}


def test_get_then_extract_yields_the_value_with_the_documents_evidence(corpus):
    get = GetStep(id="E1", operation="GET", source="Tesla Q3 2023 Financial Report",
                  temporal_scope="2023-Q3", output_var="$R1")
    doc = run_tool(get, {}, corpus)
    fetched = registry_result(get, doc)
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1",
                       pattern=r"yield rate of (\d+\.\d+)%")
    out = run_tool(step, {"R1": fetched}, corpus)
    assert (out.value, out.document.title, out.inputs) == ("91.7", doc.document.title, ["q:E1"])


def test_extract_over_get_top_k_takes_the_first_document_that_matches(corpus):
    get = GetStep(id="E1", operation="GET", source="Q3 2023 Financial Report", top_k=5,
                  output_var="$R1")
    fetched = registry_result(get, run_tool(get, {}, corpus))
    assert fetched.documents[0].title == "Tesla Q3 2023 Financial Report"
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1",
                       pattern=r"yield rate of (\d+\.\d+)% at its Ohio")
    out = run_tool(step, {"R1": fetched}, corpus)
    assert out.value == "88.9" and out.document.title.startswith("Northwind")


def test_extract_over_search_snippets_cites_the_snippets_document(corpus):
    search = SearchStep(id="S1", operation="SEARCH", query="Voltara cell shipments GWh", top_k=3,
                        temporal_scope="2023-Q3")
    hits = registry_result(search, run_tool(search, {}, corpus))
    step = ExtractStep(id="E2", operation="EXTRACT", source="$S1", pattern=r"(\d+(?:\.\d+)?)\s*GWh")
    out = run_tool(step, {"S1": hits}, corpus)
    assert out.value == "38.4" and out.document.title.startswith("Voltara")


def test_get_substitutes_variables_in_its_source(corpus, ok):
    get = GetStep(id="E2", operation="GET", source="$CO Q3 2023 Financial Report")
    out = run_tool(get, {"CO": ok("E1", "Northwind Motors")}, corpus)
    assert out.document.title == "Northwind Motors Q3 2023 Financial Report"
    assert out.inputs == ["q:E1"]


def test_compute_over_one_input_carries_its_document(ok):
    step = ComputeStep(id="E3", operation="COMPUTE", expression="$Y - 92")
    out = run_tool(step, {"Y": ok("E2", "91.7", document=REPORT)}, None)
    assert (out.value, out.document, out.inputs) == ("-0.3", REPORT, ["q:E2"])


def test_compute_over_several_inputs_lists_their_documents(ok):
    step = ComputeStep(id="E3", operation="COMPUTE", expression="$A - $B")
    inputs = {"A": ok("E1", "91.7", document=REPORT), "B": ok("E2", "90.4", document=OTHER)}
    out = run_tool(step, inputs, None)
    assert out.value == "1.3" and out.documents == [REPORT, OTHER] and out.document is None
    assert out.inputs == ["q:E1", "q:E2"]


def test_merge_receives_failed_inputs_and_skips_them(ok, failed):
    step = MergeStep(id="M1", operation="MERGE", sources=["$A", "$B"])
    out = run_tool(step, {"A": failed("E1"), "B": ok("E2", "90.4")}, None)
    assert out.value == "90.4" and "skipped $A" in out.note


def test_other_operations_refuse_failed_inputs(failed):
    step = ComputeStep(id="E3", operation="COMPUTE", expression="$Y - 92")
    with pytest.raises(ToolError) as e:
        run_tool(step, {"Y": failed("E2", "NO_MATCH")}, None)
    assert e.value.code == "INPUT_FAILED" and "$Y (NO_MATCH)" in e.value.message


def test_a_catastrophic_pattern_ends_the_step_as_a_pattern_timeout(ok):
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", pattern=r"(a+)+$")
    with pytest.raises(ToolError) as e:
        run_tool(step, {"R1": ok("E1", "a" * 10_000 + "b", operation="GET")}, None)
    assert e.value.code == "PATTERN_TIMEOUT"


def test_an_unknown_operation_names_the_known_ones_and_how_to_register():
    class Step:
        id, operation = "X1", "TRANSLATE"

    with pytest.raises(ToolError) as e:
        run_tool(Step(), {}, None)
    assert e.value.code == "UNKNOWN_OPERATION" and "GET" in e.value.message
    assert "register(" in e.value.message


def test_a_user_runner_can_be_registered_for_a_new_operation(monkeypatch, failed):
    monkeypatch.setattr(registry, "RUNNERS", dict(RUNNERS))
    monkeypatch.setattr(registry, "TOLERATES_FAILED_INPUTS", set(TOLERATES_FAILED_INPUTS))

    class Step:
        id, operation = "X1", "COUNT_FAILED"

    def count_failed(step, inputs, backend):
        failures = sum(r.status == "error" for r in inputs.values())
        return ToolOutput(value=failures, confidence="counted")

    register("COUNT_FAILED", count_failed, tolerates_failed_inputs=True)
    assert registry.run_tool(Step(), {"A": failed("E1")}, None).value == 1


def test_every_plan_operation_checks_its_fields_with_its_own_tool():
    assert set(OPERATIONS) <= set(CHECKS)
    step = ComputeStep(id="C1", operation="COMPUTE", expression="$R1 +* 2", output_var="$R2")
    [(code, message)] = check_step(step)
    assert code == "bad_expression" and message.startswith("step C1's expression: ")


def test_a_user_check_reports_the_problems_of_its_operations_steps(monkeypatch):
    monkeypatch.setattr(registry, "RUNNERS", dict(RUNNERS))
    monkeypatch.setattr(registry, "CHECKS", dict(CHECKS))

    class Step:
        id, operation, language = "X1", "TRANSLATE", "Klingon"

    assert registry.check_step(Step()) == []  # no check registered: nothing to report
    register("TRANSLATE", lambda step, inputs, backend: ToolOutput(value="", confidence="x"),
             check=lambda step: [("bad_field", f"step {step.id}'s language is not one we speak")])
    assert registry.check_step(Step()) == [("bad_field", "step X1's language is not one we speak")]


def registry_result(step, out: ToolOutput):
    """The StepResult an executor would store for `out`."""
    from shared.models import StepResult

    return StepResult(action_id=f"q:{step.id}", step_id=step.id, operation=step.operation,
                      status="ok", value=out.value, confidence=out.confidence,
                      document=out.document, documents=out.documents)


# A real report table (TAT-QA): a plan written from the question "the non-vested shares
# vested in 2019 as a percentage of the total non-vested shares at December 31, 2019"
# names two rows; the first reads as "Non-vested at December 31, 2019" too
AWARDS = {"title": "Rufepis annual report 2019", "content": "Stock awards.", "tables": [{
    "title": "A summary of the Company’s non-vested restricted stock awards as of December "
             "31, 2019 and the changes during the year ended December 31, 2019 are as follows:",
    "rows": [["Non-vested awards", "Shares", "Weighted-Average Grant Date Fair Value"],
             ["Non-vested at December 31, 2018", "1,187,586", "$41.12"],
             ["Granted", "473,550", "$53.53"], ["Vested", "(365,223)", "$41.83"],
             ["Forfeited", "(12,632)", "$50.49"],
             ["Non-vested at December 31, 2019", "1,283,281", "$45.40"]]}]}


def _cells(tmp_path, rows: dict[str, tuple[str, str]], quantity: str | None = None) -> dict:
    """Each `name: (row, period)` read by EXTRACT from AWARDS, as the executor stores it."""
    import json

    from shared.ingest import load_jsonl
    from shared.journey.steps import tool_result
    from shared.search import SqliteSearch

    (tmp_path / "awards.jsonl").write_text(json.dumps(AWARDS) + "\n")
    backend = SqliteSearch(tmp_path / "search.db")
    backend.add(load_jsonl(tmp_path / "awards.jsonl"))
    get = GetStep(id="E1", operation="GET", source="Rufepis annual report 2019")
    inputs = {"DOC": tool_result(_base(get), run_tool(get, {}, backend), 0.0)}
    for n, (name, (row, period)) in enumerate(rows.items(), start=2):
        step = ExtractStep(id=f"E{n}", operation="EXTRACT", source="$DOC", row=row,
                           period=period, quantity=quantity)
        inputs[name] = tool_result(_base(step), run_tool(step, inputs, backend), 0.0)
    backend.close()
    return inputs


def _base(step) -> dict:
    return {"action_id": f"q:{step.id}", "step_id": step.id, "operation": step.operation}


def test_compute_refuses_two_variables_that_hold_one_cell(tmp_path):
    inputs = _cells(tmp_path, {"T1": ("non-vested shares", "2019-12-31"),
                               "T2": ("total non-vested shares", "2019-12-31")})
    assert inputs["T1"].value == inputs["T2"].value == "1,283,281"
    step = ComputeStep(id="E4", operation="COMPUTE", expression="round($T1 / $T2 * 100, 2)")
    with pytest.raises(ToolError) as e:
        run_tool(step, inputs, None)
    assert e.value.code == "SAME_CELL"
    assert "$T1 and $T2" in e.value.message and "Non-vested at December 31, 2019" in e.value.message


def test_compute_over_two_cells_runs_and_over_one_variable_twice_too(tmp_path):
    inputs = _cells(tmp_path, {"T1": ("shares granted", "2019"),
                               "T2": ("total non-vested shares", "2019-12-31"),
                               "T3": ("total non-vested shares", "2019-12-31")})
    step = ComputeStep(id="E5", operation="COMPUTE", expression="round($T1 / $T2 * 100, 2)")
    assert run_tool(step, inputs, None).value == "36.90"
    step = ComputeStep(id="E5", operation="COMPUTE", expression="$T2 - $T2")  # one variable
    assert run_tool(step, inputs, None).value == "0"
    with pytest.raises(ToolError) as e:  # two steps that ask for the very same cell
        run_tool(step.model_copy(update={"expression": "$T3 - $T2"}), inputs, None)
    assert e.value.code == "SAME_CELL"


"""ReWOO plan text: `#E1 = Tool[input]` lines become the same Plan as JSON."""

from __future__ import annotations

import pytest

from shared.errors import InputError, PlanError
from shared.plan.parse import parse_plan

TESLA = r"""Plan: Fetch Tesla's Q3 2023 report.
#E1 = Wikipedia[Tesla Q3 2023 Financial Report, temporal_scope=2023-Q3]
Plan: Find the battery yield in it.
#E2 = Extract[#E1, battery yield rate.*?(\d+\.\d+)%, fallback=unknown]
Plan: Compare it with the 92% target.
#E3 = Calculator[#E2 - 92]
Answer: Battery yield was {{ E2 }}%{% if E3 < 0 %}, below the 92% target{% endif %}.
"""


def problems_of(text: str, **kwargs) -> list:
    with pytest.raises(PlanError) as e:
        parse_plan(text, **kwargs)
    return e.value.problems


def test_each_evidence_line_becomes_a_step_and_hash_references_become_variables():
    plan = parse_plan(TESLA)
    assert [(s.id, s.operation, s.var) for s in plan.steps] == [
        ("E1", "GET", "E1"), ("E2", "EXTRACT", "E2"), ("E3", "COMPUTE", "E3")]
    assert plan.steps[0].temporal_scope == "2023-Q3"
    assert plan.steps[1].source == "$E1"
    assert plan.steps[1].pattern == r"battery yield rate.*?(\d+\.\d+)%"
    assert plan.steps[1].fallback == "unknown"
    assert plan.steps[2].expression == "$E2 - 92"
    assert plan.answer.startswith("Battery yield was {{ E2 }}%")


def test_every_operation_has_a_bracket_form():
    plan = parse_plan(r"""Domain: finance
#E1 = Google[Tesla Q3 2023 revenue, top_k=3]
#E2 = Regex[#E1, revenue of \$(\d[\d,]*(?:\.\d+)?) (?:billion|million), quantity=money]
#E3 = Bing[Northwind Q3 2023 revenue]
#E4 = Extract[#E3, "revenue of \$(\d+(?:\.\d+)?)"]
#E5 = Calculator[#E2 + #E4]
#E6 = IF[#E5 > 10 ? more than ten : ten or less]
#E7 = Check[#E2, min=0, max=1000, type=money, source_type=official_report|news]
#E8 = Merge[#E2, #E4, strategy=list]
#E9 = Filter[#E8, $item > 5]
#E10 = Filter[#E1, pattern=Q[34] 2023]
#E11 = Arbitrate[#E2, #E4, prefer=source_type == "official_report"|newest]
""")
    steps = {s.id: s for s in plan.steps}
    assert plan.domain == "finance"
    assert (steps["E1"].operation, steps["E1"].top_k) == ("SEARCH", 3)
    assert steps["E2"].pattern.endswith("(?:billion|million)") and steps["E2"].quantity == "money"
    assert steps["E4"].pattern == r"revenue of \$(\d+(?:\.\d+)?)"  # the quotes are not the pattern's
    assert (steps["E6"].condition, steps["E6"].then, steps["E6"].else_) == (
        "$E5 > 10", "more than ten", "ten or less")
    assert (steps["E7"].value, steps["E7"].min, steps["E7"].source_type) == (
        "$E2", 0, ["official_report", "news"])
    assert (steps["E8"].sources, steps["E8"].strategy) == (["$E2", "$E4"], "list")
    assert steps["E9"].condition == "$item > 5"
    assert steps["E10"].pattern == "Q[34] 2023"
    assert steps["E11"].prefer == ['source_type == "official_report"', "newest"]


def test_a_step_written_at_the_end_of_its_plan_line_is_read_too():
    plan = parse_plan("Plan: fetch it. #E1 = Lookup[Tesla report]\n"
                      "Plan: take the yield. #E2 = Extract[#E1, yield (\\d+)%]")
    assert [s.operation for s in plan.steps] == ["GET", "EXTRACT"]


def test_an_unknown_tool_names_the_step_and_the_known_tools():
    [problem] = problems_of("#E1 = Wikipedia[Tesla]\n#E2 = LLM[Summarize #E1]")
    assert (problem.step, problem.code) == ("E2", "unknown_operation")
    assert "'LLM'" in problem.message and "wikipedia" in problem.message


def test_a_step_reading_an_unknown_tool_step_is_not_reported_as_well():
    problems = problems_of("#E1 = LLM[Tesla]\n#E2 = Calculator[#E1 * 2]")
    assert [(p.step, p.code) for p in problems] == [("E1", "unknown_operation")]


def test_a_line_that_is_not_a_step_is_bad_syntax_naming_its_line_number():
    problems = problems_of("Plan: fetch.\n#E1 = Wikipedia[Tesla]\nthen extract the yield\n"
                           "#E2 = Extract[#E1, (\\d+)%")
    assert [(p.step, p.code) for p in problems] == [(None, "bad_syntax"), ("E2", "bad_syntax")]
    assert problems[0].message.startswith("line 3:")
    assert problems[1].message.startswith("line 4:") and "square brackets" in problems[1].message


def test_a_missing_field_names_the_bracket_form_of_the_operation():
    [problem] = problems_of("#E1 = Wikipedia[Tesla]\n#E2 = Extract[#E1]")
    assert problem.code == "bad_field" and "give `pattern`" in problem.message
    assert "EXTRACT[#E1, pattern" in problem.message and "line 2" in problem.message


def test_a_users_tools_table_replaces_the_default_but_operations_still_resolve():
    plan = parse_plan("#E1 = KB[Tesla]\n#E2 = extract[#E1, (\\d+)%]", tools={"kb": "get"})
    assert [s.operation for s in plan.steps] == ["GET", "EXTRACT"]
    [problem] = problems_of("#E1 = Wikipedia[Tesla]", tools={"kb": "GET"})
    assert problem.code == "unknown_operation" and "kb" in problem.message


def test_a_tools_table_mapping_to_no_operation_is_an_input_error_naming_the_entry():
    with pytest.raises(InputError, match="'kb'.*'FETCH'"):
        parse_plan("#E1 = KB[Tesla]", tools={"kb": "FETCH"})


def test_code_fences_and_blank_lines_around_the_plan_are_ignored():
    plan = parse_plan("```\n\n#E1 = Wikipedia[Tesla]\n\n#E2 = Extract[#E1, (\\d+)%]\n```")
    assert len(plan.steps) == 2


def test_an_extract_reads_a_table_cell_by_row_and_period_commas_in_the_row_kept():
    plan = parse_plan("#E1 = Lookup[Patriot Transportation Holding 2018 Form 10-K]\n"
                      "#E2 = Extract[#E1, row=purchases of property, plant and equipment, "
                      "period=FY2018, quantity=money]\n"
                      "#E3 = Extract[#E1, row=\"Net cash provided by (used in) operating "
                      "activities\", period=2018-10-01..2019-09-30]")
    capex, flow = plan.steps[1], plan.steps[2]
    assert (capex.source, capex.row, capex.period, capex.quantity, capex.pattern) == (
        "$E1", "purchases of property, plant and equipment", "FY2018", "money", None)
    assert flow.row == "Net cash provided by (used in) operating activities"
    assert flow.period == "2018-10-01..2019-09-30"


def test_a_period_without_a_row_names_both_ways_of_extracting():
    [problem] = problems_of("#E1 = Wikipedia[Tesla]\n#E2 = Extract[#E1, period=FY2018]")
    assert problem.code == "bad_field" and "row=line item, period=FY2018" in problem.message

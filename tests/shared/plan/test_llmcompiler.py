"""LLMCompiler plan text: numbered `N. tool(args)` calls become the same Plan as JSON."""

from __future__ import annotations

import pytest

from shared.errors import PlanError
from shared.plan.parse import parse_plan


def problems_of(text: str) -> list:
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    return e.value.problems


def test_numbered_calls_become_steps_and_dollar_numbers_become_variables():
    plan = parse_plan('Thought: find the revenue, then compare.\n'
                      '1. search("Tesla Q3 2023")\n'
                      '2. extract($1, "revenue of \\$(\\d+(?:\\.\\d+)?)")\n'
                      '3. math("$2 - 92")\n'
                      '4. join()<END_OF_PLAN>')
    assert [(s.id, s.operation) for s in plan.steps] == [
        ("E1", "SEARCH"), ("E2", "EXTRACT"), ("E3", "COMPUTE")]
    assert plan.steps[1].source == "$E1"
    assert plan.steps[1].pattern == r"revenue of \$(\d+(?:\.\d+)?)"
    assert plan.steps[2].expression == "$E2 - 92"


def test_braced_references_in_math_read_both_steps_unlike_the_langgraph_tutorial():
    plan = parse_plan('1. search("Tesla Q3 2023 revenue")\n'
                      '2. search("Northwind Q3 2023 revenue")\n'
                      '3. extract($1, "revenue of \\\\$(\\\\d+(?:\\\\.\\\\d+)?)")\n'
                      '4. extract($2, "revenue of \\\\$(\\\\d+(?:\\\\.\\\\d+)?)")\n'
                      '5. math("${3} + ${4}")\n'
                      '6. join()')
    assert plan.steps[4].expression == "$E3 + $E4"
    assert plan.steps[4].references() == ["E3", "E4"]


def test_arguments_may_be_positional_keyword_lists_and_numbers():
    plan = parse_plan('1. get("Tesla Q3 2023 report", temporal_scope="2023-Q3", top_k=2)\n'
                      "2. search('Northwind Q3 2023', top_k=3)\n"
                      '3. extract($1, r"yield (\\d+)%", "unknown")\n'
                      '4. extract(${2}, pattern="yield (\\d+)%", quantity="percent")\n'
                      '5. if("$3 > $4", "Tesla", else_="Northwind")\n'
                      '6. validate($3, min=0, max=100, source_type="official_report")\n'
                      '7. merge([$3, $4], strategy="unique")\n'
                      '8. filter($7, "$item > 90")\n'
                      "9. arbitrate($3, $4, prefer=['source_type == \"official_report\"', "
                      "'newest'])")
    steps = {s.id: s for s in plan.steps}
    assert (steps["E1"].temporal_scope, steps["E1"].top_k) == ("2023-Q3", 2)
    assert (steps["E3"].pattern, steps["E3"].fallback) == (r"yield (\d+)%", "unknown")
    assert (steps["E4"].source, steps["E4"].quantity) == ("$E2", "percent")
    assert (steps["E5"].then, steps["E5"].else_) == ("Tesla", "Northwind")
    assert steps["E6"].source_type == ["official_report"]
    assert steps["E7"].sources == ["$E3", "$E4"]
    assert steps["E9"].prefer == ['source_type == "official_report"', "newest"]


def test_a_call_after_join_is_bad_syntax_naming_its_line():
    problems = problems_of('1. search("Tesla")\n2. join()\n3. search("Northwind")')
    assert [(p.step, p.code) for p in problems] == [(None, "bad_syntax")]
    assert problems[0].message.startswith("line 3:") and "join()" in problems[0].message


def test_arguments_that_are_not_literals_are_bad_syntax_with_the_step_named():
    [problem] = problems_of('1. search(tesla_query)\n2. math("$1 + 1")')
    assert (problem.step, problem.code) == ("E1", "bad_syntax")
    assert 'search("Tesla Q3 2023")' in problem.message


def test_too_many_plain_arguments_name_the_fields_the_tool_takes():
    [problem] = problems_of('1. math("1 + 1", "2 + 2")')
    assert problem.code == "bad_field" and "expression" in problem.message


def test_an_unknown_tool_is_an_unknown_operation_naming_the_known_tools():
    [problem] = problems_of('1. llm("Summarize Tesla")')
    assert (problem.step, problem.code) == ("E1", "unknown_operation")
    assert "'llm'" in problem.message and "search" in problem.message


def test_an_extract_reads_a_table_cell_by_row_and_period_keywords():
    plan = parse_plan('1. get("Patriot Transportation Holding 2018 Form 10-K")\n'
                      '2. extract($1, row="purchases of property, plant and equipment", '
                      'period="FY2018", quantity="money")\n'
                      '3. math("$2 * -1")\n4. join()')
    capex = plan.steps[1]
    assert (capex.source, capex.row, capex.period, capex.quantity, capex.pattern) == (
        "$E1", "purchases of property, plant and equipment", "FY2018", "money", None)
    assert plan.steps[2].expression == "$E2 * -1"

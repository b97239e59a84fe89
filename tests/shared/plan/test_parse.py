"""parse_plan and load_plan_file: plan JSON in, a checked Plan or every problem out."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.errors import InputError, PlanError
from shared.models import ComputeStep, ExtractStep, GetStep
from shared.plan.parse import load_plan_file, parse_plan

PLAN_EXAMPLE = r"""{"domain": "finance",
 "steps": [
  {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report", "temporal_scope": "2023-Q3", "output_var": "$R1"},
  {"id": "E2", "operation": "EXTRACT", "source": "$R1", "pattern": "battery yield rate.*?(\\d+\\.\\d+)%", "output_var": "$Y", "fallback": "unknown"},
  {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}],
 "answer": "Battery yield was {{ Y }}%{% if GAP < 0 %}, below the 92% target{% endif %}."}"""


def problems_of(source, **kwargs) -> list:
    with pytest.raises(PlanError) as e:
        parse_plan(source, **kwargs)
    return e.value.problems


def test_the_design_example_plan_parses_into_typed_steps():
    plan = parse_plan(PLAN_EXAMPLE)
    assert [type(s) for s in plan.steps] == [GetStep, ExtractStep, ComputeStep]
    assert plan.steps[1].pattern == r"battery yield rate.*?(\d+\.\d+)%"
    assert [s.var for s in plan.steps] == ["R1", "Y", "GAP"]


def test_bytes_and_an_already_decoded_dict_are_accepted_too():
    assert parse_plan(PLAN_EXAMPLE.encode()) == parse_plan(json.loads(PLAN_EXAMPLE))


def test_a_plan_with_three_bad_steps_reports_three_problems_naming_each_step():
    problems = problems_of({"steps": [
        {"id": "E1", "operation": "FETCH", "source": "Tesla"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R1"},
        {"id": "E3", "operation": "COMPUTE", "expression": "1", "colour": "red"},
    ]})
    assert [p.step for p in problems] == ["E1", "E2", "E3"]
    assert [p.code for p in problems] == ["unknown_operation", "bad_field", "bad_field"]


def test_an_unknown_operation_names_the_known_ones():
    [problem] = problems_of({"steps": [{"id": "E1", "operation": "get", "source": "x"}]})
    assert problem.code == "unknown_operation"
    assert ("GET, SEARCH, EXTRACT, COMPUTE, IF, VALIDATE, MERGE, FILTER, ARBITRATE"
            in problem.message)
    assert "upper case" in problem.message


def test_missing_and_extra_fields_are_named_with_the_fields_the_step_takes():
    [problem] = problems_of({"steps": [{"id": "E1", "operation": "COMPUTE",
                                        "formula": "$A + 1"}]})
    assert "'expression' is missing" in problem.message
    assert "'formula' is not allowed" in problem.message
    assert "COMPUTE steps take id, operation, expression" in problem.message


def test_an_extract_names_its_two_ways_when_it_has_neither_pattern_nor_row():
    [problem] = problems_of({"steps": [{"id": "E1", "operation": "EXTRACT", "source": "$R"}]})
    assert "give `pattern`" in problem.message and "or `row`" in problem.message


def test_a_step_without_a_usable_id_is_named_by_its_position():
    problems = problems_of({"steps": [{"id": "1st", "operation": "GET", "source": "x"}, 42]})
    assert [p.step for p in problems] == ["steps[0]", "steps[1]"]


def test_plan_level_fields_are_checked_alongside_the_steps():
    problems = problems_of({"domain": 3, "steps": [{"id": "E1", "operation": "GET",
                                                    "source": "x"}], "notes": "hi"})
    assert {p.step for p in problems} == {None}
    assert any("'notes' is not allowed" in p.message for p in problems)
    assert any("'domain'" in p.message for p in problems)


def test_a_plan_without_steps_says_what_steps_look_like():
    [problem] = problems_of({"answer": "hi"})
    assert "'steps'" in problem.message and '"operation"' in problem.message


def test_a_json_syntax_error_names_its_line_and_column():
    with pytest.raises(PlanError) as e:
        parse_plan('{"steps": [\n  {"id": "E1",, }]}')
    assert "line 2, column 15" in str(e.value)
    assert e.value.problems[0].code == "bad_json"


def test_a_plan_that_parses_still_gets_its_static_checks():
    plan = json.loads(PLAN_EXAMPLE)
    plan["steps"][2]["expression"] = "$YIELD - 92"
    [problem] = problems_of(plan)
    assert (problem.step, problem.code) == ("E3", "undefined_variable")


def test_a_missing_plan_file_is_an_input_error_naming_the_path(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(InputError, match="nope.json"):
        load_plan_file(path)


def test_a_plan_file_loads_and_its_problems_name_the_file(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(PLAN_EXAMPLE)
    bad.write_text('{"steps": []}')
    assert load_plan_file(good) == parse_plan(PLAN_EXAMPLE)
    with pytest.raises(PlanError, match="bad.json"):
        load_plan_file(bad)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80) | st.binary(max_size=80))
def test_any_text_either_parses_or_raises_a_plan_error(source):
    try:
        parse_plan(source)
    except PlanError:
        pass


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=4),
    max_leaves=12,
)
STEPISH = st.fixed_dictionaries(
    {"id": st.sampled_from(["E1", "E2", "1x", ""]) | JSON,
     "operation": st.sampled_from(["GET", "EXTRACT", "COMPUTE", "get", "FOO"]) | JSON},
    optional={"source": st.sampled_from(["$E1", "$R1", "doc"]) | JSON,
              "pattern": st.sampled_from(["(x)", "(", "x"]) | JSON,
              "expression": st.sampled_from(["$E1 + 1", "1/", "x"]) | JSON,
              "output_var": st.sampled_from(["$R1", "bad var"]) | JSON,
              "temporal_scope": st.sampled_from(["2023-Q3", "2023-Q9"]) | JSON},
)


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({"steps": st.lists(STEPISH, max_size=4) | JSON},
                             optional={"answer": st.text(max_size=20) | JSON,
                                       "domain": JSON}))
def test_any_plan_shaped_dict_either_parses_or_raises_a_plan_error(source):
    try:
        parse_plan(source)
    except PlanError as e:
        assert e.problems


def test_a_plan_with_an_unknown_operation_still_reports_problems_in_the_other_steps():
    with pytest.raises(PlanError) as info:
        parse_plan({"steps": [
            {"id": "E1", "operation": "FETCH", "source": "x", "output_var": "$A"},
            {"id": "E2", "operation": "EXTRACT", "source": "$A", "pattern": "no group",
             "output_var": "$B"},
            {"id": "E3", "operation": "COMPUTE", "expression": "$NOPE + 1"}]})
    codes = {(p.step, p.code) for p in info.value.problems}
    assert codes == {("E1", "unknown_operation"), ("E2", "capture_groups"),
                     ("E3", "undefined_variable")}


def test_a_plan_whose_steps_are_out_of_order_is_reordered_not_rejected():
    data = json.loads(PLAN_EXAMPLE)
    data["steps"].reverse()
    plan = parse_plan(data)
    assert [s.id for s in plan.steps] == ["E1", "E2", "E3"]


def test_parse_plan_rejects_a_plan_longer_than_max_steps():
    assert len(parse_plan(PLAN_EXAMPLE, max_steps=3).steps) == 3
    [problem] = problems_of(PLAN_EXAMPLE, max_steps=2)
    assert (problem.step, problem.code) == (None, "too_many_steps")


def test_a_text_plan_without_steps_says_how_to_write_one():
    [problem] = problems_of("Plan: I will look it up.")
    assert problem.code == "bad_field" and "#E1 = Wikipedia[" in problem.message


MARK = "Zq9x"
"""Text no message of Chordal's own contains: a problem that holds it quoted the input
(names the plan gives, such as step ids, variables, tools and the constructs of an
expression, are named, not quoted)."""


@pytest.mark.parametrize("source", [
    {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla", "temporal_scope": f"{MARK}-Q5",
         "output_var": "$R"},
        {"id": "E2", "operation": "EXTRACT", "source": f"{MARK} report",
         "pattern": f"{MARK} (\\d+", "output_var": "$Y"},
        {"id": "E3", "operation": "EXTRACT", "source": "$R", "pattern": f"{MARK} \\d+",
         "output_var": "$Y3"},
        {"id": "E4", "operation": "COMPUTE", "expression": f"$Y + ({MARK}", "output_var": "$G"},
        {"id": "E5", "operation": "SEARCH", "query": "Tesla", "output_var": "$H"},
        {"id": "E6", "operation": "FILTER", "source": f"{MARK}", "condition": f"$item > '{MARK}",
         "pattern": f"(?:{MARK}{{8000}}){{1000}}", "output_var": "$F"},
        {"id": "E7", "operation": "VALIDATE", "value": "$Y3", "pattern": f"{MARK}[",
         "output_var": "$V"},
        {"id": "E8", "operation": "ARBITRATE", "sources": ["$Y", f"{MARK}"],
         "prefer": [f"{MARK} first"], "output_var": "$B"},
        {"id": "E9", "operation": f"{MARK} it", "source": "x"},
        {"id": "E10", "operation": "GET", "source": "Tesla", "output_var": f"{MARK} var"}]},
    f"#E1 = Wikipedia[Tesla]\n{MARK} is no step\n#E2 = Extract[#E1, {MARK} (\\d+]\n",
    f'1. search("Tesla")\n{MARK} is no call\n2. extract($1, "{MARK} (\\\\d+")\njoin()\n'
    f'3. search("{MARK}")\n',
], ids=["json", "rewoo", "llmcompiler"])
def test_no_problem_quotes_the_text_the_plan_gave(source):
    problems = problems_of(source)
    assert len(problems) >= 2
    for problem in problems:
        assert MARK not in problem.message, problem


def test_a_step_that_does_not_parse_with_a_variable_named_in_non_ascii_digits_is_a_plan_error():
    # `\w` would take `¹` for a digit; the model's own rule refuses it
    with pytest.raises(PlanError) as info:
        parse_plan({"steps": [{"id": "E1", "operation": "FETCH", "output_var": "A¹"}]})
    assert info.value.problems

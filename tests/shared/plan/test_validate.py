"""validate_plan and check_plan: the static checks, each message fit to send to an LLM."""

from __future__ import annotations

import pytest

from shared.errors import PlanError
from shared.models import Plan
from shared.plan.validate import check_plan, validate_plan

GET = {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
       "temporal_scope": "2023-Q3", "output_var": "$R1"}
EXTRACT = {"id": "E2", "operation": "EXTRACT", "source": "$R1",
           "pattern": r"battery yield rate.*?(\d+\.\d+)%", "output_var": "$Y"}
COMPUTE = {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}
ANSWER = "Battery yield was {{ Y }}%{% if GAP < 0 %}, below the 92% target{% endif %}."


def plan(*steps: dict, answer: str | None = ANSWER) -> Plan:
    return Plan.model_validate({"steps": list(steps), "answer": answer})


def codes(p: Plan) -> list[tuple[str | None, str]]:
    return [(problem.step, problem.code) for problem in validate_plan(p)]


def only_problem(p: Plan):
    [problem] = validate_plan(p)
    return problem


def test_the_design_example_has_no_problems_and_passes_check_plan():
    p = plan(GET, EXTRACT, COMPUTE)
    assert validate_plan(p) == []
    assert check_plan(p) is p


def test_a_reused_step_id_is_a_duplicate_id():
    assert codes(plan(GET, EXTRACT, {**COMPUTE, "id": "E2"})) == [("E2", "duplicate_id")]


def test_two_steps_binding_one_variable_is_a_duplicate_variable():
    problem = only_problem(plan(GET, EXTRACT, {**COMPUTE, "output_var": "$Y"}, answer=None))
    assert problem.code == "duplicate_variable"
    assert "E2 already binds" in problem.message


def test_reading_a_variable_no_earlier_step_binds_names_the_variables_defined_so_far():
    problem = only_problem(plan(GET, EXTRACT, {**COMPUTE, "expression": "$YIELD - 92"}))
    assert (problem.step, problem.code) == ("E3", "undefined_variable")
    assert "$YIELD" in problem.message
    assert "defined at this point: $R1, $Y" in problem.message


def test_a_variable_bound_only_by_a_later_step_is_a_forward_reference_naming_the_fix():
    problem = only_problem(plan(GET, COMPUTE, EXTRACT))
    assert (problem.step, problem.code) == ("E3", "forward_reference")
    assert "$Y" in problem.message and "before E3" in problem.message


def test_a_pattern_that_does_not_compile_reports_the_compiler_error():
    problem = only_problem(plan(GET, {**EXTRACT, "pattern": r"yield (\d+"}, COMPUTE))
    assert problem.code == "bad_pattern"
    assert "missing )" in problem.message


@pytest.mark.parametrize("pattern, ok", [
    (r"yield (\d+)", True),
    (r"yield (?P<value>\d+)", True),
    (r"(?:battery|cell) yield (\d+)", True),
    (r"yield \d+", False),
    (r"(battery|cell) yield (\d+)", False),
    (r"(?P<kind>\w+) yield (?P<value>\d+)", False),
])
def test_a_pattern_needs_exactly_one_capture_group_named_or_not(pattern, ok):
    found = codes(plan(GET, {**EXTRACT, "pattern": pattern}, COMPUTE))
    assert found == ([] if ok else [("E2", "capture_groups")])


@pytest.mark.parametrize("pattern", [r"capital expenditures.*?([\d,]+)", r"yield ([\d.,]*)",
                                     r"revenue of \$([\d.]+) million"])
def test_a_number_group_that_can_match_no_digit_is_a_problem_naming_step_and_field(pattern):
    problem = only_problem(plan(GET, {**EXTRACT, "pattern": pattern}, COMPUTE))
    assert (problem.step, problem.code) == ("E2", "number_group")
    assert "step E2's pattern" in problem.message and "without a digit" in problem.message
    assert pattern not in problem.message


@pytest.mark.parametrize("pattern", [r"capital expenditures.*?(\d[\d,]*)",
                                     r"yield (\d+(?:\.\d+)?)%", r"CEO is (.+?)\.",
                                     r"fiscal (\d{4})", r"(\$\d[\d,]*(?:\.\d+)? (?:million|billion))"])
def test_a_group_that_needs_a_digit_or_reads_text_is_no_problem(pattern):
    assert codes(plan(GET, {**EXTRACT, "pattern": pattern}, COMPUTE)) == []


def test_extract_from_a_title_instead_of_a_get_output_is_not_a_document():
    problem = only_problem(plan(GET, {**EXTRACT, "source": "Tesla report"}, COMPUTE))
    assert problem.code == "not_a_document"
    assert "$R1" in problem.message


def test_extract_from_a_computed_value_is_not_a_document():
    steps = (GET, EXTRACT, COMPUTE, {**EXTRACT, "id": "E4", "source": "${GAP}",
                                     "output_var": "$Z"})
    problem = only_problem(plan(*steps))
    assert (problem.step, problem.code) == ("E4", "not_a_document")
    assert "E3 (COMPUTE)" in problem.message


def test_an_expression_that_does_not_parse_is_a_bad_expression_naming_the_construct():
    problem = only_problem(plan(GET, EXTRACT, {**COMPUTE, "expression": "$Y.__class__"}))
    assert problem.code == "bad_expression"
    assert "attribute access" in problem.message


@pytest.mark.parametrize("scope", ["2023", "2023-Q3", "2023-H1", "2023-07", "2023-07-01",
                                   "2023-07-01..2023-09-30"])
def test_every_documented_temporal_scope_form_is_accepted(scope):
    assert validate_plan(plan({**GET, "temporal_scope": scope}, EXTRACT, COMPUTE)) == []


@pytest.mark.parametrize("scope", ["Q3 2023", "2023-Q5", "last year", "2023-09-30..2023-07-01"])
def test_a_temporal_scope_of_another_form_is_a_bad_scope(scope):
    problem = only_problem(plan({**GET, "temporal_scope": scope}, EXTRACT, COMPUTE))
    assert (problem.step, problem.code) == ("E1", "bad_scope")


def test_an_answer_template_that_does_not_parse_is_a_bad_template_with_a_hint():
    problem = only_problem(plan(GET, EXTRACT, COMPUTE, answer="Yield was {{ $Y }}%"))
    assert (problem.step, problem.code) == (None, "bad_template")
    assert "{{ Y }}" in problem.message


def test_an_answer_template_using_a_variable_no_step_binds_is_a_bad_template():
    problem = only_problem(plan(GET, EXTRACT, COMPUTE, answer="{{ Y }} vs {{ TARGET }}"))
    assert problem.code == "bad_template"
    assert "TARGET" in problem.message and "R1, Y, GAP" in problem.message


def test_template_loop_variables_jinja_globals_and_render_context_are_not_plan_variables():
    answer = ("{% for i in range(2) %}{{ i }}{{ loop.index }}{% endfor %}{{ Y }}"
              "{{ question }}{% for v in values %}{{ v.value }}{% endfor %}{{ missing }}")
    assert validate_plan(plan(GET, EXTRACT, COMPUTE, answer=answer)) == []


def test_check_plan_raises_one_plan_error_carrying_every_problem():
    bad = plan({**GET, "temporal_scope": "soon"}, {**EXTRACT, "pattern": "x"},
               {**COMPUTE, "expression": "$Q +"})
    with pytest.raises(PlanError) as e:
        check_plan(bad)
    assert str(e.value).startswith("plan is invalid: 4 problems")
    assert [p.step for p in e.value.problems] == ["E1", "E2", "E3", "E3"]


def test_steps_that_read_each_other_are_one_cycle_naming_the_loop():
    a = {"id": "E4", "operation": "COMPUTE", "expression": "$B + 1", "output_var": "$A"}
    b = {"id": "E5", "operation": "COMPUTE", "expression": "$A + 1", "output_var": "$B"}
    [problem] = validate_plan(plan(GET, EXTRACT, COMPUTE, a, b))
    assert (problem.step, problem.code) == ("E4", "cycle")
    assert "E4 → E5 → E4" in problem.message and "E4 reads $B, E5 reads $A" in problem.message


def test_a_step_reading_its_own_output_is_a_cycle():
    problem = only_problem(plan(GET, EXTRACT, {**COMPUTE, "expression": "$GAP - 92"}))
    assert (problem.step, problem.code) == ("E3", "cycle")
    assert "its own output" in problem.message


def test_more_steps_than_allowed_is_too_many_steps_for_the_whole_plan():
    steps = [GET, EXTRACT, COMPUTE]
    assert validate_plan(plan(*steps), max_steps=3) == []
    [problem] = validate_plan(plan(*steps), max_steps=2)
    assert (problem.step, problem.code) == (None, "too_many_steps")
    assert "3 steps" in problem.message and "2 allowed" in problem.message


SEARCH = {"id": "S1", "operation": "SEARCH", "query": "Tesla battery yield 2023",
          "output_var": "$HITS"}


@pytest.mark.parametrize("step, code", [
    ({"id": "E4", "operation": "COMPUTE", "expression": "$R1 * 2"}, "type_mismatch"),
    ({"id": "E4", "operation": "IF", "condition": "$HITS > 2", "then": "many"}, "type_mismatch"),
    ({"id": "E4", "operation": "VALIDATE", "value": "$R1", "min": 0}, "type_mismatch"),
    ({"id": "E4", "operation": "FILTER", "source": "$Y", "condition": "$item > 1"},
     "type_mismatch"),
    ({"id": "E4", "operation": "FILTER", "source": "$R1", "pattern": "yield"}, "type_mismatch"),
    ({"id": "E4", "operation": "EXTRACT", "source": "$Y", "pattern": "(x)"}, "not_a_document"),
])
def test_a_step_reading_a_kind_of_value_it_cannot_use_is_reported(step, code):
    problem = only_problem(plan(GET, SEARCH, EXTRACT, COMPUTE, step))
    assert (problem.step, problem.code) == ("E4", code)


@pytest.mark.parametrize("step", [
    {"id": "E4", "operation": "EXTRACT", "source": "$HITS", "pattern": "yield (\\d+)%"},
    {"id": "E4", "operation": "FILTER", "source": "$HITS", "pattern": "yield"},
    {"id": "E4", "operation": "VALIDATE", "value": "$Y", "min": 0, "max": 100},
    {"id": "E4", "operation": "IF", "condition": "$GAP < 0", "then": "$Y", "else": "n/a"},
    {"id": "E4", "operation": "MERGE", "sources": ["$R1", "$HITS"], "strategy": "list"},
])
def test_a_step_reading_a_kind_of_value_it_can_use_passes(step):
    assert validate_plan(plan(GET, SEARCH, EXTRACT, COMPUTE, step)) == []


def test_a_list_from_merge_or_a_multi_document_get_may_be_filtered():
    merge = {"id": "E4", "operation": "MERGE", "sources": ["$Y", "$GAP"], "strategy": "list",
             "output_var": "$BOTH"}
    top3 = {**GET, "id": "E5", "top_k": 3, "output_var": "$DOCS"}
    filters = [{"id": "E6", "operation": "FILTER", "source": "$BOTH", "condition": "$item > 0"},
               {"id": "E7", "operation": "FILTER", "source": "$DOCS", "pattern": "yield"}]
    assert validate_plan(plan(GET, EXTRACT, COMPUTE, merge, top3, *filters)) == []


@pytest.mark.parametrize("step, code, words", [
    ({"id": "E4", "operation": "IF", "condition": "$GAP <", "then": "x"}, "bad_expression",
     "condition"),
    ({"id": "E4", "operation": "VALIDATE", "value": "$Y", "pattern": "(\\d+"}, "bad_pattern",
     "missing )"),
    ({"id": "E4", "operation": "VALIDATE", "value": "$Y", "min": 100, "max": 90}, "bad_field",
     "swap"),
    ({"id": "E4", "operation": "FILTER", "source": "$HITS"}, "bad_field", "condition"),
    ({"id": "E4", "operation": "FILTER", "source": "$HITS", "condition": "$item >"},
     "bad_expression", "condition"),
    ({"id": "E4", "operation": "ARBITRATE", "sources": ["$Y", "$GAP"], "prefer": ["latest"]},
     "bad_rule", "newest"),
    ({"id": "E4", "operation": "MERGE", "sources": ["$Y", "Tesla"]}, "bad_field", "sources[1]"),
])
def test_the_new_operations_fields_are_checked(step, code, words):
    problem = only_problem(plan(GET, SEARCH, EXTRACT, COMPUTE, step))
    assert (problem.step, problem.code) == ("E4", code)
    assert words in problem.message


@pytest.mark.parametrize("rule", ['source_type == "official_report"', "source_type=='news'",
                                  "newest", "oldest", "majority"])
def test_every_documented_arbitrate_rule_is_accepted(rule):
    step = {"id": "E4", "operation": "ARBITRATE", "sources": ["$Y", "$GAP"], "prefer": [rule]}
    assert validate_plan(plan(GET, EXTRACT, COMPUTE, step)) == []


ROW = {"id": "E2", "operation": "EXTRACT", "source": "$R1", "row": "capital expenditure",
       "period": "FY2018", "quantity": "money", "output_var": "$Y"}


@pytest.mark.parametrize("period", ["FY2018", "2018", "fiscal 2018", "FY18", "2019-Q3",
                                    "Q3 2019", "Q3 FY2019", "FY2019-Q3", "December 31, 2018",
                                    "2018-12-31", "2018-10-01..2019-09-30", "Q3"])
def test_an_extract_by_row_with_a_period_a_column_can_be_of_passes(period):
    assert validate_plan(plan(GET, {**ROW, "period": period}, COMPUTE)) == []
    assert validate_plan(plan(GET, {**ROW, "period": None}, COMPUTE)) == []


def test_a_bare_total_named_by_its_words_in_parentheses_is_a_row_of_words():
    # a TAT-QA dev table's row beside "Total (value)"
    assert validate_plan(plan(GET, {**ROW, "row": "Total (loan)"}, COMPUTE)) == []


@pytest.mark.parametrize("fields, code, words", [
    ({"period": "last year"}, "bad_period", "FY2018, 2018, fiscal 2018"),
    ({"row": r"capital expenditures?\s+(\d+)"}, "bad_field", "regular expression"),
    ({"row": "of the"}, "bad_field", "no words"),
    ({"row": "Total"}, "bad_field", "no words"),
    ({"row": "Total (1)"}, "bad_field", "no words"),
    ({"row": "capital expenditure FY2018", "period": None}, "bad_field", "put the period in"),
    ({"quantity": "article"}, "bad_field", "money, number, percent or date"),
])
def test_an_extract_by_row_names_a_line_item_and_a_period_a_column_can_be_of(fields, code,
                                                                             words):
    problem = only_problem(plan(GET, {**ROW, **fields}, COMPUTE))
    assert (problem.step, problem.code) == ("E2", code) and words in problem.message

"""repair_plan and prepare_plan: the mistakes with one obvious fix are fixed and said."""

from __future__ import annotations

import pytest

from shared.errors import PlanError
from shared.models import Plan
from shared.plan.parse import parse_plan_with_repairs
from shared.plan.repair import prepare_plan, repair_plan
from shared.plan.validate import validate_plan

GET = {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
       "output_var": "$R1"}
EXTRACT = {"id": "E2", "operation": "EXTRACT", "source": "$R1",
           "pattern": r"battery yield rate.*?(\d+\.\d+)%", "output_var": "$Y"}
COMPUTE = {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}


def plan(*steps: dict, answer: str | None = "{{ Y }} {{ GAP }}", **fields) -> Plan:
    return Plan.model_validate({"steps": list(steps), "answer": answer, **fields})


def test_a_plan_without_mistakes_is_returned_unchanged_with_no_repairs():
    p = plan(GET, EXTRACT, COMPUTE)
    assert repair_plan(p) == (p, [])


def test_an_extract_from_a_document_name_gets_the_get_step_it_lacks():
    p, repairs = repair_plan(plan({**EXTRACT, "source": "Tesla Q3 2023 report"}, COMPUTE))
    assert [(s.id, s.operation) for s in p.steps] == [
        ("E2_GET", "GET"), ("E2", "EXTRACT"), ("E3", "COMPUTE")]
    assert p.steps[0].source == "Tesla Q3 2023 report" and p.steps[1].source == "$E2_GET"
    assert repairs == ["EXTRACT step E2 read 'Tesla Q3 2023 report', a document name rather "
                       "than a step's output: added GET step E2_GET to fetch that document, "
                       "and E2 now reads $E2_GET"]
    assert validate_plan(p) == []


def test_an_extract_naming_a_document_another_get_fetches_reads_that_get():
    p, repairs = repair_plan(plan(GET, {**EXTRACT, "source": "tesla q3 2023 financial report."},
                                  COMPUTE))
    assert [s.id for s in p.steps] == ["E1", "E2", "E3"] and p.steps[1].source == "$R1"
    assert "GET step E1" in repairs[0]


def test_an_extract_naming_a_variable_without_its_dollar_reads_that_variable():
    p, repairs = repair_plan(plan(GET, {**EXTRACT, "source": "R1"}, COMPUTE))
    assert p.steps[1].source == "$R1" and "without $" in repairs[0]


def test_gets_of_the_same_document_become_one_and_every_reader_follows():
    again = {"id": "E4", "operation": "GET", "source": "tesla  Q3 2023 financial-report",
             "output_var": "$R2"}
    rate = {"id": "E5", "operation": "EXTRACT", "source": "${R2}", "pattern": r"rate (\d+)%",
            "output_var": "$RATE"}
    p, repairs = repair_plan(plan(GET, EXTRACT, COMPUTE, again, rate,
                                  answer="{{ Y }} {{ RATE }} {{ R2 | length }}"))
    assert [s.id for s in p.steps] == ["E1", "E2", "E3", "E5"]
    assert p.steps[3].source == "${R1}"
    assert p.answer == "{{ Y }} {{ RATE }} {{ R1 | length }}"
    assert repairs == ["GET steps E1 and E4 fetch the same document ('Tesla Q3 2023 Financial "
                       "Report'): kept E1 and dropped E4; what read $R2 now reads $R1"]


@pytest.mark.parametrize("change", [{"temporal_scope": "2023-Q3"}, {"top_k": 2},
                                    {"source": "Tesla Q2 2023 Financial Report"}])
def test_gets_that_differ_in_scope_count_or_words_are_both_kept(change):
    again = {**GET, "id": "E4", "output_var": "$R2", **change}
    p, repairs = repair_plan(plan(GET, EXTRACT, COMPUTE, again))
    assert len(p.steps) == 4 and repairs == []


def test_steps_written_before_the_steps_they_read_are_moved_after_them():
    p, repairs = repair_plan(plan(COMPUTE, EXTRACT, GET))
    assert [s.id for s in p.steps] == ["E1", "E2", "E3"]
    assert repairs == ["moved steps so that each runs after the steps whose outputs it reads; "
                       "the order is now E1, E2, E3"]


def test_steps_in_a_cycle_are_left_in_place_for_the_checks_to_report():
    loop = {**COMPUTE, "expression": "$GAP + 1"}
    p, repairs = repair_plan(plan(GET, EXTRACT, loop))
    assert repairs == [] and [v.code for v in validate_plan(p)] == ["cycle"]


def test_unused_steps_are_dropped_only_when_the_plan_allows_it():
    unused = [{**GET, "id": "E4", "source": "Northwind report", "output_var": "$N"},
              {**EXTRACT, "id": "E5", "source": "$N", "output_var": "$NY"}]
    kept, repairs = repair_plan(plan(GET, EXTRACT, COMPUTE, *unused))
    assert len(kept.steps) == 5 and repairs == []
    p, repairs = repair_plan(plan(GET, EXTRACT, COMPUTE, *unused, drop_unused=True))
    assert [s.id for s in p.steps] == ["E1", "E2", "E3"]
    assert repairs == ["dropped steps E4, E5: neither the answer template nor any other step "
                       "reads $N, $NY"]


def test_without_an_answer_template_no_step_counts_as_unused():
    p = plan(GET, EXTRACT, COMPUTE, answer=None, drop_unused=True)
    assert repair_plan(p) == (p, [])


def test_prepare_plan_repairs_then_checks():
    p, repairs = prepare_plan(plan(COMPUTE, EXTRACT, GET))
    assert [s.id for s in p.steps] == ["E1", "E2", "E3"] and len(repairs) == 1
    with pytest.raises(PlanError) as e:
        prepare_plan(plan(COMPUTE, EXTRACT, GET), max_steps=2)
    assert [p.code for p in e.value.problems] == ["too_many_steps"]


def test_parse_plan_with_repairs_returns_what_it_repaired():
    p, repairs = parse_plan_with_repairs("#E1 = Extract[Tesla Q3 2023 report, yield (\\d+)%]\n"
                                         "#E2 = Calculator[#E1 - 92]")
    assert [s.operation for s in p.steps] == ["GET", "EXTRACT", "COMPUTE"]
    assert len(repairs) == 1 and "E1_GET" in repairs[0]

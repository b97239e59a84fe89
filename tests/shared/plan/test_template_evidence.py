"""A model-written answer template prints only what the evidence backs."""

from __future__ import annotations

import pytest

from shared.planners.prompts import WORKED_EXAMPLE
from shared.plan.parse import parse_plan
from shared.plan.template_evidence import check_template_evidence

STEPS = [{"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
          "output_var": "$R"},
         {"id": "E2", "operation": "EXTRACT", "source": "$R",
          "pattern": r"battery yield rate of (\d+\.\d+)%", "output_var": "$Y"},
         {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}]
QUESTION = "What was Tesla's battery yield rate in Q3 2023?"


def codes(answer: str | None, question: str = QUESTION, steps=STEPS) -> list[str]:
    plan = parse_plan({"steps": steps, "answer": answer})
    return [p.code for p in check_template_evidence(plan, question)]


def test_the_prompts_worked_example_passes():
    plan = parse_plan(WORKED_EXAMPLE["plan"])
    assert check_template_evidence(plan, QUESTION) == []


@pytest.mark.parametrize("answer", [
    "The yield was {{ Y }}%.",
    "In Q3 2023 the yield was {{ Y }}%, {{ GAP }} points from the 92% target.",
    "Tesla Q3 2023: {{ Y }}",                       # the period of the question and the GET
    "{% if GAP < 0 %}{{ Y }}% missed it{% else %}{{ Y }}% met it{% endif %}",
    None,                                            # the domain template prints the values
])
def test_templates_that_print_the_evidence_pass(answer):
    assert codes(answer) == []


def test_a_template_with_no_variable_is_an_uncited_answer_naming_one_to_print():
    plan = parse_plan({"steps": STEPS, "answer": "Tesla's battery yield was high."})
    (problem,) = check_template_evidence(plan, QUESTION)
    assert problem.code == "uncited_answer" and "{{ GAP }}" in problem.message


def test_an_invented_figure_is_named_even_beside_a_variable():
    plan = parse_plan({"steps": STEPS, "answer": "The yield was 9.2% ({{ Y }})."})
    (problem,) = check_template_evidence(plan, QUESTION)
    assert problem.code == "uncited_figure" and "figure 9.2 " in problem.message


def test_a_template_that_only_states_figures_gets_both_problems():
    assert codes("Battery yield was 9.2%, below the 95% target.") == [
        "uncited_answer", "uncited_figure", "uncited_figure"]


@pytest.mark.parametrize("answer, question", [
    ("Revenue grew {{ Y }}% against 1,200 units.", "Did Tesla sell 1,200 units?"),
    ("Revenue grew {{ Y }}% against 1200 units.", "Did Tesla sell 1,200 units?"),
    ("{{ Y }} is above 92.0", QUESTION),             # 92 of the COMPUTE, written 92.0
])
def test_figures_match_whatever_their_writing(answer, question):
    assert codes(answer, question) == []


def test_a_figure_printed_as_a_constant_counts_but_a_comparison_does_not():
    assert codes("{{ Y }} {{ '7.5' }}") == ["uncited_figure"]
    assert codes("{% if Y > 75 %}{{ Y }}{% endif %}") == []


def test_an_if_steps_own_words_are_no_evidence_for_a_figure():
    steps = STEPS + [{"id": "E4", "operation": "IF", "condition": "$GAP >= 0",
                      "then": "above 97%", "else": "below 97%", "output_var": "$V"}]
    assert codes("{{ V }}; 97% was the bar", steps=steps) == ["uncited_figure"]

"""Answers print a typed value with its unit and scale ("$12,088 thousand"), in the
domain templates and in a plan's own; a template that writes the unit itself gets the
bare amount in the scale it names. The figures are Patriot Transportation's fiscal 2023
10-K's (in thousands) and a TAT-QA sentence's (CC BY 4.0)."""

from __future__ import annotations

from datetime import date

from shared.models import Evidence, Plan, StepResult
from shared.models.quantity import Quantity
from shared.render import render_answer, uncited_numbers
from shared.tables.quantities import parse_quantity

TODAY = date(2024, 6, 15)
FILING = Evidence(doc_id="pati-10k-2023", title="Patriot Transportation Holding 10-K 2023",
                  date="2023-12-08", period="FY2023", page=28)
CAPEX = parse_quantity("(12,088)", unit="USD", scale=3)  # purchase of property and equipment
EBITDA = parse_quantity("$85.1 million")


def plan(answer: str | None, quantity: str | None = "money", domain: str = "finance") -> Plan:
    return Plan.model_validate({"domain": domain, "answer": answer, "steps": [
        {"id": "E1", "operation": "GET", "source": FILING.title, "output_var": "$R"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R", "quantity": quantity,
         "pattern": r"Purchase of property and equipment\s+\((\d[\d,]*)\)", "output_var": "$CAPEX"}]})


def results(value: str, q: Quantity | None) -> dict[str, StepResult]:
    return {"E1": StepResult(action_id="q:E1", step_id="E1", operation="GET", status="ok",
                             value="…", document=FILING),
            "E2": StepResult(action_id="q:E2", step_id="E2", operation="EXTRACT", status="ok",
                             value=value, document=FILING, quantity=q, inputs=["q:E1"])}


def test_the_domain_template_prints_the_unit_and_scale_and_the_page():
    p = plan(None)
    answer = render_answer(p, results("12,088", CAPEX), "What was capex?", today=TODAY)
    assert "-$12,088[1] thousand" in answer.text
    assert "page 28" in answer.footnotes[0].evidence.cite()
    assert uncited_numbers(answer, p, "What was capex?") == []


def test_a_plans_template_prints_a_bare_variable_with_its_unit():
    answer = render_answer(plan("Capital expenditure: {{ CAPEX }}."),
                           results("12,088", CAPEX), today=TODAY)
    assert answer.text == "Capital expenditure: -$12,088[1] thousand."


def test_a_template_that_writes_the_unit_gets_the_amount_in_the_scale_it_names():
    answer = render_answer(plan("Capex was ${{ CAPEX }}M; {% if CAPEX < -10 %}high{% endif %}"),
                           results("12,088", CAPEX), today=TODAY)
    assert answer.text == "Capex was $-12.088[1]M; high"
    as_given = render_answer(plan("EBITDA ${{ CAPEX }} million"), results("85.1", EBITDA),
                             today=TODAY)
    assert as_given.text == "EBITDA $85.1[1] million"


def test_a_percent_prints_its_sign_once():
    rate = parse_quantity("6.14 per cent")
    bare = render_answer(plan("Down {{ CAPEX }}.", "percent"), results("6.14", rate), today=TODAY)
    written = render_answer(plan("Down {{ CAPEX }}%.", "percent"), results("6.14", rate),
                            today=TODAY)
    assert (bare.text, written.text) == ("Down 6.14[1]%.", "Down 6.14[1]%.")


def test_an_untyped_value_prints_as_before():
    answer = render_answer(plan("Capex was ${{ CAPEX }} thousand.", None),
                           results("12,088", None), today=TODAY)
    assert answer.text == "Capex was $12,088[1] thousand."


def test_a_difference_of_percents_worded_as_points_prints_without_a_percent_sign():
    gap = parse_quantity("-0.3", kind="percent")
    answer = render_answer(plan("{{ CAPEX }} points from the target.", "percent"),
                           results("-0.3", gap), today=TODAY)
    assert answer.text == "-0.3[1] points from the target."


def test_an_inexact_quotient_prints_to_two_places_and_stays_exact_in_the_value():
    # Rocket Lab's average revenue over 2021-2023 ($62,237, $210,996 and $244,592
    # thousand, its 10-Ks): COMPUTE carries 28 digits, an answer prints two places
    mean = parse_quantity("172608.3333333333333333333333", unit="USD", scale=3)
    p = plan("Average revenue: {{ CAPEX }}.")
    answer = render_answer(p, results(str(mean.amount), mean), today=TODAY)
    assert answer.text == "Average revenue: $172,608.33[1] thousand."
    assert uncited_numbers(answer, p, "What was the average revenue?") == []
    small = parse_quantity("0.0123456789012345678901234567")
    assert render_answer(plan("{{ CAPEX }}", "number"), results(str(small.amount), small),
                         today=TODAY).text == "0.0123[1]"
    exact = parse_quantity("12.345", unit="USD", scale=6)  # as written: every place kept
    assert render_answer(plan("{{ CAPEX }}"), results("12.345", exact),
                         today=TODAY).text == "$12.345[1] million"

"""Rendering answers from hand-built plans and step results: no Redis, no workers."""

from __future__ import annotations

from datetime import date

import pytest

from shared.models import Answer, Evidence, Plan, StepResult
from shared.render import mask_identifiers, render_answer, uncited_numbers

TODAY = date(2024, 6, 15)
ACME = Evidence(doc_id="acme-q3", title="Acme Robotics Q3 2023 Quarterly Report",
                date="2023-09-30", url="https://example.org/acme-q3")
ZENITH = Evidence(doc_id="zenith-q3", title="Zenith Motors Q3 2023 Quarterly Report",
                  date="2023-09-30")


def get(id, source, var, **kw):
    return {"id": id, "operation": "GET", "source": source, "output_var": var, **kw}


def extract(id, source, pattern, var, **kw):
    return {"id": id, "operation": "EXTRACT", "source": source, "pattern": pattern,
            "output_var": var, **kw}


def ok(step_id, operation, value, document=None, inputs=(), **kw):
    return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                      status="ok", value=value, document=document,
                      inputs=[f"q:{i}" for i in inputs], **kw)


def failed(step_id, operation, code, message):
    return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                      status="error", error_code=code, error_message=message)


def results(*rs):
    return {r.step_id: r for r in rs}


TWO_BRANCHES = {
    "domain": "finance",
    "steps": [
        get("E1", "Acme Robotics Q3 2023 Quarterly Report", "$A", temporal_scope="2023-Q3"),
        extract("E2", "$A", r"revenue of \$(\d+(?:\.\d+)?) million", "$RA"),
        get("E3", "Zenith Motors Q3 2023 Quarterly Report", "$Z", temporal_scope="2023-Q3"),
        extract("E4", "$Z", r"revenue of \$(\d+(?:\.\d+)?) million", "$RZ"),
        {"id": "E5", "operation": "COMPUTE", "expression": "$RA - $RZ", "output_var": "$DIFF"},
    ],
}


def two_branch_results():
    return results(
        ok("E1", "GET", "Acme reported revenue of $412.5 million.", ACME),
        ok("E2", "EXTRACT", "412.5", ACME, ["E1"], confidence="pattern"),
        ok("E3", "GET", "Zenith reported revenue of $298.1 million.", ZENITH),
        ok("E4", "EXTRACT", "298.1", ZENITH, ["E3"], confidence="pattern"),
        ok("E5", "COMPUTE", "114.4", None, ["E2", "E4"], confidence="computed"))


def render(plan: dict, rs, question="q", today=TODAY) -> Answer:
    return render_answer(Plan.model_validate(plan), rs, question, today=today)


# -- footnotes ------------------------------------------------------------------------

def test_a_user_template_prints_each_value_with_its_footnote_right_after_the_number():
    plan = {**TWO_BRANCHES, "answer": "Acme earned ${{ RA }}M and Zenith ${{ RZ }}M; "
                                      "Acme{% if DIFF > 0 %} led by{% endif %} ${{ DIFF }}M."}
    answer = render(plan, two_branch_results())
    assert answer.text == ("Acme earned $412.5[1]M and Zenith $298.1[2]M; "
                           "Acme led by $114.4[1][2]M.")
    assert [f.evidence.title for f in answer.footnotes] == [ACME.title, ZENITH.title]
    assert answer.complete and uncited_numbers(answer, Plan.model_validate(plan)) == []


def test_arithmetic_in_a_template_keeps_the_footnotes_of_its_operands():
    plan = {**TWO_BRANCHES,
            "answer": "Together {{ RA + RZ }}, half of Acme {{ (RA / 2) | round(2) }}."}
    text = render(plan, two_branch_results()).text
    assert text == "Together 710.6[1][2], half of Acme 206.25[1]."


def test_a_value_derived_by_if_merge_or_arbitrate_inherits_the_footnotes_of_its_inputs():
    plan = {"steps": TWO_BRANCHES["steps"] + [
        {"id": "E6", "operation": "ARBITRATE", "sources": ["$RA", "$RZ"], "output_var": "$PICK"},
        {"id": "E7", "operation": "IF", "condition": "$DIFF > 0", "then": "$RA", "else": "$RZ",
         "output_var": "$LEAD"}],
        "answer": "Picked {{ PICK }}; leader {{ LEAD }}."}
    rs = two_branch_results() | results(
        ok("E6", "ARBITRATE", "298.1", None, ["E2", "E4"], note="majority"),
        ok("E7", "IF", "412.5", None, []))  # no inputs recorded: the plan's references count
    answer = render(plan, rs)
    assert answer.text == "Picked 298.1[1][2]; leader 412.5[1][2]."


def test_words_an_if_step_takes_from_the_plan_carry_no_marker_but_its_numbers_do():
    plan = {"steps": TWO_BRANCHES["steps"] + [
        {"id": "E6", "operation": "IF", "condition": "$DIFF > 0", "then": "ahead",
         "else": "behind", "output_var": "$WHO"},
        {"id": "E7", "operation": "IF", "condition": "$DIFF > 0", "then": "ahead by 100",
         "else": "behind", "output_var": "$BY"}],
        "answer": "Acme is {{ WHO }}, {{ BY }}."}
    rs = two_branch_results() | results(ok("E6", "IF", "ahead", None, ["E5"]),
                                        ok("E7", "IF", "ahead by 100", None, ["E5"]))
    assert render(plan, rs).text == "Acme is ahead, ahead by 100[1][2]."


def test_bools_in_a_user_template_stay_true_or_false_for_the_template_to_word():
    plan = {"steps": TWO_BRANCHES["steps"][:2] + [
        {"id": "V1", "operation": "VALIDATE", "value": "$RA", "min": 0, "output_var": "$SANE"}],
        "answer": "{{ 'checked' if SANE else 'unchecked' }} ({{ SANE }})"}
    rs = two_branch_results() | results(ok("V1", "VALIDATE", True, None, ["E2"]))
    assert render(plan, rs).text == "checked (True)"


def test_an_extract_fallback_carries_no_footnote_since_no_document_stated_it():
    plan = {"steps": [get("E1", "Zenith Motors Q3 2023 Quarterly Report", "$D"),
                      extract("E2", "$D", r"units shipped: (\d+)", "$U", fallback="0")],
            "answer": "Units: {{ U }}"}
    rs = results(ok("E1", "GET", "No units here.", ZENITH),
                 ok("E2", "EXTRACT", "0", None, ["E1"], confidence="fallback"))
    answer = render(plan, rs)
    assert answer.text == "Units: 0" and answer.footnotes == []


def test_each_item_of_a_list_carries_the_footnote_of_its_own_document():
    plan = {"steps": [{"id": "S1", "operation": "SEARCH", "query": "quarterly revenue",
                       "output_var": "$HITS"}]}
    rs = results(ok("S1", "SEARCH", ["Acme revenue was 412.5", "Zenith revenue was 298.1"],
                    documents=[ACME, ZENITH]))
    answer = render(plan, rs)
    assert answer.text == ("Passages on “quarterly revenue”:\n"
                           "  - Acme revenue was 412.5[1]\n  - Zenith revenue was 298.1[2]")
    assert uncited_numbers(answer, Plan.model_validate(plan)) == []


def test_a_list_in_a_user_template_prints_its_items_each_with_its_footnote():
    plan = {"steps": [{"id": "S1", "operation": "SEARCH", "query": "revenue",
                       "output_var": "$HITS"}], "answer": "Found: {{ HITS }}"}
    rs = results(ok("S1", "SEARCH", ["412.5", "298.1"], documents=[ACME, ZENITH]))
    assert render(plan, rs).text == "Found: 412.5[1]; 298.1[2]"


def test_bools_read_as_yes_or_no_in_the_default_template():
    plan = {"steps": TWO_BRANCHES["steps"][:2] + [
        {"id": "V1", "operation": "VALIDATE", "value": "$RA", "min": 0, "output_var": "$SANE"}]}
    rs = two_branch_results() | results(ok("V1", "VALIDATE", True, None, ["E2"]))
    answer = render(plan, rs)
    assert answer.text == "SANE: yes." and answer.footnotes == []


# -- domain templates -----------------------------------------------------------------

def test_a_finance_answer_states_each_figure_with_its_unit_and_period():
    answer = render({k: v for k, v in TWO_BRANCHES.items()}, two_branch_results())
    assert answer.text == "DIFF (RA - RZ) was 114.4[1][2] for Q3 2023."
    plan = {**TWO_BRANCHES, "steps": TWO_BRANCHES["steps"][:2]}
    answer = render(plan, two_branch_results())
    assert answer.text == "Revenue was $412.5[1] million for Q3 2023."


def test_a_computed_figure_is_named_by_the_labels_of_its_inputs():
    plan = {"domain": "finance", "steps": [
        get("E1", "Tesla Q3 2023 Financial Report", "$R1", temporal_scope="2023-Q3"),
        extract("E2", "$R1", r"battery yield rate.*?(\d+\.\d+)%", "$Y"),
        {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}]}
    tesla = Evidence(doc_id="t", title="Tesla Q3 2023 Financial Report")
    rs = results(ok("E1", "GET", "battery yield rate of 91.7%", tesla),
                 ok("E2", "EXTRACT", "91.7", tesla, ["E1"]),
                 ok("E3", "COMPUTE", "-0.3", None, ["E2"]))
    assert render(plan, rs).text == "GAP (battery yield rate - 92) was -0.3[1] for Q3 2023."


def test_a_domain_without_a_template_of_its_own_renders_with_the_generic_one():
    plan = {**TWO_BRANCHES, "domain": "astrology", "steps": TWO_BRANCHES["steps"][:2]}
    assert render(plan, two_branch_results()).text == "Revenue was $412.5[1] million in Q3 2023."


def test_a_legal_answer_cites_the_document_and_the_article_the_value_sits_under():
    act = Evidence(doc_id="dpa", title="Data Retention Act", date="2021-01-01")
    text = ("Article 4. Scope.\nThis act applies to processors.\n"
            "Article 17. Erasure.\nThe retention period is 30 days from the request.")
    plan = {"domain": "legal", "steps": [
        get("E1", "Data Retention Act", "$ACT"),
        extract("E2", "$ACT", r"retention period is (\d+) days", "$DAYS")]}
    rs = results(ok("E1", "GET", text, act), ok("E2", "EXTRACT", "30", act, ["E1"]))
    answer = render(plan, rs)
    assert answer.text == "Retention period is 30[1] days (Data Retention Act, Article 17[1])."
    assert uncited_numbers(answer, Plan.model_validate(plan)) == []


def test_a_medical_answer_masks_patient_identifiers_and_ends_with_a_caution():
    chart = Evidence(doc_id="c1", title="Discharge summary, Patient John Smith")
    plan = {"domain": "medical", "steps": [
        get("E1", "discharge summary", "$C"),
        extract("E2", "$C", r"Discharge note: (.+)", "$NOTE")]}
    note = "Patient John Smith (MRN 4471923, DOB 03/14/1962) takes metformin 500 mg twice daily."
    rs = results(ok("E1", "GET", note, chart), ok("E2", "EXTRACT", note, chart, ["E1"]))
    answer = render(plan, rs)
    assert "John" not in answer.text and "4471923" not in answer.text and "1962" not in answer.text
    assert "metformin 500[1] mg twice daily" in answer.text
    assert answer.text.splitlines()[-1].startswith("Caution:")
    assert "John" not in answer.render()  # the footnote title is masked too


def test_a_user_template_in_the_medical_domain_has_identifiers_masked_too():
    plan = {"domain": "medical", "steps": [get("E1", "chart", "$C")],
            "answer": "From the chart: {{ C }}"}
    rs = results(ok("E1", "GET", "Call Mrs. Ortega at 555-867-5309 about her 12.5 mg dose.",
                    Evidence(doc_id="c", title="chart")))
    text = render(plan, rs).text
    assert "Ortega" not in text and "867" not in text
    assert "12.5[1] mg" in text


# -- tense and period -----------------------------------------------------------------

@pytest.mark.parametrize("scope, today, verb", [
    ("2023-Q3", date(2024, 6, 15), "was"),
    ("2024-Q2", date(2024, 6, 15), "is"),
    ("2025", date(2024, 6, 15), "will be"),
])
def test_a_value_is_reported_with_was_is_or_will_be_by_its_period_and_today(scope, today, verb):
    plan = {"steps": [get("E1", "Acme Robotics Quarterly Report", "$A", temporal_scope=scope),
                      extract("E2", "$A", r"revenue of \$(\d+(?:\.\d+)?) million", "$RA")],
            "answer": "Revenue {{ tense }} ${{ RA }}M in {{ period }} ({{ tenses.RA }})."}
    rs = results(ok("E1", "GET", "revenue of $412.5 million", ACME),
                 ok("E2", "EXTRACT", "412.5", ACME, ["E1"]))
    text = render(plan, rs, today=today).text
    assert text.startswith(f"Revenue {verb} $412.5[1]M in ")
    assert text.endswith(f"({verb}).")


def test_without_a_scope_the_year_or_quarter_named_in_the_source_sets_the_period():
    plan = {"steps": [get("E1", "Acme Robotics Q3 2023 Quarterly Report", "$A"),
                      extract("E2", "$A", r"revenue of \$(\d+(?:\.\d+)?) million", "$RA")],
            "answer": "{{ period }}: revenue {{ tense }} {{ RA }}"}
    rs = results(ok("E1", "GET", "revenue of $412.5 million", ACME),
                 ok("E2", "EXTRACT", "412.5", ACME, ["E1"]))
    assert render(plan, rs).text == "Q3 2023: revenue was 412.5[1]"


def test_a_value_with_no_known_period_is_reported_in_the_present():
    plan = {"steps": [get("E1", "Acme Robotics report", "$A"),
                      extract("E2", "$A", r"revenue of \$(\d+(?:\.\d+)?) million", "$RA")],
            "answer": "[{{ period }}] revenue {{ tense }} {{ RA }}"}
    rs = results(ok("E1", "GET", "revenue of $412.5 million", Evidence(doc_id="x", title="Acme")),
                 ok("E2", "EXTRACT", "412.5", None, ["E1"]))
    assert render(plan, rs).text == "[] revenue is 412.5[1]"


# -- gaps -----------------------------------------------------------------------------

def test_a_failed_needed_value_names_the_gap_its_root_cause_and_still_lists_what_was_found():
    plan = {**TWO_BRANCHES, "answer": "Acme ${{ RA }}M vs Zenith ${{ RZ }}M"}
    rs = two_branch_results() | results(
        failed("E3", "GET", "NOT_FOUND", "step E3: no document matches source 'Zenith'"),
        failed("E4", "EXTRACT", "INPUT_FAILED", "$Z is unavailable because step E3 failed"))
    del rs["E5"]
    answer = render(plan, rs)
    assert not answer.complete
    assert answer.missing == ["RZ is missing: step E4 (EXTRACT) could not run because step E3 "
                              "(GET) failed with NOT_FOUND: step E3: no document matches source "
                              "'Zenith'"]
    assert answer.text.startswith("The answer is incomplete.\n- RZ is missing")
    assert "What was found:\n- Revenue was $412.5[1] million for Q3 2023." in answer.text


def test_a_step_that_never_reported_is_named_as_missing():
    plan = {**TWO_BRANCHES, "steps": TWO_BRANCHES["steps"][:2]}
    answer = render(plan, results(ok("E1", "GET", "text", ACME)))
    assert answer.missing == ["RA is missing: step E2 never reported a result."]


def test_a_template_that_fails_to_render_is_reported_as_a_gap_with_the_values_found():
    plan = {**TWO_BRANCHES, "answer": "{{ RA.nope }}"}
    answer = render(plan, two_branch_results())
    assert not answer.complete and "answer template failed" in answer.missing[0]
    assert "412.5[1]" in answer.text


# -- checks ---------------------------------------------------------------------------

def test_uncited_numbers_finds_a_value_printed_without_its_marker():
    plan = Plan.model_validate({**TWO_BRANCHES, "answer": "{{ RA }} {{ RZ }}, 92% target"})
    answer = Answer(text="Acme 412.5[1], Zenith 298.1, against the 92% target in Q3 2023",
                    footnotes=render_answer(plan, two_branch_results(), today=TODAY).footnotes)
    assert uncited_numbers(answer, plan) == ["298.1"]


def test_every_default_answer_in_every_domain_cites_all_its_numbers():
    for domain in ("generic", "finance", "legal", "medical", "other"):
        plan = {**TWO_BRANCHES, "domain": domain}
        answer = render(plan, two_branch_results())
        assert uncited_numbers(answer, Plan.model_validate(plan)) == [], (domain, answer.text)


# -- masking --------------------------------------------------------------------------

@pytest.mark.parametrize("text, hidden", [
    ("Patient John Smith was admitted.", "John Smith"),
    ("Pt. Maria Lopez reports no pain.", "Maria Lopez"),
    ("Seen with Mr. O'Brien today.", "O'Brien"),
    ("Patient name: Jane Q. Doe", "Jane Q. Doe"),
    ("MRN: 00448812-A", "00448812-A"),
    ("medical record number 77312", "77312"),
    ("DOB 03/14/1962", "03/14/1962"),
    ("date of birth: March 14, 1962", "March 14, 1962"),
    ("call (555) 867-5309 after 5 pm", "867-5309"),
    ("Tel: +44 161 496 0000", "496 0000"),
    ("email jane.doe@example.org for results", "jane.doe@example.org"),
])
def test_patient_identifiers_are_masked(text, hidden):
    masked = mask_identifiers(text)
    assert hidden not in masked and "[REDACTED" in masked


@pytest.mark.parametrize("text", [
    "Metformin 500 mg twice daily; insulin 12.5 units at 22:00.",
    "BP 120/80 mmHg, HR 72 bpm, SpO2 98%, HbA1c 7.2%.",
    "Seen on 2023-09-30; follow-up in 6 weeks; 1,250 ml fluids.",
    "The patient was stable and Dr. Patel agreed.",
])
def test_ordinary_clinical_numbers_and_clinicians_stay_unmasked(text):
    assert mask_identifiers(text) == text


def test_items_joined_in_a_template_keep_their_footnotes():
    from shared.models import Evidence, Plan, StepResult
    from shared.render import render_answer
    ev = [Evidence(doc_id=f"d{i}", title=f"Doc {i}") for i in (1, 2)]
    plan = Plan.model_validate({"steps": [
        {"id": "S", "operation": "SEARCH", "query": "x", "output_var": "$L"}],
        "answer": "Found: {{ L | join(', ') }}."})
    results = {"S": StepResult(action_id="q:S", step_id="S", operation="SEARCH", status="ok",
                               value=["12.5", "7"], documents=ev, document=ev[0])}
    text = render_answer(plan, results).text
    assert text == "Found: 12.5[1], 7[2]."


def test_a_table_cell_is_named_by_its_row_and_a_computed_figure_by_the_rows_it_reads():
    ten_k = Evidence(doc_id="pati", title="Patriot Transportation Holding 2018 Form 10-K",
                     period="2018", page=46)
    plan = {"domain": "finance", "steps": [
        get("E1", "Patriot Transportation Holding 2018 Form 10-K", "$R1"),
        {"id": "E2", "operation": "EXTRACT", "source": "$R1", "row": "capital expenditure",
         "period": "FY2018", "output_var": "$CAPEX"},
        {"id": "E3", "operation": "EXTRACT", "source": "$R1",
         "row": "net cash provided by operating activities", "period": "FY2018",
         "output_var": "$OCF"},
        {"id": "E4", "operation": "COMPUTE", "expression": "$OCF + $CAPEX", "output_var": "$FCF"}]}
    rs = results(ok("E1", "GET", "…", ten_k), ok("E2", "EXTRACT", "(4,656)", ten_k, ["E1"]),
                 ok("E3", "EXTRACT", "7,772", ten_k, ["E1"]),
                 ok("E4", "COMPUTE", "3116", None, ["E2", "E3"]))
    assert render(plan, rs).text.startswith(
        "FCF (net cash provided by operating activities + capital expenditure) was 3116[1]")
    alone = {**plan, "steps": plan["steps"][:2]}
    assert render(alone, rs).text.startswith("Capital expenditure")  # the row, as label

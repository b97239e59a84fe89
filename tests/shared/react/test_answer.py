"""The loop's answer: citations of results become footnotes; a stopped loop says so."""

from __future__ import annotations

from shared.models import Evidence, ReactIteration, StepResult
from shared.react.answer import finished_answer, stopped_answer
from shared.react.prompts import build_messages
from shared.react.tools import TOOLS

ACME = Evidence(doc_id="acme", title="Acme Robotics Q3 2023 Quarterly Report", date="2023-09-30")
ZEN = Evidence(doc_id="zen", title="Zenith Motors Q3 2023 Quarterly Report")


def result(step_id, value, operation="EXTRACT", status="ok", **kw):
    return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=operation,
                      status=status, value=value, **kw)


RESULTS = {"R1": result("R1", "Acme reported …", "GET", document=ACME),
           "R2": result("R2", "412.5", document=ACME),
           "R3": result("R3", "298.1", document=ZEN),
           "R4": result("R4", "114.4", "COMPUTE", documents=[ACME, ZEN])}


def test_result_markers_become_footnotes_of_their_documents():
    a = finished_answer("Acme earned $412.5M [R2], Zenith $298.1M [R3]; the gap is $114.4M "
                        "[R4].", RESULTS)
    assert a.text == "Acme earned $412.5M[1], Zenith $298.1M[2]; the gap is $114.4M[1][2]."
    assert [(f.number, f.evidence.title, f.variables) for f in a.footnotes] == [
        (1, ACME.title, ["R2", "R4"]), (2, ZEN.title, ["R3", "R4"])]
    assert a.complete


def test_without_markers_a_value_found_in_the_text_is_cited_where_it_appears():
    a = finished_answer("Zenith's revenue was $298.1 million.", RESULTS)
    assert a.text == "Zenith's revenue was $298.1[1] million."
    assert a.footnotes[0].evidence == ZEN


def test_an_answer_that_cites_nothing_ends_with_every_document_gathered():
    a = finished_answer("Acme earned more.", {"R1": RESULTS["R1"], "R3": RESULTS["R3"]})
    assert a.text == "Acme earned more. [1][2]"
    assert [f.evidence.doc_id for f in a.footnotes] == ["acme", "zen"]


def test_brackets_that_are_not_results_are_left_alone_and_failed_results_are_not_cited():
    failed = result("R5", None, "GET", status="error", error_code="NOT_FOUND", document=ZEN)
    a = finished_answer("Revenue [sic] was 412.5 [R2] [R5].", {**RESULTS, "R5": failed})
    assert a.text == "Revenue [sic] was 412.5[1]."


def test_a_stopped_loop_says_why_and_lists_the_evidence_it_gathered():
    its = [ReactIteration(n=1, tool="search", tool_input="acme revenue", action_id="q:R1",
                          observation="1. [Acme …] revenue of $412.5 million"),
           ReactIteration(n=2, thought="hmm", feedback="no valid Action: …")]
    a = stopped_answer(its, RESULTS, "the loop reached its limit of 2 iterations")
    assert a.text.splitlines() == [
        "I stopped without a final answer: the loop reached its limit of 2 iterations.",
        "Evidence gathered:",
        "- R1 search 'acme revenue': 1. [Acme …] revenue of $412.5 million[1]"]
    assert not a.complete and a.missing == ["no final answer: the loop reached its limit of 2 "
                                            "iterations"]


def test_the_conversation_replays_each_iteration_and_warns_before_the_last_turn():
    its = [ReactIteration(n=1, thought="look", tool="search", tool_input="acme",
                          action_id="q:R1", observation="[NO_DATA]"),
           ReactIteration(n=2, thought="garbled reply", feedback="no valid Action: x")]
    messages = build_messages("What did Acme earn?", its, TOOLS.values(), max_iterations=3,
                              seed="- E1 GET source='Acme' -> [NO_DATA]")
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "- search:" in messages[0]["content"] and "- finish:" in messages[0]["content"]
    assert "A plan already ran" in messages[1]["content"] and "E1 GET" in messages[1]["content"]
    assert messages[2]["content"] == ('{"thought": "look", "action": {"tool": "search", '
                                      '"input": "acme"}}')
    assert messages[3]["content"] == "Observation [R1]: [NO_DATA]"
    assert messages[4]["content"] == "garbled reply"
    assert messages[5]["content"].startswith("Observation: (none)\nNote: no valid Action: x")
    assert "This is your last turn" in messages[5]["content"]


def test_a_search_result_is_cited_by_the_snippets_that_hold_the_claimed_number():
    hits = result("R1", ["2023: shipments reached 38.4 GWh", "2023: shipments reached 30.2 GWh",
                         "a glossary of battery terms"], "SEARCH", documents=[ACME, ZEN, ZEN])
    a = finished_answer("Q3 2023 shipments were 38.4 GWh [R1]. Something else [R1].",
                        {"R1": hits})
    assert a.text == "Q3 2023 shipments were 38.4 GWh[1]. Something else[1][2]."

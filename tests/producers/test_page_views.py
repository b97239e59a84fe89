"""What the pages compute from a run record or a batch, without a server: the plan graph,
the timeline, the answer's footnote markers and evidence, failure groups, and the
answers per second over the last minute."""

from __future__ import annotations

import pytest

from producers.batch.follow import Tally
from producers.api.pages.batches import reason_and_code
from producers.api.pages.graph import depths, plan_graph
from producers.api.pages.query import pieces, query_view, safe_href
from producers.api.pages.timeline import timeline
from shared.models import (Answer, Evidence, Footnote, Plan, RunRecord, StepDispatch,
                           StepResult)

PLAN = Plan.model_validate({"domain": "finance", "steps": [
    {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report", "output_var": "$R"},
    {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": r"yield rate of (\d+\.\d+)%",
     "output_var": "$Y"},
    {"id": "E3", "operation": "GET", "source": "Tesla Q2 2023 Financial Report", "output_var": "$S"},
    {"id": "E4", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}],
    "answer": "Battery yield was {{ Y }}% ({{ GAP }})."})
DOC = Evidence(doc_id="d1", title="Tesla Q3 2023 Financial Report", period="2023-Q3",
               date="2023-10-19", url="https://example.org/tesla-q3")


def result(step_id: str, op: str, value, started: float, finished: float, **kw) -> StepResult:
    return StepResult(action_id=f"q:{step_id}", step_id=step_id, operation=op, status="ok",
                      value=value, started_at=started, finished_at=finished,
                      duration_ms=(finished - started) * 1000, **kw)


def record(**kw) -> RunRecord:
    steps = [result("E1", "GET", "text", 101.0, 101.5, document=DOC, worker="executor-a@h"),
             result("E2", "EXTRACT", "91.7", 102.0, 102.1, document=DOC,
                    quote="The battery yield rate of 91.7% beat the plan.")]
    dispatch = [StepDispatch(step_id="E1", dispatched_at=100.5),
                StepDispatch(step_id="E2", dispatched_at=101.6)]
    fields = dict(query_id="q", question="Yield?", status="executing", plan=PLAN, steps=steps,
                  dispatch=dispatch, timings={"queued": 100.0, "executing": 100.4})
    return RunRecord(**{**fields, **kw})


def test_each_step_sits_one_column_right_of_the_deepest_step_it_reads():
    assert depths(PLAN) == {"E1": 0, "E2": 1, "E3": 0, "E4": 2}
    graph = plan_graph(PLAN, {"E1": "ok"}, {"E1": "q:E1"})
    by_id = {n.step_id: n for n in graph.nodes}
    assert by_id["E1"].x < by_id["E2"].x < by_id["E4"].x and by_id["E3"].x == by_id["E1"].x
    assert by_id["E3"].y > by_id["E1"].y
    assert {(e.source, e.target) for e in graph.edges} == {("E1", "E2"), ("E2", "E4")}
    assert (by_id["E1"].status, by_id["E2"].status) == ("ok", "waiting")


def test_the_timeline_shows_each_steps_queue_wait_and_run_time_on_its_worker():
    rows = {r.step_id: r for r in timeline(record(), now=103.0).rows}
    assert rows["E1"].detail == "wait 500 ms, run 500 ms on executor-a@h"
    assert [b.kind for b in rows["E1"].bars] == ["wait", "run"]
    assert rows["E2"].detail == "wait 400 ms, run 100 ms"
    assert rows["E3"].detail == "waiting for its inputs" and rows["E3"].bars == []


def test_a_step_sent_and_not_finished_is_drawn_as_waiting_until_now():
    r = record(dispatch=[StepDispatch(step_id="E3", dispatched_at=102.0)])
    row = next(r for r in timeline(r, now=104.0).rows if r.step_id == "E3")
    assert row.detail == "sent, not finished" and row.bars[0].status == "sent"


def test_answer_markers_become_footnote_links_and_the_rest_stays_text():
    assert [(p.text, p.note) for p in pieces("Yield 91.7[1][2]% and 3[3].")] == [
        ("Yield 91.7", None), ("[1]", 1), ("[2]", 2), ("% and 3", None), ("[3]", 3),
        (".", None)]


def test_a_footnote_carries_the_sentence_its_value_came_from_with_the_value_marked():
    answer = Answer(text="Battery yield was 91.7[1]%.",
                    footnotes=[Footnote(number=1, evidence=DOC, variables=["Y", "GAP"])])
    view = query_view(record(status="done", answer=answer))
    (note,) = view.footnotes
    (quote,) = note.quotes
    assert (quote.step_id, quote.before, quote.value, quote.after) == (
        "E2", "The battery yield rate of ", "91.7", "% beat the plan.")
    assert note.href == "https://example.org/tesla-q3"


@pytest.mark.parametrize("url", ["javascript:alert(1)", " javascript:alert(1)",
                                 "JaVaScRiPt:alert(1)", "data:text/html,<script>",
                                 "https://ok.example/\"onmouseover=x", "//evil.example", None])
def test_only_plain_web_addresses_become_links(url):
    assert safe_href(url) is None


def test_steps_link_to_their_task_in_flower_by_task_id_else_by_action_id_search():
    r = record()
    r.steps[0].task_id = "3f2a-task"
    steps = {s.step_id: s for s in query_view(r, "http://flower:5555").steps}
    assert steps["E1"].flower == "http://flower:5555/task/3f2a-task"
    assert steps["E2"].flower.startswith("http://flower:5555/api/tasks?search=args")
    assert "q%3AE2" in steps["E2"].flower
    assert all(s.flower is None for s in query_view(r, None).steps)


def test_a_step_of_a_finished_query_that_never_ran_says_so():
    steps = {s.step_id: s.status for s in query_view(record(status="failed")).steps}
    assert steps == {"E1": "ok", "E2": "ok", "E3": "not run", "E4": "not run"}


def test_failures_group_by_reason_and_the_code_the_error_names():
    assert reason_and_code("deadline exceeded while executing: the query did not finish "
                           "in time", None) == ("deadline exceeded while executing", "-")
    assert reason_and_code("ReAct iteration 4: REDELIVERY_CAP", None) == (
        "ReAct iteration N", "REDELIVERY_CAP")
    assert reason_and_code("a ReAct loop needs an LLM: set CHORDAL_LLM_BASE_URL", None) == (
        "a ReAct loop needs an LLM", "-")
    problems = '[{"step": "E2", "code": "bad_pattern", "message": "m"}]'
    assert reason_and_code("plan is invalid: 1 problem", problems) == (
        "plan is invalid", "bad_pattern")


def test_answers_per_second_over_the_last_minute_count_only_its_answers():
    tally = Tally("b")
    for qid, done in (("a", 20.0), ("b", 150.0), ("c", 170.0)):
        tally.add(qid, ["done", "10", str(done), None])
    tally.add("d", ["failed", "10", None, "171"])
    s = tally.result(now=180.0)
    assert s.answers_per_s_last_minute == pytest.approx(2 / 60)
    assert s.answers_per_s == pytest.approx(3 / 161)
    assert tally.failed == ["d"]


def test_a_batch_younger_than_a_minute_divides_by_its_age():
    tally = Tally("b")
    tally.add("a", ["done", "100", "110", None])
    assert tally.result(now=120.0).answers_per_s_last_minute == pytest.approx(1 / 20)


def test_a_graph_step_outside_the_final_plan_still_gets_a_row():
    graph_only = StepDispatch(step_id="E9", dispatched_at=101.0, in_plan=False)
    steps = query_view(record(dispatch=[*record().dispatch, graph_only])).steps
    assert [s.step_id for s in steps] == ["E1", "E2", "E3", "E4", "E9"]
    assert steps[-1].status == "sent"


def test_a_rejected_replys_step_dropped_unsent_says_so_while_the_query_runs():
    dropped = StepDispatch(step_id="E9", in_plan=False, dropped=True)
    steps = query_view(record(status="executing", dispatch=[*record().dispatch, dropped])).steps
    assert steps[-1].step_id == "E9" and steps[-1].status == "dropped"

"""Streamed planning end to end: the replay server writes the plan at a known speed,
real planner, executor and finalizer processes run each step the moment it is written
(shared/journey/dispatch.py, shared/planners/llm.py)."""

from __future__ import annotations

import json
import time

import pytest

from shared import naming

pytestmark = pytest.mark.integration
QUESTION = "How did Tesla's and Northwind Motors' Q3 2023 revenue compare?"
TOKEN_DELAY = 0.01  # s per token of about 4 characters: the ~1,300-character reply takes ~3 s


def get(step_id: str, title: str, var: str) -> dict:
    return {"id": step_id, "operation": "GET", "source": title, "temporal_scope": "2023-Q3",
            "output_var": var}


def extract(step_id: str, doc: str, var: str, pattern: str = r"revenue of \$(\d+\.\d+) billion"):
    return {"id": step_id, "operation": "EXTRACT", "source": doc, "pattern": pattern,
            "quantity": "money", "output_var": var}


SIX = [get("E1", "Tesla Q3 2023 Financial Report", "$T"),
       extract("E2", "$T", "$TR"),
       get("E3", "Northwind Motors Q3 2023 Financial Report", "$N"),
       extract("E4", "$N", "$NR"),
       {"id": "E5", "operation": "COMPUTE", "expression": "$TR - $NR", "output_var": "$GAP"},
       {"id": "E6", "operation": "COMPUTE", "expression": "$TR / $NR", "output_var": "$TIMES"}]
ANSWER = ("Tesla made ${{ TR }} billion and Northwind Motors ${{ NR }} billion, ${{ GAP }} "
          "billion more ({{ TIMES }} times).")


def reply(steps: list[dict], answer: str = ANSWER) -> dict:
    return {"reasoning": "Fetch both Q3 2023 reports, read each revenue, compare them.",
            "plan": {"domain": "finance", "steps": steps, "answer": answer}}


def ask(llm_pipeline, *entries):
    llm_pipeline.fake_llm.load([e if "server" in e else
                                {"match": "Northwind", "token_delay": TOKEN_DELAY, **e}
                                for e in entries])
    record = llm_pipeline.ask(QUESTION)
    assert record.finalizer_runs == 1 and record.status == "done", record.error
    return record


def test_a_streamed_six_step_plan_starts_its_first_get_before_the_reply_ends(llm_pipeline):
    record = ask(llm_pipeline, {"content": reply(SIX)})
    assert record.plan_mode == "streamed"
    (call,) = record.llm_calls
    assert call.streamed and call.ended_at is not None
    steps = {s.step_id: s for s in record.steps}
    assert set(steps) == {f"E{i}" for i in range(1, 7)}
    assert steps["E1"].started_at < call.ended_at  # ran while the model was still writing
    sent = {d.step_id: d for d in record.dispatch}
    assert sent["E1"].after_reply_start_ms < call.latency_ms
    assert "$23.35[1] billion" in record.answer.text and "$9.84[2] billion" in record.answer.text


def test_a_step_that_fails_its_checks_mid_stream_is_not_run_and_the_retry_reuses_the_rest(
        llm_pipeline):
    broken = [*SIX[:3], extract("E4", "$N", "$NR", pattern=r"revenue of \$\d+\.\d+"), *SIX[4:]]
    record = ask(llm_pipeline, {"content": reply(broken)}, {"content": reply(SIX)})
    assert [c.purpose for c in record.llm_calls] == ["plan 1", "plan 2"]
    feedback = llm_pipeline.fake_llm.log()[1]["messages"][-1]["content"]
    assert '"step": "E4", "code": "capture_groups"' in feedback
    sent = {d.step_id: d for d in record.dispatch}
    # E1-E3 were written well by the first reply and ran once; E4 waited for the second
    assert {s: sent[s].attempt for s in sent} == {"E1": 1, "E2": 1, "E3": 1, "E4": 2,
                                                  "E5": 2, "E6": 2}
    gets = [s for s in record.steps if s.operation == "GET"]
    assert sorted(s.step_id for s in gets) == ["E1", "E3"] and all(s.attempt == 1 for s in gets)
    assert all(d.in_plan for d in record.dispatch)
    assert "$23.35[1] billion" in record.answer.text


def test_a_retry_that_changes_a_step_renames_it_and_does_not_wait_for_what_was_sent(
        llm_pipeline):
    """The second reply asks for the Q2 report under the first reply's id: a new step
    (E3_2) is run; the Q3 one the first reply sent is no plan's, and nothing waits for it."""
    first = reply(SIX[:3], answer="{{ TR }} and {{ 7 }}")  # a figure of its own: invalid
    q2 = [*SIX[:2], get("E3", "Northwind Motors Q2 2023 Financial Report", "$N"), *SIX[3:]]
    q2[2] = {**q2[2], "temporal_scope": "2023-Q2"}
    record = ask(llm_pipeline, {"content": first}, {"content": reply(q2)})
    sent = {d.step_id: d for d in record.dispatch}
    assert not sent["E3"].in_plan and sent["E3"].dispatched_at and sent["E3_2"].in_plan
    assert [s.id for s in record.plan.steps] == ["E1", "E2", "E3_2", "E4", "E5", "E6"]
    assert "$9.21[2] billion" in record.answer.text


def test_a_stream_that_breaks_off_is_asked_again_and_what_it_sent_is_not_sent_twice(
        llm_pipeline):
    text_of = __import__("json").dumps(reply(SIX))
    cut_after = text_of.index('"id": "E3"')  # E1 and E2 are complete, E3 is not
    record = ask(llm_pipeline, {"fault": "cut", "after": cut_after, "content": reply(SIX)},
                 {"content": reply(SIX)})
    assert [c.status for c in record.llm_calls] == ["error", "ok"]
    assert "broke off" in record.llm_calls[0].error
    sent = {d.step_id: d.attempt for d in record.dispatch}
    assert sent == {"E1": 1, "E2": 1, "E3": 2, "E4": 2, "E5": 2, "E6": 2}


def test_a_server_that_cannot_stream_gets_the_whole_plan_checked_first(llm_pipeline):
    from shared.llm.form_choice import FormChoice

    stream_key = FormChoice(llm_pipeline.settings, llm_pipeline.store.r, "").key + ":stream"
    try:
        record = ask(llm_pipeline, {"server": {"streams": "refuse"}}, {"content": reply(SIX)})
    finally:
        llm_pipeline.store.r.delete(stream_key)  # the next tests' server streams again
    assert record.plan_mode == "whole" and not record.llm_calls[0].streamed
    refused, whole = llm_pipeline.fake_llm.log()
    assert (refused["stream"], refused["status"], whole["stream"]) == (True, 400, False)
    steps = {s.step_id: s for s in record.steps}
    assert steps["E1"].started_at > record.llm_calls[0].ended_at  # after the whole reply
    assert all(d.after_reply_start_ms is None for d in record.dispatch)


def test_chordal_show_says_the_plan_streamed_and_when_each_step_was_sent(llm_pipeline):
    record = ask(llm_pipeline, {"content": reply(SIX)})
    shown = llm_pipeline.cli("show", record.query_id)
    assert "plan streamed" in shown.stdout, shown.stderr
    assert f"{record.query_id}:E1" in shown.stdout and "sent +" in shown.stdout


def computes(n: int, answer: str = "{{ V1 }}") -> dict:
    """A reply of CHORDAL_MAX_STEPS (20) COMPUTE steps, none the same as another reply's."""
    return reply([{"id": f"E{i}", "operation": "COMPUTE", "expression": f"{n} * {i}",
                   "output_var": f"$V{i}"} for i in range(1, 21)], answer=answer)


def executors_idle(store, timeout: float = 30) -> None:
    """Wait until no step task is queued or unacknowledged (running or reserved)."""
    deadline = time.monotonic() + timeout
    while store.r.llen(naming.QUEUE_EXECUTE) or store.r.hlen("unacked"):
        assert time.monotonic() < deadline, "step tasks still queued or running"
        time.sleep(0.05)


def test_three_streams_that_break_off_send_at_most_max_steps_steps_in_all(llm_pipeline):
    """Each reply writes 20 steps of its own and breaks off before its answer: the first
    reply's 20 steps spend the query's budget, the others' are never sent."""
    cut = [{"match": "Northwind", "token_delay": 0.002, "fault": "cut",
            "after": json.dumps(computes(n)).index('"answer"'), "content": computes(n)}
           for n in (1, 2, 3)]
    llm_pipeline.fake_llm.load(cut)
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "failed" and "broke off" in record.error
    assert "20 steps of its replies were sent" in record.error
    assert "CHORDAL_MAX_STEPS=20" in record.error
    executors_idle(llm_pipeline.store)
    sent = llm_pipeline.store.dispatched(record.query_id)
    ran = llm_pipeline.store.steps(record.query_id)
    assert len(sent) == 20 and len(ran) <= 20 and set(ran) <= set(sent)
    assert {d.attempt for d in llm_pipeline.store.record(record.query_id).dispatch} == {1}


def test_a_final_plan_that_does_not_fit_beside_what_rejected_replies_sent_fails_naming_the_setting(
        llm_pipeline):
    """The first reply's 20 steps are sent while it streams, then it fails its checks; the
    second reply's six steps would make 26: the query fails before any of them runs."""
    llm_pipeline.fake_llm.load([
        {"match": "Northwind", "token_delay": 0.002,
         "content": computes(1, answer="{{ V1 }} and {{ 999 }}")},  # a figure of its own
        {"match": "Northwind", "content": reply(SIX)}])
    record = llm_pipeline.ask(QUESTION)
    assert record.status == "failed" and record.answer is None
    assert [p.code for p in record.problems] == ["too_many_steps"]
    assert "20 steps it does not use: 26 in all" in record.error
    assert "CHORDAL_MAX_STEPS" in record.error and "CHORDAL_MAX_STEPS" in record.problems[0].message
    executors_idle(llm_pipeline.store)
    assert len(llm_pipeline.store.dispatched(record.query_id)) == 20
    assert all(s.operation == "COMPUTE" for s in llm_pipeline.store.steps(record.query_id).values())

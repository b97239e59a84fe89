"""The run store and the step runner on the real Redis of the test stack."""

from __future__ import annotations

import time

import pytest

from shared import naming
from shared.journey.dispatch import PlanDispatch, joined, next_steps
from shared.errors import PlanError
from shared.models import Answer, GetStep, Plan, Query, StepTask
from shared.journey.steps import error_result, run_step, step_base

from ..conftest import graph_steps

pytestmark = pytest.mark.integration


def test_a_query_past_its_deadline_is_swept_to_failed_with_the_reason(bare_store):
    store = bare_store  # no workers here: they sweep too
    query = Query(question="never planned", deadline_s=1, created_at=time.time() - 5)
    assert store.create(query)  # recorded, but no task sent: nothing will ever answer it
    assert query.id in store.sweep_expired()
    record = store.record(query.id)
    assert record.status == "failed"
    assert "deadline exceeded while queued" in record.error
    assert query.id not in store.sweep_expired()  # swept once


def test_an_answer_past_the_deadline_fails_the_query_whether_or_not_it_was_swept(bare_store):
    store = bare_store
    late = Query(question="answered late", deadline_s=1, created_at=time.time() - 5)
    in_time = Query(question="answered in time", deadline_s=600, created_at=time.time())
    for query in (late, in_time):
        assert store.create(query)
        store.set_status(query.id, "finalizing")
    assert store.finish(late.id, Answer(text="42"), finalizer_task="t1") is False
    record = store.record(late.id)
    assert (record.status, record.answer) == ("failed", None)
    assert record.error.startswith("deadline exceeded while finalizing")
    assert record.finalizer_runs == 1  # the run that came late is still counted
    assert late.id not in store.sweep_expired()  # failed once
    assert store.finish(in_time.id, Answer(text="42")) is True
    assert store.record(in_time.id).status == "done"


def test_a_query_id_is_submitted_once(pipeline):
    query = Query(question="twice", created_at=time.time())
    assert pipeline.store.create(query) is True
    assert pipeline.store.create(query) is False


def test_a_query_is_answered_or_failed_exactly_once(pipeline):
    store = pipeline.store
    query = Query(question="race", created_at=time.time())
    store.create(query)
    assert store.fail(query.id, "first") is True
    assert store.fail(query.id, "second") is False
    assert store.record(query.id).error == "first"


def test_the_run_store_expires_records_after_the_configured_ttl(pipeline):
    record = pipeline.ask("fetch", {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}]})
    # answered before its deadline: kept the run TTL past that deadline
    most = pipeline.settings.run_ttl_s + pipeline.settings.query_timeout_s + 1
    for key in (naming.run_key(record.query_id), naming.steps_key(record.query_id)):
        assert pipeline.settings.run_ttl_s <= pipeline.store.r.ttl(key) <= most, key


def test_a_step_delivered_past_the_cap_is_reported_not_run_again(pipeline):
    store = pipeline.store
    task = StepTask(query_id=f"cap-{time.time_ns()}",
                    step=GetStep(id="E1", operation="GET", source="Tesla Q3 2023 Financial Report"))
    for _ in range(3):
        store.count_delivery(naming.action_id(task.query_id, "E1"))
    result = run_step(task, store, backend=None, max_deliveries=3)
    assert result.status == "error" and result.error_code == "REDELIVERY_CAP"
    assert store.step(task.query_id, "E1") == result


def test_a_redelivered_step_returns_the_stored_result_unchanged(pipeline):
    from shared.search import open_backend
    store = pipeline.store
    task = StepTask(query_id=f"redo-{time.time_ns()}",
                    step=GetStep(id="E1", operation="GET", source="Tesla Q3 2023 Financial Report"))
    backend = open_backend(pipeline.settings)
    first = run_step(task, store, backend)
    again = run_step(task, store, backend)
    assert first.status == "ok" and again == first
    assert first.reference() == {"action_id": f"{task.query_id}:E1", "status": "ok"}


def test_the_join_is_claimed_once_every_step_is_stored_and_again_only_by_its_owner(bare_store):
    """Counting stored results (first write wins) counts a step once however often it
    ran; one task, and that task's redelivery, may send the finalizer."""
    store = bare_store
    plan = Plan.model_validate({"steps": [
        {"id": s, "operation": "COMPUTE", "expression": "1", "output_var": f"${s}"}
        for s in ("A", "B", "C")]})
    query = Query(question="join?", plan=plan)
    store.create(query)
    graph = {g.task.step.id: g for g in graph_steps(query.id, plan)}
    store.close_graph(query.id, plan, [], list(graph.values()), "whole", 20)

    def join(owner: str) -> bool:
        return joined(store, store.graph(query.id), query.id, owner)

    def store_step(step_id: str) -> None:
        store.put_step(query.id, error_result(step_base(graph[step_id].task), "TEST", "stored"))

    store_step("A")
    store_step("A")  # a redelivered A: still one stored step
    store_step("B")
    assert not join("task-of-B")
    store_step("C")
    assert join("task-of-C")
    assert not join("task-of-B-again")
    assert join("task-of-C")  # C redelivered: may send it again


def commands(store) -> int:
    """Commands the store's Redis has run so far (those inside scripts too)."""
    return int(store.r.info("stats")["total_commands_processed"])


def test_a_stored_step_claims_what_it_readies_and_the_join_in_one_read_and_one_write(
        bare_store):
    """The script that stores a step claims the steps it makes ready and the join (once;
    again only for the same task, redelivered), reading the run hash once and writing it
    once: 4 commands for a step of a graph its worker knows; a step that reads nothing
    starts in 3."""
    store = bare_store
    plan = Plan.model_validate({"steps": [compute("A"), compute("B", "$A + 1"), compute("C")]})
    query = Query(question="claims?", plan=plan)
    store.create(query)
    graph = {g.task.step.id: g for g in graph_steps(query.id, plan)}
    closing = store.close_graph(query.id, plan, [], list(graph.values()), "whole", 20,
                                "executing", "planner")
    assert closing.claimed == ("A", "C") and not closing.joined

    def put(step_id: str, owner: str):
        stored = store.put_step_and_dispatch(
            query.id, error_result(step_base(graph[step_id].task), "TEST", "stored"), owner,
            graph)
        return [t.step.id for t in stored.send], stored.joined

    assert put("A", "task-A") == (["B"], False)
    assert put("A", "task-A") == (["B"], False)  # A redelivered: sends B again
    assert put("A", "another") == ([], False)
    assert store.start_step(query.id, "A")[0].error_code == "TEST"  # A redelivered once more
    before = commands(store)
    assert store.start_step(query.id, "C") == (None, 1, {})
    assert commands(store) - before == 3 + 1  # a step that reads nothing; + INFO
    assert put("C", "task-C") == ([], False)
    before = commands(store)
    assert put("B", "task-B") == ([], True)
    assert commands(store) - before == 4 + 1
    assert put("B", "task-B") == ([], True) and put("B", "another") == ([], False)
    assert store.graph(query.id).stored == {"A", "B", "C"}


def compute(step_id: str, expression: str = "1") -> dict:
    return {"id": step_id, "operation": "COMPUTE", "expression": expression,
            "output_var": f"${step_id}"}


def test_an_open_graph_never_joins_and_a_step_sent_then_left_out_is_not_waited_for(bare_store):
    """Steps offered while a reply streams run at once; the finalizer waits for the plan
    to be closed, and not for a step sent before its reply failed that no plan keeps."""
    store, sent, finalized = bare_store, [], []
    query = Query(question="stream?")
    store.create(query)
    dispatch = PlanDispatch(store, query.id, "planner", sent.append, finalized.append)
    dispatch.begin(time.time())
    dispatch.offer(Plan.model_validate({"steps": [compute("A")]}).steps[0])
    assert [t.step.id for t in sent] == ["A"]
    view = store.graph(query.id)
    assert not view.closed and not joined(store, view, query.id, "task-of-A")
    dispatch.begin(time.time())  # a retry that keeps nothing of the first reply
    final = dispatch.close(Plan.model_validate({"steps": [compute("A", "2"), compute("B", "3")]}),
                           [], "streamed")
    assert [s.id for s in final.steps] == ["A_2", "B"] and store.plan(query.id) == final
    assert [t.step.id for t in sent] == ["A", "A_2", "B"] and finalized == []
    for task in sent[1:]:  # A, sent for the rejected reply, has not reported
        store.put_step(query.id, error_result(step_base(task), "TEST", "stored"))
    assert joined(store, store.graph(query.id), query.id, "task-of-B")
    assert run_step(sent[0], store, backend=None) is None  # its executor skips it
    record = store.record(query.id)
    assert record.plan_mode == "streamed" and "A" not in {s.step_id for s in record.steps}
    assert [(d.step_id, d.attempt, d.in_plan, d.dropped) for d in record.dispatch] == [
        ("A_2", 2, True, False), ("B", 2, True, False), ("A", 1, False, False)]
    assert all(d.after_reply_start_ms is not None for d in record.dispatch)


def test_closing_drops_a_rejected_replys_steps_never_sent_and_no_task_sends_them_later(
        bare_store):
    store, sent = bare_store, []
    query = Query(question="dropped?")
    store.create(query)
    dispatch = PlanDispatch(store, query.id, "planner", sent.append, lambda q: None)
    dispatch.begin(time.time())
    for step in Plan.model_validate({"steps": [compute("A"), compute("B", "$A + 1")]}).steps:
        dispatch.offer(step)  # A is sent, B waits for A
    dispatch.begin(time.time())
    dispatch.close(Plan.model_validate({"steps": [compute("C", "3")]}), [], "streamed")
    store.put_step(query.id, error_result(step_base(sent[0]), "TEST", "stored"))  # A ends
    view = store.graph(query.id)
    assert view.left == {"A", "B"}
    assert next_steps(store, view, query.id, "A", "task-of-A") == []  # B is not sent
    assert PlanDispatch(store, query.id, "planner", sent.append, lambda q: None).resume()
    assert [t.step.id for t in sent] == ["A", "C"]
    assert [(d.step_id, d.in_plan, d.dropped) for d in store.record(query.id).dispatch] == [
        ("C", True, False), ("A", False, False), ("B", False, True)]


def test_the_graph_never_holds_more_than_the_step_budget_whoever_adds_to_it(bare_store):
    """Two deliveries of one planner stream at once (a redelivered one beside the one
    thought dead): together they add at most `max_steps` steps, the rest wait for the
    final plan, and a plan that does not fit beside what was sent fails naming the
    setting."""
    store, sent = bare_store, []
    query = Query(question="budget?")
    store.create(query)
    planners = [PlanDispatch(store, query.id, f"planner-{i}", sent.append, lambda q: None,
                             max_steps=5) for i in (1, 2)]
    for p in planners:
        p.begin(time.time())
    for i in range(4):
        for p in planners:
            p.offer(Plan.model_validate({"steps": [compute(f"S{p.owner[-1]}x{i}", str(i))]}
                                        ).steps[0])
    assert len(store.graph(query.id).steps) == 5 and len(sent) == 5
    with pytest.raises(PlanError) as failed:
        planners[0].close(Plan.model_validate({"steps": [compute("N", "9")]}), [], "streamed")
    assert failed.value.problems[0].code == "too_many_steps"
    assert "5 steps it does not use" in failed.value.message
    assert "CHORDAL_MAX_STEPS" in failed.value.message
    assert not store.graph(query.id).closed and store.plan(query.id) is None


def test_a_redelivered_planner_sends_what_the_killed_one_added_and_nothing_twice(bare_store):
    store = bare_store
    query = Query(question="killed?")
    store.create(query)
    plan = Plan.model_validate({"steps": [compute("A"), compute("B", "$A + 1")]})
    store.add_to_graph(query.id, graph_steps(query.id, plan), 20)  # added, then SIGKILL
    sent = []
    again = PlanDispatch(store, query.id, "planner", sent.append, lambda q: None)
    assert again.resume() is False  # not closed: plan on
    assert [t.step.id for t in sent] == ["A"]
    assert again.resume() is False and [t.step.id for t in sent] == ["A"]  # marked sent
    again.begin()
    final = again.close(plan, [], "streamed")
    assert [s.id for s in final.steps] == ["A", "B"] and [t.step.id for t in sent] == ["A"]


def test_a_batch_query_past_its_queue_wait_budget_fails_naming_the_setting(bare_store):
    from shared.stores.batches import BatchStore
    store, now = bare_store, time.time()
    query = Query(question="waited too long", queue_wait_s=2, deadline_s=600, created_at=now - 5)
    assert BatchStore(store.r, 3600).create("b-wait", [(1, query)]) == ["new"]
    assert store.sweep_expired(now) == [query.id]
    error = store.record(query.id).error
    assert "waited in the queue longer than CHORDAL_BATCH_QUEUE_WAIT_S=2s" in error


def test_a_batch_query_taken_from_the_queue_gets_its_run_deadline_from_then_once(bare_store):
    store, now = bare_store, time.time()
    query = Query(question="planned late", queue_wait_s=3600, deadline_s=60, created_at=now - 100)
    assert store.create(query)
    assert store.r.zscore(naming.deadlines_key(), query.id) == pytest.approx(now - 100 + 3600)
    planned = store.leave_queue(query, "planning")
    assert planned.planned_at >= now and planned.deadline_at == planned.planned_at + 60
    assert store.r.zscore(naming.deadlines_key(), query.id) == pytest.approx(planned.deadline_at)
    again = store.leave_queue(query, "planning")  # a redelivered plan message
    assert again.planned_at == planned.planned_at
    assert store.r.zscore(naming.deadlines_key(), query.id) == pytest.approx(planned.deadline_at)


def test_a_batch_query_taken_past_its_queue_wait_budget_is_failed_not_planned(bare_store):
    query = Query(question="too late", queue_wait_s=1, deadline_s=60, created_at=time.time() - 5)
    assert bare_store.create(query)
    assert bare_store.leave_queue(query, "planning") is None
    record = bare_store.record(query.id)
    assert record.status == "failed" and "planning" not in record.timings
    assert "waited in the queue longer than CHORDAL_BATCH_QUEUE_WAIT_S=1s" in record.error


def test_a_single_question_keeps_one_deadline_from_when_it_was_asked(bare_store):
    query = Query(question="asked", deadline_s=60, created_at=time.time() - 100)
    assert bare_store.create(query)
    assert bare_store.leave_queue(query, "planning").deadline_at == query.created_at + 60
    assert query.id in bare_store.sweep_expired()
    assert "deadline exceeded while planning" in bare_store.record(query.id).error


def test_a_plans_first_delivery_is_counted_as_it_leaves_the_queue_and_a_later_one_moves_nothing(
        bare_store):
    store, now = bare_store, time.time()
    query = Query(question="counted", queue_wait_s=3600, deadline_s=60, created_at=now - 100)
    assert store.create(query)
    action = naming.plan_action_id(query.id)
    delivery, planned = store.count_and_leave_queue(query, "planning", action)
    assert delivery == 1 and planned.planned_at >= now
    assert store.r.zscore(naming.deadlines_key(), query.id) == pytest.approx(planned.deadline_at)
    assert store.count_and_leave_queue(query, "planning", action) == (2, None)
    assert store.deliveries(query.id) == {"plan": 2} and store.status(query.id) == "planning"
    late = Query(question="too late", queue_wait_s=1, deadline_s=60, created_at=now - 5)
    assert store.create(late)
    assert store.count_and_leave_queue(late, "planning",
                                       naming.plan_action_id(late.id)) == (1, None)
    record = store.record(late.id)
    assert record.status == "failed" and "planning" not in record.timings
    ended = Query(question="cancelled while queued")
    assert store.create(ended) and store.cancel([ended.id], "test") == ["cancelled"]
    assert store.count_and_leave_queue(ended, "planning",
                                       naming.plan_action_id(ended.id)) == (1, None)
    assert store.status(ended.id) == "cancelled"

"""The run store and the step runner on the real Redis of the test stack."""

from __future__ import annotations

import time

import pytest

from shared import queues
from shared.dispatch import joined, step_task
from shared.models import GetStep, Plan, Query, StepTask
from shared.steps import error_result, run_step, step_base

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
    ttl = pipeline.store.r.ttl(queues.run_key(record.query_id))
    assert 0 < ttl <= pipeline.settings.run_ttl_s
    assert 0 < pipeline.store.r.ttl(queues.steps_key(record.query_id)) <= pipeline.settings.run_ttl_s


def test_a_step_delivered_past_the_cap_is_reported_not_run_again(pipeline):
    store = pipeline.store
    task = StepTask(query_id=f"cap-{time.time_ns()}",
                    step=GetStep(id="E1", operation="GET", source="Tesla Q3 2023 Financial Report"))
    for _ in range(3):
        store.count_delivery(queues.action_id(task.query_id, "E1"))
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
    store.save_plan(query.id, plan)

    def join(owner: str) -> bool:
        return joined(store, plan, query.id, owner, store.stored_steps(query.id))

    def store_step(step_id: str) -> None:
        task = step_task(query.id, plan, step_id)
        store.put_step(query.id, error_result(step_base(task), "TEST", "stored"))

    store_step("A")
    store_step("A")  # a redelivered A: still one stored step
    store_step("B")
    assert not join("task-of-B")
    store_step("C")
    assert join("task-of-C")
    assert not join("task-of-B-again")
    assert join("task-of-C")  # C redelivered: may send it again

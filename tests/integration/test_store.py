"""The run store and the step runner on the real Redis of the test stack."""

from __future__ import annotations

import time

import pytest

from shared import queues
from shared.models import GetStep, Query, StepTask
from shared.steps import run_step

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

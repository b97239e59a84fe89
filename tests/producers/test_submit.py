"""The submit path when the broker cannot take the message: the run store is reachable
(the session's bare Redis), the broker is a port nobody listens on."""

from __future__ import annotations

import time

import pytest

from producers.submit import submit
from shared import naming
from shared.broker.app import make_celery
from shared.config import Settings
from shared.errors import StoreError
from shared.models import Query

from ..conftest import free_port


def test_a_query_whose_message_cannot_be_sent_is_withdrawn_and_can_be_submitted_again(bare_store):
    store = bare_store
    nowhere = make_celery(Settings(_env_file=None, redis_url=f"redis://127.0.0.1:{free_port()}/0"))
    nowhere.conf.task_publish_retry_policy = {"max_retries": 1, "interval_start": 0,
                                              "interval_step": 0.1, "interval_max": 0.1}
    query = Query(question="unsent", created_at=time.time())
    with pytest.raises(StoreError, match=rf"could not send query {query.id} to the broker "
                                         r"\(.*\); it was withdrawn, so submitting it again "
                                         "sends it"):
        submit(query, store, nowhere)
    assert store.record(query.id) is None
    assert store.r.zscore(naming.deadlines_key(), query.id) is None
    assert store.create(query)  # the id is free again


def test_withdraw_leaves_a_query_that_has_moved_on(bare_store):
    store = bare_store
    query = Query(question="planned", created_at=time.time())
    assert store.create(query)
    store.set_status(query.id, "planning")
    assert store.withdraw(query.id) is False
    assert store.status(query.id) == "planning"

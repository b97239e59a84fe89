"""The search store down for a while: GET retries with backoff inside the step, then
reports SEARCH_UNAVAILABLE; the query still finishes (no query waits on the store)."""

from __future__ import annotations

import time

import pytest

from .conftest import TESLA, assert_one_outcome, plan, wait_all

pytestmark = pytest.mark.faults


def test_a_search_outage_shorter_than_the_retries_is_invisible_and_a_longer_one_is_reported(
        faulty_stack):
    p = faulty_stack()
    brief = p.submit("yield?", plan(f"[down-until {time.time() + 0.3}] {TESLA}"))
    long = p.submit("yield?", plan(f"[down-until {time.time() + 600}] {TESLA}"))
    records = wait_all(p.store, [brief.id, long.id], 30)
    assert_one_outcome(p.store, records)

    ok = records[brief.id]
    assert ok.status == "done" and ok.steps[0].status == "ok"
    assert ok.answer.text.startswith("Battery yield was 9")

    down = records[long.id]
    get, extract = down.steps
    assert get.error_code == "SEARCH_UNAVAILABLE"
    assert get.error_message.endswith("(after 3 attempts)")
    assert "injected fault" in get.error_message
    assert extract.error_code == "INPUT_FAILED"

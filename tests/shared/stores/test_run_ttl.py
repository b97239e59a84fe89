"""A query's keys get their TTL once, not at every write (shared/stores/retire.py): a running
query's live `CHORDAL_RUN_TTL_S` past its last deadline, a finished one's until then, or
`CHORDAL_RUN_TTL_S` from its end when that is later; its delivery counters and send
times are fields of its record, folded when it ends. On the bare Redis of the test
session."""

from __future__ import annotations

import threading
import time

from shared import naming
from shared.journey.dispatch import PlanDispatch
from shared.models import Plan, Query
from shared.journey.steps import error_result, step_base

TTL = 3600
PLAN = Plan.model_validate({"steps": [
    {"id": "E1", "operation": "COMPUTE", "expression": "1", "output_var": "$A"},
    {"id": "E2", "operation": "COMPUTE", "expression": "$A + 1", "output_var": "$B"}]})


def started(store, deadline_s: float = 600.0,
            created_at: float | None = None) -> tuple[Query, list]:
    """A query created (at `created_at`, else now), its plan closed (E1 sent) and E1
    delivered and stored."""
    query = Query(question="how long do my keys live?", deadline_s=deadline_s,
                  created_at=created_at or time.time())
    assert store.create(query)
    sent = []
    PlanDispatch(store, query.id, "planner", sent.append, lambda q: None,
                 first=True).close(PLAN, [], "whole", "executing")
    store.count_delivery(naming.plan_action_id(query.id))
    store.start_step(query.id, "E1")
    store.put_step_and_dispatch(query.id, error_result(step_base(sent[0]), "TEST", "stored"),
                                "executor")
    return query, sent


def test_a_running_querys_keys_outlive_its_deadline_by_the_run_ttl(bare_store):
    query, sent = started(bare_store, deadline_s=600)
    r = bare_store.r
    for key in (naming.run_key(query.id), naming.steps_key(query.id)):
        assert TTL + 600 - 5 <= r.ttl(key) <= TTL + 600 + 1, key
    assert not r.exists(naming.graph_key(query.id))  # the graph lives in the run hash
    assert [t.step.id for t in sent] == ["E1"]


def test_a_query_ended_before_its_deadline_keeps_its_record_and_results_past_it(bare_store):
    query, _ = started(bare_store, deadline_s=600)
    assert bare_store.fail(query.id, "ended by the test")
    r = bare_store.r
    for key in (naming.run_key(query.id), naming.steps_key(query.id)):
        assert TTL + 600 - 5 <= r.ttl(key) <= TTL + 600 + 1, key
    assert not r.exists(naming.graph_key(query.id))


def test_a_query_ended_past_its_deadline_keeps_its_record_and_results_the_run_ttl_from_its_end(
        bare_store):
    query, _ = started(bare_store, deadline_s=60, created_at=time.time() - 120)
    assert bare_store.fail(query.id, "swept late by the test")
    r = bare_store.r
    for key in (naming.run_key(query.id), naming.steps_key(query.id)):
        assert TTL - 5 <= r.ttl(key) <= TTL, key


def test_counters_and_send_times_live_in_the_record_and_fold_when_it_ends(bare_store):
    query, _ = started(bare_store)
    r = bare_store.r
    sent_at = bare_store.dispatched(query.id)
    bare_store.mark_dispatched(query.id, ["E1"], 1.0)  # the first send time stays
    assert set(sent_at) == {"E1"} and bare_store.dispatched(query.id) == sent_at
    assert not r.exists(naming.deliveries_key(naming.plan_action_id(query.id)),
                        naming.dispatched_key(query.id))
    assert bare_store.deliveries(query.id) == {"plan": 1, "E1": 1}
    assert bare_store.fail(query.id, "ended by the test")
    fields = r.hkeys(naming.run_key(query.id))
    assert not [f for f in fields if f.startswith(("sent:", "delivered:", "expires"))]
    assert bare_store.deliveries(query.id) == {"plan": 1, "E1": 1}
    assert bare_store.dispatched(query.id) == sent_at


def test_waiters_blocked_on_a_query_are_all_woken_and_leave_its_done_list_as_it_was(
        bare_store):
    query, _ = started(bare_store)
    records = []
    waiters = [threading.Thread(target=lambda: records.append(bare_store.wait(query.id, 20)))
               for _ in range(2)]
    for w in waiters:
        w.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sum(
            c.get("cmd") in ("blmove", "blpop") for c in bare_store.r.client_list()) < 2:
        time.sleep(0.02)
    assert bare_store.fail(query.id, "ended by the test")
    for w in waiters:
        w.join(30)
    assert [r.status for r in records] == ["failed", "failed"]
    assert bare_store.r.lrange(naming.done_key(query.id), 0, -1) == ["failed"]

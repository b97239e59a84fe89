"""Workers and Redis dying under a batch. What the tests show (Redis transport, acks late):

- An executor SIGKILLed mid-step leaves its reserved messages in Redis' `unacked` hash;
  kombu gives them back only after CHORDAL_VISIBILITY_TIMEOUT_S (default 3600 s, at
  least 60 s), so a fresh executor does not see them in time. The chords of those
  queries never complete and the deadline sweeper (`chordal up`, the API, `chordal
  enqueue/wait` run it) fails them with the reason; every other query is answered once.
- Redis restarted (AOF, same dir) mid-batch: workers reconnect and every query ends.
- No executor at all: the sweeper fails the query past its deadline, naming the status.
"""

from __future__ import annotations

import base64
import json
import time

import pytest

from shared.stack.workers import WorkerProcess

from .conftest import TESLA, assert_one_outcome, plan, wait_all

pytestmark = pytest.mark.faults


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def unacked_steps(store) -> dict[str, str]:
    """Delivery tag -> query id of every step message a worker holds unacknowledged
    (kombu's Redis transport parks them in the `unacked` hash until acked or restored)."""
    held = {}
    for tag, raw in store.r.hgetall("unacked").items():
        message, _exchange, routing_key = json.loads(raw)
        if routing_key != "execute":
            continue
        body = message["body"]
        if message["properties"].get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        held[tag] = args[0]["query_id"]
    return held


def sleep_past_deadline(store, ids: list[str]) -> None:
    scores = [store.r.zscore("chordal:deadlines", q) for q in ids]
    time.sleep(max(0.0, max(s for s in scores if s is not None) + 0.1 - time.time()))


def test_a_query_whose_chord_never_completes_is_failed_by_the_sweeper_with_the_reason(
        faulty_stack):
    p = faulty_stack(roles=("planner", "finalizer"))  # nobody consumes `execute`
    query = p.submit("yield?", plan(), deadline_s=2)
    wait_for(lambda: p.store.status(query.id) == "executing", 15, "the plan to be dispatched")
    assert p.store.sweep_expired() == []  # not yet past its deadline
    sleep_past_deadline(p.store, [query.id])
    assert p.store.sweep_expired() == [query.id]
    record = p.store.wait(query.id, 1)
    assert record.status == "failed"
    assert record.error.startswith("deadline exceeded while executing")
    assert_one_outcome(p.store, {query.id: record})
    assert p.store.sweep_expired() == []  # swept once


def test_an_executor_killed_mid_batch_loses_only_its_reserved_steps_to_the_sweeper(
        faulty_stack):
    p = faulty_stack(executor_concurrency=2)
    stack = p.stack
    slow = [p.submit(f"yield {i}?", plan(f"[slow 4] {TESLA}"), deadline_s=15) for i in range(4)]
    # two steps running, two reserved by nobody yet (prefetch 1 x 2 threads)
    wait_for(lambda: len(unacked_steps(p.store)) >= 2, 15, "the executor to take two steps")
    old = next(w for w in stack.workers if w.role == "executor")
    old.kill()
    assert not old.alive
    held = unacked_steps(p.store)
    taken = len(held)
    new = WorkerProcess("executor", stack.settings, env=p.worker_env)
    stack.workers.append(new)  # stopped with the stack, by its PID
    new.start()
    new.wait_ready(timeout=30)
    after = [p.submit(f"yield after {i}?", plan(), deadline_s=15) for i in range(2)]
    ids = [q.id for q in slow + after]

    # Let the new executor drain what it can, then sweep at the deadline as `chordal up`.
    wait_for(lambda: sum(p.store.status(q) in ("done", "failed") for q in ids)
             >= len(ids) - taken, 30, "the steps nobody holds to finish")
    sleep_past_deadline(p.store, ids)
    swept = set(p.store.sweep_expired())
    records = wait_all(p.store, ids, 5)
    assert_one_outcome(p.store, records)

    failed = {q for q, r in records.items() if r.status == "failed"}
    assert failed == swept == set(held.values()) and taken == 2
    assert failed <= {q.id for q in slow}
    for qid in failed:
        assert records[qid].error.startswith("deadline exceeded while executing")
        assert records[qid].steps == []  # the killed worker never stored E1
    # the killed worker's messages are still parked, waiting out the visibility timeout
    assert unacked_steps(p.store) == held
    for qid in set(ids) - failed:
        assert records[qid].answer.text.startswith("Battery yield was 9")


def test_redis_restarted_mid_batch_loses_no_query(faulty_stack):
    p = faulty_stack()
    queries = [p.submit(f"yield {i}?", plan(f"[slow 1] {TESLA}"), deadline_s=60)
               for i in range(6)]
    wait_for(lambda: p.store.r.hlen("unacked") >= 1, 15, "steps to be running")
    time.sleep(1.5)  # let AOF (appendfsync everysec) write what was enqueued
    p.stack.redis.stop()
    time.sleep(1)
    p.stack.redis.start()
    records = wait_all(p.store, [q.id for q in queries], 60)
    assert_one_outcome(p.store, records)
    assert all(r.status == "done" for r in records.values()), {
        q: (r.status, r.error) for q, r in records.items()}
    assert all(w.alive for w in p.stack.workers)


SLOW_TEMPLATE = ("{% for i in range(100000) %}{% for j in range(5000) %}{% endfor %}"
                 "{% endfor %}Done: {{ X }}")


def test_a_finalizer_killed_mid_task_leaves_exactly_one_outcome(faulty_stack):
    p = faulty_stack()
    slow = p.submit("slow finalize", {"steps": [
        {"id": "C", "operation": "COMPUTE", "expression": "1", "output_var": "$X"}],
        "answer": SLOW_TEMPLATE}, deadline_s=8)
    deadline = time.monotonic() + 20
    while p.store.status(slow.id) != "finalizing":  # rendering: the finalizer is busy
        assert time.monotonic() < deadline, p.store.status(slow.id)
        time.sleep(0.05)
    finalizer = next(w for w in p.stack.workers if w.role == "finalizer")
    finalizer.kill()
    fresh = WorkerProcess("finalizer", p.settings, env=p.worker_env)
    p.stack.workers.append(fresh)  # the fixture stops it by PID
    fresh.start()
    fresh.wait_ready(30)
    other = p.submit("after the kill", plan())
    assert p.store.wait(other.id, 30).status == "done"
    # the killed task's message waits for the visibility timeout; the deadline ends it
    deadline = time.monotonic() + 20
    while slow.id not in p.store.sweep_expired():
        assert time.monotonic() < deadline, p.store.status(slow.id)
        time.sleep(0.2)
    records = wait_all(p.store, [slow.id, other.id], 10)
    assert_one_outcome(p.store, records)
    assert records[slow.id].status == "failed"
    assert "deadline exceeded while finalizing" in records[slow.id].error
    assert records[slow.id].finalizer_runs == 1

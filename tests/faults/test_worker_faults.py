"""Workers and Redis dying under a batch. What the tests show (Redis transport, acks late):

- An executor or a finalizer SIGKILLed mid-task leaves the messages it held in Redis'
  `unacked` hash, where kombu alone would leave them for CHORDAL_VISIBILITY_TIMEOUT_S
  (an hour by default). Once its heartbeat is CHORDAL_WORKER_DEAD_AFTER_S old, a live
  worker gives them back to their queue (shared/broker/recovery.py) and every query is answered,
  each once.
- Redis restarted (AOF, same dir) mid-batch: workers reconnect and every query ends.
- No executor at all: the sweeper fails the query past its deadline, naming the status.
"""

from __future__ import annotations

import time

import pytest

from shared import naming

from .conftest import (TESLA, assert_one_outcome, kill_worker, plan, start_worker,
                       unacked_step_tasks, wait_all, wait_for)

pytestmark = pytest.mark.faults


def unacked_steps(store) -> dict[str, str]:
    """Delivery tag -> query id of every step message a worker holds unacknowledged."""
    return {tag: task["query_id"] for tag, task in unacked_step_tasks(store).items()}


def test_a_query_whose_steps_never_report_is_failed_by_the_workers_sweeper_with_the_reason(
        faulty_stack):
    p = faulty_stack(roles=("planner", "finalizer"),  # nobody consumes `execute`
                     worker_dead_after_s=2)  # the workers sweep every 0.4 s
    query = p.submit("yield?", plan(), deadline_s=2)
    wait_for(lambda: p.store.status(query.id) == "executing", 15, "the plan to be dispatched")
    record = p.store.wait(query.id, 15)  # no `chordal up`, no API: the workers sweep
    assert record.status == "failed"
    assert record.error.startswith("deadline exceeded while executing")
    assert record.timings["failed"] >= query.created_at + 2  # not before its deadline
    assert_one_outcome(p.store, {query.id: record})
    assert p.store.sweep_expired() == []  # swept once


def test_an_executor_killed_mid_batch_has_its_steps_given_back_and_every_query_answered(
        faulty_stack):
    p = faulty_stack(executor_concurrency=2, worker_dead_after_s=3)
    slow = [p.submit(f"yield {i}?", plan(f"[slow 4] {TESLA}"), deadline_s=60) for i in range(4)]
    # two steps running, two waiting in the queue (prefetch 1 x 2 threads), a batch behind
    wait_for(lambda: len(unacked_steps(p.store)) >= 2, 15, "the executor to take two steps")
    batch = [p.submit(f"yield {i} later?", plan(), deadline_s=60) for i in range(20)]
    kill_worker(p, "executor")
    held = unacked_steps(p.store)
    assert len(held) == 2
    owners = {v.split("|")[0] for v in p.store.r.hmget(naming.held_messages_key(), list(held))}
    assert len(owners) == 1 and owners.pop().startswith("executor")  # recorded as its
    start_worker(p, "executor")
    after = [p.submit(f"yield after {i}?", plan(), deadline_s=60) for i in range(2)]
    ids = [q.id for q in slow + batch + after]

    records = wait_all(p.store, ids, 60)
    assert_one_outcome(p.store, records)
    assert {q: r.status for q, r in records.items()} == {q: "done" for q in ids}, {
        q: r.error for q, r in records.items()}
    for record in records.values():
        assert record.answer.text.startswith("Battery yield was 9")
    # the killed worker's steps ran a second time, on the new executor, and nothing is
    # left parked for the visibility timeout
    for qid in set(held.values()):
        assert p.store.deliveries(qid)["E1"] == 2
    assert unacked_steps(p.store) == {}
    assert p.store.r.hlen(naming.held_messages_key()) == 0


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


# about 3 s of rendering on this machine (the sandbox caps one range at 100,000)
SLOW_TEMPLATE = ("{% for i in range(20000) %}{% for j in range(5000) %}{% endfor %}"
                 "{% endfor %}Done: {{ X }}")


def test_a_finalizer_killed_mid_task_has_its_callback_run_again_and_answers_once(
        faulty_stack):
    p = faulty_stack(worker_dead_after_s=3, render_budget_s=60)
    slow = p.submit("slow finalize", {"steps": [
        {"id": "C", "operation": "COMPUTE", "expression": "1", "output_var": "$X"}],
        "answer": SLOW_TEMPLATE}, deadline_s=60)
    wait_for(lambda: p.store.status(slow.id) == "finalizing", 20,
             "the finalizer to be rendering")
    kill_worker(p, "finalizer")
    start_worker(p, "finalizer")
    other = p.submit("after the kill", plan())
    records = wait_all(p.store, [slow.id, other.id], 60)
    assert_one_outcome(p.store, records)  # finalizer_runs == 1: the killed run is not counted
    assert records[slow.id].status == "done", records[slow.id].error
    assert records[slow.id].answer.text.startswith("Done: 1")
    assert records[other.id].status == "done"

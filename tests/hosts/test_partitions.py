"""Partitions, not just kills: Chordal's roles on separate test hosts (network
namespaces, tests/hosts/cluster.py) with a batch in flight while a host's link is cut
and restored. Each scenario asserts what a user needs: every query terminal with exactly
one outcome (one finalizer run when answered), nothing left taken and unacknowledged or
recorded as held, and prints how long recovery took."""

from __future__ import annotations

import time

from shared import naming
from shared.stores.retire import DELIVERED

from ..faults.conftest import TESLA, assert_one_outcome, unacked_step_tasks, wait_all
from ..faults.conftest import plan as faults_plan
from .conftest import wait_for


def plan(slow_s: float = 0.0) -> dict:
    """GET the Tesla report (held `slow_s` seconds by its executor), extract the yield."""
    return faults_plan(f"[slow {slow_s}] {TESLA}" if slow_s else TESLA)


def test_a_query_crosses_the_hosts_and_is_answered(hosts):
    h = hosts(executors=1)
    record = h.pipeline.ask("What was Tesla's battery yield in Q3 2023?", plan(), timeout=60)
    assert record.status == "done", record.error
    assert record.answer.text.startswith("Battery yield was 91.7")
    settled(h)


def settled(h) -> None:
    """Every message acknowledged and no held-task record left (acks follow the answer)."""
    wait_for(lambda: h.left_over() == (0, 0), 30, "every message acknowledged")


def held_by(h, host: str) -> list[str]:
    """Delivery tags of the messages the workers of `host` hold now."""
    names = [w.name for w in h.workers[host]]
    held = h.pipeline.store.r.hgetall("chordal:held")
    return [tag for tag, value in held.items() if value.split("|", 1)[0] in names]


def started_by(h, host: str) -> list[str]:
    """Delivery tags of the step messages the workers of `host` hold and have started:
    the step's delivery is counted in its run hash (a message only received, or whose
    `start_step` has not run yet, is delivered again as the step's first delivery)."""
    tasks = unacked_step_tasks(h.pipeline.store)
    return [tag for tag in held_by(h, host) if tag in tasks and h.pipeline.store.r.hget(
        naming.run_key(tasks[tag]["query_id"]), DELIVERED + tasks[tag]["step"]["id"])]


def batch(h, n: int, slow_s: float) -> list[str]:
    return [h.pipeline.submit(f"What was Tesla's battery yield in Q3 2023? ({i})", plan(slow_s),
                              deadline_s=180).id for i in range(n)]


def finish(h, ids: list[str], timeout: float) -> dict:
    records = wait_all(h.pipeline.store, ids, timeout)
    assert_one_outcome(h.pipeline.store, records)
    assert all(r.status == "done" for r in records.values()), [
        r.error for r in records.values() if r.status != "done"]
    return records


def test_an_executor_cut_off_past_dead_after_has_its_tasks_answered_once_by_the_others(hosts):
    h = hosts(executors=2, worker_dead_after_s=4)
    ids = batch(h, 8, slow_s=3)
    wait_for(lambda: started_by(h, "exec1"), 30, "exec1 to start a step")
    cut = h.cluster.cut(h.host("exec1"))
    records = finish(h, ids, 90)
    recovered = time.monotonic() - cut
    redone = [s for r in records.values() for s in r.steps if s.attempt > 1]
    assert redone, "no step was delivered again: exec1 held none when it was cut"
    answers = {qid: r.answer.text for qid, r in records.items()}
    h.cluster.restore(h.host("exec1"))
    # exec1 finishes what it held and reports late: first write wins, nothing changes
    exec1 = h.workers["exec1"][0]
    back = wait_for(lambda: exec1.name in __import__("shared.stack.workers", fromlist=["x"])
                    .ping_workers(h.settings.effective_redis_url, [exec1.name]), 60,
                    "exec1 to answer a ping again")
    settled(h)
    after = wait_all(h.pipeline.store, ids, 5)
    assert {qid: r.answer.text for qid, r in after.items()} == answers
    assert all(r.finalizer_runs == 1 for r in after.values())
    more = finish(h, batch(h, 4, slow_s=0), 60)  # it rejoined: the cluster still answers
    assert len(more) == 4
    print(f"\nexecutor cut {len(redone)} held steps: all answered {recovered:.1f} s after the "
          f"cut (dead after 4 s); exec1 back {back:.1f} s after its link")


def test_an_executor_cut_off_briefly_has_nothing_delivered_again(hosts):
    h = hosts(executors=2, worker_dead_after_s=10)
    ids = batch(h, 6, slow_s=2)
    wait_for(lambda: held_by(h, "exec1"), 30, "exec1 to hold a step")
    h.cluster.cut(h.host("exec1"))
    time.sleep(3)
    restored = h.cluster.restore(h.host("exec1"))
    records = finish(h, ids, 90)
    print(f"\nexecutor cut for 3 s: batch done {time.monotonic() - restored:.1f} s after "
          "the link came back")
    assert all(s.attempt == 1 for r in records.values() for s in r.steps)
    settled(h)


def cut_mid_batch(h, host: str, seconds: float) -> float:
    """Cut `host` off for `seconds` once a 10-query batch has two answers; the seconds
    from the restored link to the batch's last answer (every query once, asserted)."""
    ids = batch(h, 10, slow_s=1)
    wait_for(lambda: sum(h.pipeline.store.status(q) == "done" for q in ids) >= 2, 60,
             "two answers")
    h.cluster.cut(h.host(host))
    time.sleep(seconds)
    restored = h.cluster.restore(h.host(host))
    finish(h, ids, 150)
    recovered = time.monotonic() - restored
    settled(h)
    return recovered


def test_the_planner_and_finalizer_host_cut_off_then_restored_loses_no_query(hosts):
    h = hosts(executors=2, worker_dead_after_s=4)
    recovered = cut_mid_batch(h, "control", 10)
    print(f"\nplanner/finalizer host cut for 10 s: batch done {recovered:.1f} s after the "
          "link came back")


def test_redis_unreachable_from_every_host_for_30_s_then_back_loses_no_query(hosts):
    h = hosts(executors=2, worker_dead_after_s=5)
    recovered = cut_mid_batch(h, "redis", 30)
    print(f"\nRedis unreachable for 30 s: batch done {recovered:.1f} s after the link "
          "came back")

"""Messages nobody should send, through real workers on a Redis that speaks TLS to its
ACL users (shared/access/acl.py). The `producers` user may push onto `plan`, and Redis
cannot look inside what it pushes; the `workers` user (any worker host) may push onto
every queue. Each worker runs only its queue's own tasks (shared/broker/admission.py):

- a step task sent to `plan`, Celery built-ins (`celery.accumulate`, whose result the
  `workers` user may not store: Celery then never acknowledged it, and the planner's
  slots stayed taken for good), an unknown task name, the planner's task sent to
  `execute`: each is acknowledged, counted as refused (`chordal status` prints the
  counts) and never run, and no held, in-flight or unacknowledged record of it stays
  behind for recovery to give back;
- the planner's own task carrying a callback (which the planner would send, as the
  `workers` user, to any queue) or asking for its result to be stored: refused the same;
- a queue entry that is not a message at all, which ended the worker that took it (and,
  given back by recovery, the next one): dropped and counted;
- a worker that consumes every queue (`--role all`) refuses a task taken from a queue
  not its own the same way.

After each, the planner answers a question, and again after it is restarted.
"""

from __future__ import annotations

import json

import pytest
import redis

from shared import naming
from shared.broker.app import make_celery
from shared.models import Plan, Query
from shared.broker.census import census
from shared.broker.recovery import consumed_queues

from ..integration.test_redis_tls import missing_tls_redis
from .conftest import plan, start_worker, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.integration]
QUESTION = "What was Tesla's battery yield rate in Q3 2023?"


@pytest.fixture
def acl_stack(faulty_stack):
    """`faulty_stack` on a Redis with TLS and the ACL users; `.workers` is a client
    logged in as the `workers` user, `.as_workers` a Celery app sending as it."""
    if missing_tls_redis() is not None:
        pytest.skip(missing_tls_redis())

    def start(**kw):
        p = faulty_stack(redis_tls=True, **kw)
        p.workers = redis.Redis.from_url(p.stack.worker_url, socket_timeout=5)
        p.as_workers = make_celery(p.stack.worker_settings)
        return p
    return start


def step_task(query_id: str) -> dict:
    """A COMPUTE step of a query nobody asked, as an executor would get it."""
    return {"query_id": query_id, "step": {"id": "E1", "operation": "COMPUTE",
                                           "expression": "6 * 7", "output_var": "$X"}}


def refused(p) -> dict[tuple[str, str], int]:
    """(queue, task) -> messages refused, as `chordal status` reads them."""
    out: dict[tuple[str, str], int] = {}
    for r in census(p.store.r, 60).refused:
        out[(r.queue, r.task)] = out.get((r.queue, r.task), 0) + r.count
    return out


def wait_refused(p, expected: dict[tuple[str, str], int], what: str) -> None:
    try:
        wait_for(lambda: refused(p) == expected, 30, what)
    except AssertionError:
        raise AssertionError(f"{what}: refused {refused(p)}, expected {expected}; "
                             f"{leftovers(p)}") from None


def leftovers(p) -> dict[str, object]:
    """Everything recovery or kombu would give back, and what still waits."""
    r = p.workers
    members = [m.decode() for m in r.zrange(naming.workers_key(), 0, -1)]
    return {"unacked": r.hlen("unacked"), "held": r.hgetall(naming.held_messages_key()),
            "in flight": {m: r.lrange(naming.inflight_key(m), 0, -1) for m in members
                          if r.llen(naming.inflight_key(m))},
            "waiting": {q: r.llen(q) for q in naming.TASK_QUEUES if r.llen(q)}}


def assert_nothing_left(p) -> None:
    wait_for(lambda: leftovers(p) == {"unacked": 0, "held": {}, "in flight": {},
                                      "waiting": {}}, 15, f"nothing left: {leftovers(p)}")


def answered(p, timeout: float = 60) -> None:
    record = p.ask(QUESTION, plan(), timeout=timeout)
    assert record.status == "done", (record.status, record.error, leftovers(p))
    assert "91.7" in record.answer.text


def restart_planner(p) -> None:
    planner = next(w for w in p.stack.workers if w.role == "planner" and w.alive)
    planner.stop()
    start_worker(p, "planner", timeout=90)  # a loaded machine starts Python slowly


def test_tasks_sent_to_a_queue_not_theirs_are_acknowledged_counted_and_never_run(acl_stack):
    p = acl_stack()
    p.app.send_task(naming.TASK_EXTRACT, args=(step_task("q-forged"),), queue="plan",
                    ignore_result=True)
    for _ in range(2):  # the planner's two slots, as the hostile tester filled them
        p.app.send_task("celery.accumulate", args=(1, 2), queue="plan")
    p.app.send_task("chordal.shell", args=("rm -rf / # hostile-argument",), queue="plan",
                    ignore_result=True)
    # what a worker host could push: a built-in and the planner's task to `execute`
    query = Query(question=QUESTION, plan=Plan.model_validate(plan()))
    p.as_workers.send_task("celery.accumulate", args=(1, 2), queue="execute")
    p.as_workers.send_task(naming.TASK_PLAN, args=(query.model_dump(mode="json"),),
                           queue="execute", ignore_result=True)

    wait_refused(p, {("plan", naming.TASK_EXTRACT): 1, ("plan", "celery.accumulate"): 2,
                     ("plan", "(unknown)"): 1, ("execute", "celery.accumulate"): 1,
                     ("execute", naming.TASK_PLAN): 1}, "every forged message refused")
    assert p.store.r.hgetall(naming.steps_key("q-forged")) == {}  # the step never ran
    assert p.store.r.hgetall(naming.run_key(query.id)) == {}  # nor the plan
    assert_nothing_left(p)
    logs = "".join(f.read_text() for f in (p.settings.home / "logs").glob("*.log"))
    assert "refused chordal.shell[" in logs and "hostile-argument" not in logs
    assert "Task celery.accumulate" not in logs  # never received as a task

    batch = p.settings.home / "one.jsonl"
    batch.write_text(json.dumps({"question": QUESTION, "plan": plan()}) + "\n")
    for args in (("enqueue", str(batch), "--batch", "after"), ("wait", "--batch", "after")):
        done = p.cli(*args)
        assert done.returncode == 0, done.stdout + done.stderr
    status = p.cli("status", "--batch", "after")
    assert status.returncode == 0, status.stderr
    assert ("messages refused, never run: execute celery.accumulate 1 (not a Chordal task); "
            "execute chordal.plan 1 (a task of queue plan); plan (unknown) 1 (not a Chordal "
            "task); plan celery.accumulate 2 (not a Chordal task); plan chordal.extract 1 "
            "(a task of queue execute)") in status.stdout, status.stdout

    restart_planner(p)
    answered(p)
    assert_nothing_left(p)


def test_a_planner_task_carrying_a_callback_or_asking_for_its_result_is_refused(acl_stack):
    p = acl_stack()
    callback = p.app.signature(naming.TASK_EXTRACT, args=(step_task("q-linked"),),
                               queue="execute", immutable=True)
    for options in ({"link": callback, "ignore_result": True}, {"ignore_result": False}):
        query = Query(question=QUESTION, plan=Plan.model_validate(plan()))
        assert p.store.create(query)
        p.app.send_task(naming.TASK_PLAN, args=(query.model_dump(mode="json"),),
                        queue="plan", **options)
    wait_refused(p, {("plan", naming.TASK_PLAN): 2}, "both refused")
    assert p.store.r.hgetall(naming.steps_key("q-linked")) == {}
    assert_nothing_left(p)
    answered(p)


def test_queue_entries_that_are_not_messages_are_dropped_and_the_planner_lives_on(acl_stack):
    p = acl_stack()
    planner = next(w for w in p.stack.workers if w.role == "planner")
    compressed = {"body": "eJwDAAAAAAE=", "content-type": "application/json",
                  "content-encoding": "utf-8", "headers": {"compression": "application/x-gzip",
                                                           "task": "chordal.plan", "id": "c"},
                  "properties": {"delivery_tag": "t-1", "body_encoding": "base64",
                                 "delivery_info": {"exchange": "", "routing_key": "plan"}}}
    for entry in ("not json", "[1, 2]", json.dumps({"properties": {}}), json.dumps(compressed),
                  "[" * 100_000):
        p.store.r.lpush("plan", entry)  # as the producers user may
    wait_refused(p, {("plan", "(malformed)"): 5}, "every entry dropped")
    assert planner.alive, planner.log_tail()
    assert_nothing_left(p)
    answered(p)
    restart_planner(p)
    answered(p)


def test_a_worker_consuming_every_queue_refuses_a_task_on_a_queue_not_its_own(acl_stack):
    p = acl_stack(roles=("all",))
    worker = p.stack.workers[0]
    assert consumed_queues(p.workers.zrange(naming.workers_key(), 0, -1)[0].decode()) == \
        sorted(naming.TASK_QUEUES)
    p.app.send_task(naming.TASK_EXTRACT, args=(step_task("q-any"),), queue="plan",
                    ignore_result=True)
    p.as_workers.send_task(naming.TASK_FINALIZE, kwargs={"task": {"query_id": "q-any"}},
                           queue="execute", ignore_result=True)
    p.store.r.lpush("plan", "not json")
    wait_refused(p, {("plan", naming.TASK_EXTRACT): 1, ("execute", naming.TASK_FINALIZE): 1,
                     ("plan", "(malformed)"): 1}, "all three refused")
    assert worker.alive, worker.log_tail()
    assert p.store.r.hgetall(naming.steps_key("q-any")) == {}
    assert p.store.r.hgetall(naming.run_key("q-any")) == {}
    assert_nothing_left(p)
    answered(p)

"""A worker stopped warm (SIGTERM) while it runs a step: the step finishes, is
acknowledged and runs once, and the worker leaves the workers set only then (its
heartbeat stops at the consumer's shutdown, after the pool's tasks ended), so nobody
counts it alive afterwards and nothing is left for recovery to give back."""

from __future__ import annotations

import pytest

from shared import naming

from .conftest import TESLA, plan, start_worker, wait_for

pytestmark = pytest.mark.faults


def test_an_executor_stopped_warm_mid_step_finishes_it_then_leaves_the_workers_set(
        faulty_stack):
    p = faulty_stack()
    query = p.submit("yield?", plan(f"[slow 3] {TESLA}"), deadline_s=60)
    executor = next(w for w in p.stack.workers if w.role == "executor")

    def held_by_executor() -> list[str]:
        return [v for v in p.store.r.hvals(naming.held_messages_key())
                if v.split("|")[0] == executor.name]

    wait_for(lambda: held_by_executor(), 15, "the executor to run the step")
    assert executor.stop() == 0  # warm: the running step ends first
    assert held_by_executor() == []
    assert [m for m in p.store.r.zrange(naming.workers_key(), 0, -1)
            if m.split("|")[0] == executor.name] == []
    start_worker(p, "executor")  # for the EXTRACT step
    record = p.store.wait(query.id, 30)
    assert record.status == "done", record.error
    assert p.store.deliveries(query.id)["E1"] == 1  # finished by the stopped one, once

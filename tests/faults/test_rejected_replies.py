"""Steps a rejected planner reply sent while it streamed, on a real stack whose GETs can
be slowed (fault_tools.py): the final plan reuses what it keeps, and what it does not
keep is never waited for, never sent later, and skipped if it has not started."""

from __future__ import annotations

import pytest

from ..integration.test_streaming import executors_idle, extract, get, reply
from .conftest import assert_one_outcome

pytestmark = pytest.mark.faults
QUESTION = "What was Tesla's Q3 2023 revenue?"
TESLA, NORTHWIND = "Tesla Q3 2023 Financial Report", "Northwind Motors Q3 2023 Financial Report"


def test_a_retry_reuses_what_it_keeps_and_nothing_waits_for_or_runs_what_it_drops(
        faulty_stack, fake_llm):  # noqa: F811
    """Two executor threads. The first reply sends a 30 s GET (E1) and a 10 s GET (E3),
    then a third GET (E4) that waits in the queue behind them; E2 waits for E1; its
    answer prints a figure of its own and is rejected. The retry keeps only the 10 s GET.
    The answer comes as soon as that GET and the retry's EXTRACT are done: E1 is still
    running, E4 is skipped when a thread frees, and E2 is never sent, not even once E1's
    late result is stored."""
    p = faulty_stack(llm_base_url=f"{fake_llm.base_url}/v1", llm_model="replay",
                     llm_max_retries=0, llm_timeout_s=30, executor_concurrency=2)
    slow_tesla = get("E3", f"[slow 10] {TESLA}", "$T")
    rejected = reply([get("E1", f"[slow 30] {NORTHWIND}", "$N"), extract("E2", "$N", "$NR"),
                      slow_tesla,
                      {**get("E4", "Northwind Motors Q2 2023 Financial Report", "$Q"),
                       "temporal_scope": "2023-Q2"}],
                     answer="Tesla made {{ T }}, Northwind {{ NR }} and {{ 999 }}.")
    kept = reply([{**slow_tesla, "id": "E1"}, extract("E2", "$T", "$TR")],
                 answer="Tesla made ${{ TR }} billion.")
    fake_llm.load([{"match": "Tesla", "token_delay": 0.002, "content": c}
                   for c in (rejected, kept)])
    query = p.submit(QUESTION, deadline_s=90)

    record = p.store.wait(query.id, 60)
    assert_one_outcome(p.store, {query.id: record})
    assert record.status == "done", record.error
    assert "$23.35[1] billion" in record.answer.text
    assert [s.id for s in record.plan.steps] == ["E3", "E2_2"]  # E3 reused, not run again
    ran = {s.step_id for s in record.steps}
    assert ran == {"E3", "E2_2"}  # E1 still running, E4 skipped, E2 never sent
    sent = {d.step_id: d for d in record.dispatch}
    assert [(s, sent[s].in_plan, sent[s].dropped, bool(sent[s].dispatched_at))
            for s in ("E1", "E2", "E4")] == [("E1", False, False, True),
                                              ("E2", False, True, False),
                                              ("E4", False, False, True)]

    executors_idle(p.store, timeout=60)  # E1's 30 s are over
    late = p.store.record(query.id)
    assert {s.step_id for s in late.steps} == {"E3", "E2_2", "E1"}  # E1 late, E4 skipped
    assert "E2" not in p.store.dispatched(query.id) and late.answer == record.answer
    shown = p.cli("show", query.id)
    assert f"{query.id}:E1" in shown.stdout and "(reply 1, not in the final plan)" in shown.stdout
    assert "reply 1, not in the final plan: dropped when the plan was closed" in shown.stdout
    assert "reply 1, not in the final plan: sent, no result" in shown.stdout

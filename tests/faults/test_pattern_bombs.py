"""Regular expressions that compile to gigabytes (the `regex` module writes counted
repeats out), wherever a plan's pattern is compiled, through real processes: a model
writes one (the planner sends it back as bad_pattern and stays alive), a forged step
carries one straight to an executor (a BAD_PATTERN step error), `chordal debug` meets one
in a stored run (it answers). No process grows by more than tens of megabytes.
(The API's 422: tests/producers/test_plan_limits.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from shared import naming
from shared.models import Plan, Query, StepResult, StepTask

from ..conftest import peak_mb
from .conftest import TESLA, assert_one_outcome, plan, wait_for

pytestmark = pytest.mark.faults
BOMBS = [r"(?:a{8000}){1000}(\d+)", r"((a{1000}){1000}){1000}(x)"]
"""Compiled, the first takes 7 s and 2.1 GB; the second never finishes."""
GOOD = {"reasoning": "The report states the yield.", "plan": plan()}
GROWTH_MB = 100
"""Most a process's peak memory may grow while it refuses the bombs."""
TEXT = ("At Gigafactory Nevada the battery yield rate of 91.7% remained below the company's "
        "92% target.")


def worker(p, role: str):
    return next(w for w in p.stack.workers if w.role == role and w.alive)


def with_bomb(bomb: str) -> dict:
    bad = plan()
    bad["steps"][1]["pattern"] = bomb
    return {"reasoning": "The report states the yield.", "plan": bad}


def test_a_models_bomb_goes_back_as_bad_pattern_and_the_planner_plans_once_and_lives(
        faulty_stack, fake_llm):
    p = faulty_stack(llm_base_url=f"{fake_llm.base_url}/v1", llm_model="replay",
                     llm_max_retries=0, llm_timeout_s=30, worker_dead_after_s=3)
    planner = worker(p, "planner")
    fake_llm.load([entry for n, bomb in enumerate(BOMBS) for entry in (
        {"match": f"bomb {n}", "content": with_bomb(bomb)},
        {"match": f"bomb {n}", "content": GOOD})])
    before = peak_mb(planner.pid)
    queries = [p.submit(f"bomb {n}: Tesla battery yield Q3 2023?", deadline_s=60)
               for n in range(len(BOMBS))]
    records = {q.id: p.store.wait(q.id, 60) for q in queries}
    assert_one_outcome(p.store, records)
    for record in records.values():
        assert record.status == "done", record.error
        assert record.answer.text.startswith("Battery yield was 9")
        assert [c.purpose for c in record.llm_calls] == ["plan 1", "plan 2"]
    log = fake_llm.log()
    assert len(log) == 2 * len(BOMBS)  # each query planned once: no redelivery asked again
    for bomb in map(lambda b: json.dumps(b)[1:-1], BOMBS):  # as JSON writes it
        (feedback,) = [r["messages"][-1]["content"] for r in log
                       if len(r["messages"]) > 2 and bomb in r["messages"][-2]["content"]]
        assert '"step": "E2", "code": "bad_pattern"' in feedback
        assert "step E2's pattern expands to" in feedback and "more than the 20,000" in feedback
        assert bomb not in feedback  # the model has its own reply, just before, for that
    assert planner.alive and peak_mb(planner.pid) - before < GROWTH_MB
    for w in p.stack.workers:  # nobody took the planner for dead and gave its task back
        assert "died holding" not in w.log_path.read_text(), w.log_tail()


def test_a_forged_step_with_a_bomb_is_a_bad_pattern_error_and_the_executor_stays_small(
        faulty_stack):
    """The forged steps join a query still running (a slow third step keeps it so), as a
    message of a live query's would: an executor skips steps of a finished one."""
    p = faulty_stack()
    running = plan()
    running["steps"].append({"id": "E3", "operation": "GET", "source": f"[slow 10] {TESLA}",
                             "output_var": "$LATER"})
    query = p.submit("yield?", running, deadline_s=60)
    wait_for(lambda: p.store.step(query.id, "E2"), 30, "E1 and E2 to report")
    executor = worker(p, "executor")
    before = peak_mb(executor.pid)
    forged = {}
    for n, bomb in enumerate(BOMBS):
        for step in ({"id": f"X{n}", "operation": "EXTRACT", "source": "$R", "pattern": bomb},
                     {"id": f"V{n}", "operation": "VALIDATE", "value": "$Y", "pattern": bomb}):
            task = StepTask(query_id=query.id, step=step,
                            inputs={"R": "E1"} if step["operation"] == "EXTRACT" else {"Y": "E2"})
            p.app.send_task(naming.STEP_TASKS[step["operation"]],
                            args=(task.model_dump(mode="json"),), queue=naming.QUEUE_EXECUTE)
            forged[step["id"]] = bomb
    wait_for(lambda: all(p.store.step(query.id, s) for s in forged), 30,
             "the forged steps to report")
    for step_id, bomb in forged.items():
        result = p.store.step(query.id, step_id)
        assert result.status == "error" and result.error_code == "BAD_PATTERN", result
        assert "expands to" in result.error_message
        assert "elements when compiled, more than the 20,000 allowed" in result.error_message
    assert executor.alive and peak_mb(executor.pid) - before < GROWTH_MB
    record = p.store.wait(query.id, 60)
    assert record.status == "done" and record.answer.text.startswith("Battery yield was 9")


def test_chordal_debug_of_a_run_holding_bombs_answers_without_compiling_them(faulty_stack):
    p = faulty_stack(roles=())
    steps = [{"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
              "output_var": "$R"},
             {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": BOMBS[0],
              "output_var": "$Y"},  # timed out: debug offers a calmer form of it
             {"id": "E3", "operation": "EXTRACT", "source": "$R", "output_var": "$Z",
              "pattern": r"(?-i)battery yield rate ((a{1000}){1000}){1000}(\d+)"}]  # no match
    query = Query(question="What was the yield?", plan=Plan.model_validate({"steps": steps}))
    assert p.store.create(query)
    p.store.save_plan(query.id, query.plan)
    for result in (
            StepResult(action_id=f"{query.id}:E1", step_id="E1", operation="GET", status="ok",
                       value=TEXT),
            StepResult(action_id=f"{query.id}:E2", step_id="E2", operation="EXTRACT",
                       status="error", error_code="PATTERN_TIMEOUT", error_message="ran long"),
            StepResult(action_id=f"{query.id}:E3", step_id="E3", operation="EXTRACT",
                       status="error", error_code="NO_MATCH", error_message="found nothing")):
        p.store.put_step(query.id, result)
    p.store.fail(query.id, "steps failed")

    debug = subprocess.Popen([sys.executable, "-m", "producers", "debug", query.id],
                             env=p.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    watchdog = threading.Timer(60, debug.kill)  # by its PID, should it never answer
    watchdog.start()
    try:
        out = debug.stdout.read().decode()
        _, status, usage = os.wait4(debug.pid, 0)  # its own peak memory, as it ends
        debug.returncode = os.waitstatus_to_exitcode(status)
    finally:
        watchdog.cancel()
        debug.stdout.close()
    assert debug.returncode == 0, out
    assert usage.ru_maxrss / 1024 < 300  # MB: about 70 at rest
    said = " ".join(out.split())
    assert "E2 [PATTERN_TIMEOUT]" in said and "catastrophic backtracking" in said
    assert "E3 [NO_MATCH]" in said and "nearest sentence: At Gigafactory Nevada" in said
    assert "91.7" in said  # a pattern that works, offered for E3

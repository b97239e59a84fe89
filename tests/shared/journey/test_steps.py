"""Running one step: whatever the tool does becomes a StepResult, but for the task's
soft time limit, which the executor records as TIME_LIMIT."""

from __future__ import annotations

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from shared.errors import TransientToolError
from shared.models import StepTask
from shared.journey.steps import TRANSIENT_RETRIES, execute
from shared.tools import registry


def compute_task() -> StepTask:
    return StepTask.model_validate({"query_id": "q", "step": {
        "id": "E1", "operation": "COMPUTE", "expression": "1 + 1", "output_var": "$X"}})


def run_with(monkeypatch, tool) -> object:
    monkeypatch.setitem(registry.RUNNERS, "COMPUTE", tool)
    return execute(compute_task(), store=None, backend=None, sleep=lambda s: None)


def test_a_tool_that_keeps_failing_transiently_is_reported_with_the_attempts_made(monkeypatch):
    calls = []

    def down(step, inputs, backend):
        calls.append(1)
        raise TransientToolError("SEARCH_UNAVAILABLE", "search store timed out")

    r = run_with(monkeypatch, down)
    assert (r.status, r.error_code, r.action_id) == ("error", "SEARCH_UNAVAILABLE", "q:E1")
    assert r.error_message == f"search store timed out (after {TRANSIENT_RETRIES + 1} attempts)"
    assert len(calls) == TRANSIENT_RETRIES + 1


def test_a_tool_bug_is_a_crashed_step_not_a_stalled_query(monkeypatch):
    def bug(step, inputs, backend):
        raise KeyError("oops")

    r = run_with(monkeypatch, bug)
    assert (r.status, r.error_code, r.error_message) == ("error", "TOOL_CRASHED", "KeyError: 'oops'")


def test_the_soft_time_limit_reaches_the_task_so_the_step_reads_time_limit(monkeypatch):
    def slow(step, inputs, backend):
        raise SoftTimeLimitExceeded()

    with pytest.raises(SoftTimeLimitExceeded):
        run_with(monkeypatch, slow)

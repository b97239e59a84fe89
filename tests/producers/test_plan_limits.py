"""Every edge where a plan enters holds it to the plan limits before anything is enqueued:
`POST /queries`, `chordal enqueue` and `chordal ask --plan`, against the real stack
(`pipeline`: real Redis and worker processes; `api`: `chordal api` in front of it). A
pattern that would compile to gigabytes is refused by the API at once, without growing it
(the other places a pattern is compiled: tests/faults/test_pattern_bombs.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from producers.batch.file import derived_id

from ..conftest import peak_mb

pytestmark = pytest.mark.integration
BOMBS = [r"(?:a{8000}){1000}(\d+)", r"((a{1000}){1000}){1000}(x)"]
"""Compiled, the first takes 7 s and 2.1 GB; the second never finishes."""
TOO_LONG = {"steps": [{"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}],
            "answer": "{{ E1 | length }} " + "x" * 150_000}
"""A plan of 150,000-odd characters: past the default CHORDAL_MAX_PLAN_CHARS (100,000)."""


def identical_gets(lines: int) -> str:
    return "".join(f"#E{n} = Wikipedia[Tesla Q3 2023 Financial Report]\n"
                   for n in range(1, lines + 1))


def said(result: subprocess.CompletedProcess) -> str:
    return " ".join((result.stdout + result.stderr).split())  # rich wraps long lines


def test_the_api_answers_422_to_a_plan_past_the_size_limit_and_enqueues_nothing(api):
    status, _, reply = api.request("POST", "/queries", {"id": "too-long-plan",
                                                        "question": "q", "plan": TOO_LONG})
    assert status == 422, reply
    text = json.dumps(reply)
    assert "too_large" in text and "CHORDAL_MAX_PLAN_CHARS" in text
    assert len(text) < 10_000  # the plan is not echoed back
    assert api.pipeline.store.status("too-long-plan") is None


def test_enqueue_rejects_thousands_of_identical_gets_by_size_then_by_steps_written(
        pipeline, tmp_path):
    path = tmp_path / "gets.jsonl"
    plan = identical_gets(8_000)
    path.write_text(json.dumps({"question": "q", "plan": plan}) + "\n")
    by_size = pipeline.cli("enqueue", str(path), "--batch", "limits")
    assert by_size.returncode == 2
    assert "nothing submitted" in said(by_size) and "line 1" in said(by_size)
    assert "more than the 100,000 characters allowed (CHORDAL_MAX_PLAN_CHARS)" in said(by_size)

    roomy = {**pipeline.env(), "CHORDAL_MAX_PLAN_CHARS": "1000000"}
    by_steps = subprocess.run([sys.executable, "-m", "producers", "enqueue", str(path),
                               "--batch", "limits"], env=roomy, capture_output=True,
                              text=True, timeout=120)
    assert by_steps.returncode == 2
    assert "8,000 steps, more than the 20 allowed (CHORDAL_MAX_STEPS)" in said(by_steps)
    assert pipeline.store.status(derived_id("limits", "q", "rewoo", None, plan)) is None


def test_ask_with_a_plan_file_past_the_size_limit_names_the_file_and_the_setting(
        pipeline, tmp_path):
    path = tmp_path / "long.json"
    path.write_text(json.dumps(TOO_LONG))
    asked = pipeline.cli("ask", "q", "--plan", str(path))
    assert asked.returncode == 2
    assert str(path) in said(asked) and "CHORDAL_MAX_PLAN_CHARS" in said(asked)


def with_patterns(pattern: str) -> dict:
    """A plan whose EXTRACT, FILTER and VALIDATE each carry `pattern`."""
    return {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
         "output_var": "$R"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": pattern,
         "output_var": "$Y"},
        {"id": "E3", "operation": "SEARCH", "query": "Tesla battery", "output_var": "$HITS"},
        {"id": "E4", "operation": "FILTER", "source": "$HITS", "pattern": pattern,
         "output_var": "$KEPT"},
        {"id": "E5", "operation": "VALIDATE", "value": "$Y", "pattern": pattern,
         "output_var": "$OK"}]}


@pytest.mark.parametrize("bomb", BOMBS)
def test_the_api_refuses_a_pattern_bomb_in_any_field_with_a_422_that_does_not_quote_it(
        api, bomb):
    before = peak_mb(api.process.pid)
    qid = f"bomb-{BOMBS.index(bomb)}"
    status, _, reply = api.request("POST", "/queries", {"id": qid, "question": "q",
                                                        "plan": with_patterns(bomb)})
    assert status == 422, reply
    (detail,) = reply["detail"]
    assert [(p["step"], p["code"]) for p in detail["problems"]] == [
        ("E2", "bad_pattern"), ("E4", "bad_pattern"), ("E5", "bad_pattern")]
    for problem in detail["problems"]:
        assert problem["message"].startswith(f"step {problem['step']}'s pattern expands to ")
        assert "elements when compiled, more than the 20,000 allowed" in problem["message"]
    text = json.dumps(reply)
    assert json.dumps(bomb)[1:-1] not in text and "{1000}){1000}" not in text
    assert api.pipeline.store.status(qid) is None
    assert peak_mb(api.process.pid) - before < 100


def test_the_api_names_the_step_and_field_of_a_broken_pattern_without_quoting_it(api):
    plan = with_patterns(r"yield (\d+")
    plan["steps"][1]["pattern"] = r"yield \d+%"  # compiles, but captures nothing
    status, _, reply = api.request("POST", "/queries", {"question": "q", "plan": plan})
    assert status == 422, reply
    problems = {p["step"]: p for p in reply["detail"][0]["problems"]}
    assert problems["E2"]["code"] == "capture_groups"
    assert problems["E2"]["message"].startswith("step E2's pattern has 0 capture groups")
    assert problems["E4"]["message"].startswith("step E4's pattern does not compile: missing )")
    assert "yield" not in json.dumps(reply)

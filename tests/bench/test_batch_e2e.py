"""The batch-scale bench (`python -m bench.batch_e2e`) at a tiny size, through the
same commands and stack it drives at 100,000: it runs to its end and its report says
how the batch ended."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def bench(tmp_path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "bench.batch_e2e", *args, "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_tiny_batch_runs_end_to_end_and_is_reported(tmp_path):
    bench(tmp_path, "--queries", "20", "--no-cancel")
    result = json.loads((tmp_path / "batch_e2e.json").read_text())
    assert result["big_counts"]["done"] == 20
    assert result["ask_behind"]["status"] == "done"
    assert result["enqueue"]["rate_per_s"] > 0
    assert result["redis_peak"] >= result["redis_before"]
    report = (tmp_path / "batch_e2e.md").read_text()
    assert "One batch of 20 queries" in report and "`chordal status --batch`" in report
    assert not (tmp_path / "batch_home").exists()


def test_behind_asks_a_question_behind_a_queued_batch_and_cancels_the_batch(tmp_path):
    bench(tmp_path, "--queries", "300", "--behind")
    result = json.loads((tmp_path / "batch_e2e_behind.json").read_text())
    assert result["ask_behind"]["status"] == "done"
    counts = result["cancel"]["counts"]
    assert counts["cancelled"] + counts["done"] == 300  # what finished before the cancel stays done
    assert "cancelled" in result["cancel"]["output"]

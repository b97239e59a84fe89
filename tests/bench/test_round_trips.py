"""The round-trips bench (`python -m bench.round_trips`) at its quick size: it counts a
two-step query's Redis commands by sender, and times Chordal next to a bare Celery
worker, both of which must answer."""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.round_trips import per_query

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


class Seen:
    def __init__(self, seconds, stats, by_role):
        self.seconds, self.stats, self.by_role = seconds, Counter(stats), Counter(by_role)


def test_commands_per_query_subtract_the_idle_rate_over_as_long_a_window():
    busy = Seen(4.0, {"HSET": 30, "ZADD": 12}, {("executor", "HSET"): 20, ("lua", "HSET"): 10,
                                                ("planner", "ZADD"): 12})
    idle = Seen(2.0, {"ZADD": 2}, {("planner", "ZADD"): 2})
    counted = per_query(busy, idle, n=2)
    assert counted["by_command"] == {"HSET": 15.0, "ZADD": 4.0}
    assert counted["commands"] == 19.0
    assert counted["sent"] == 14.0  # the script's HSETs are run by Redis, not sent
    assert counted["by_role"]["planner"] == {"total": 4.0, "ZADD": 4.0}


def test_the_quick_run_counts_every_role_and_times_both_workers(tmp_path):
    out = tmp_path / "round_trips.json"
    done = subprocess.run([sys.executable, "-m", "bench.round_trips", "--quick", "--out",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    roles = result["commands"]["by_role"]
    assert {"producer", "planner", "executor", "finalizer"} <= set(roles)
    assert result["commands"]["sent"] > 0
    median = result["median"]
    assert median["bare_tasks_per_s"] > 0 and median["chordal_tasks_per_s"] > 0
    assert median["bare_round_trip_ms"] > 0 and median["chordal_noop_round_trip_ms"] > 0
    assert "commands sent to Redis per query" in done.stdout

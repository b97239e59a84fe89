"""Child processes: real `python -c` children, started, waited for and stopped by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.stack.process import ChildProcess, usable_cores

from .conftest import pid_exists

pytestmark = pytest.mark.integration  # every test starts a child process

#: A child that says it is ready, then ignores SIGTERM until it is killed.
STUBBORN = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(60)")


def running(pid: int) -> bool:
    """Whether `pid` runs; an orphan SIGKILLed a moment ago may still be a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def python(code: str, tmp_path, **kw) -> ChildProcess:
    return ChildProcess([sys.executable, "-c", code], tmp_path / "child.log", **kw)


def test_a_child_is_ready_once_it_says_so_and_a_stop_ends_it_by_its_pid(tmp_path, no_leftovers):
    child = python("import time; print('ready', flush=True); time.sleep(60)", tmp_path)
    child.start_and_wait(lambda: "ready" in child.log_path.read_text(), 10)
    no_leftovers.append(child.pid)
    assert child.alive
    assert child.stop() == -signal.SIGTERM
    assert not child.alive and not pid_exists(child.pid)


def test_a_child_that_ignores_sigterm_is_killed_after_the_timeout(tmp_path, no_leftovers):
    child = python(STUBBORN, tmp_path)
    child.start_and_wait(lambda: "ready" in child.log_path.read_text(), 10)
    no_leftovers.append(child.pid)
    assert child.stop(timeout=0.5) == -signal.SIGKILL
    assert not pid_exists(child.pid)


def test_a_polite_step_that_works_spares_the_signals(tmp_path, no_leftovers):
    child = python("import time\ntry:\n    print('ready', flush=True); time.sleep(60)\n"
                   "except KeyboardInterrupt:\n    print('stopped on request')", tmp_path,
                   polite=signal.SIGINT)
    child.start_and_wait(lambda: "ready" in child.log_path.read_text(), 10)
    no_leftovers.append(child.pid)
    assert child.stop(timeout=10) == 0
    assert "stopped on request" in child.log_tail()


def test_a_kill_group_stop_takes_the_childs_own_children_with_it(tmp_path, no_leftovers):
    child = python("import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', "
                   "'import time; time.sleep(60)']); print('grandchild', p.pid, flush=True); "
                   "time.sleep(60)", tmp_path, kill_group=True)
    child.start_and_wait(lambda: "grandchild" in child.log_path.read_text(), 10)
    no_leftovers.append(child.pid)
    grandchild = int(child.log_tail().split()[-1])
    child.stop()
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    while running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    if running(grandchild):
        os.kill(grandchild, signal.SIGKILL)  # ours, by its PID; the test fails below
    assert not running(grandchild)


def test_a_child_that_exits_before_it_is_ready_fails_with_its_log_tail(tmp_path):
    child = python("import sys; print('config line 3 is wrong'); sys.exit(3)", tmp_path,
                   what="the probe")
    with pytest.raises(RuntimeError, match="the probe exited with code 3") as caught:
        child.start_and_wait(lambda: False, 10)
    assert "config line 3 is wrong" in str(caught.value)


def test_a_silent_child_fails_readiness_with_its_log_and_is_left_running(tmp_path, no_leftovers):
    child = python("import time; print('starting'); time.sleep(60)", tmp_path, what="the probe")
    child.start()
    no_leftovers.append(child.pid)
    try:
        with pytest.raises(TimeoutError, match="the probe did not say hello within 0.5 s"):
            child.wait_until(lambda: False, 0.5, "say hello", TimeoutError)
        assert child.alive
    finally:
        child.stop()


def test_a_parent_that_exits_normally_leaves_no_child_behind(tmp_path):
    parent = ("import sys; from pathlib import Path; "
              "from shared.stack.process import ChildProcess\n"
              f"c = ChildProcess([sys.executable, '-c', 'import time; time.sleep(60)'], "
              f"Path({str(tmp_path / 'child.log')!r})).start()\nprint(c.pid)")
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True,
                         timeout=60, check=True, cwd=Path(__file__).resolve().parents[3])
    child = int(out.stdout)
    if pid_exists(child):
        os.kill(child, signal.SIGKILL)  # ours, by its PID; the test fails below
    assert not pid_exists(child)


def test_usable_cores_are_at_most_a_containers_cpu_quota(tmp_path):
    # a container sees its own cgroup at /sys/fs/cgroup: v2's cpu.max, v1's cfs quota and
    # period (docker run --cpus 1.5 writes 150000 100000); os.cpu_count() is the host's
    cores = len(os.sched_getaffinity(0))
    v2, v1, none = tmp_path / "v2", tmp_path / "v1", tmp_path / "none"
    (v1 / "cpu").mkdir(parents=True)
    v2.mkdir()
    none.mkdir()
    assert usable_cores(none) == cores
    (v2 / "cpu.max").write_text("max 100000\n")
    assert usable_cores(v2) == cores
    (v2 / "cpu.max").write_text("50000 100000\n")
    assert usable_cores(v2) == 1  # half a core is one process
    (v2 / "cpu.max").write_text("150000 100000\n")
    assert usable_cores(v2) == min(cores, 2)
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert usable_cores(v1) == cores
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    assert usable_cores(v1) == 1
    (v2 / "cpu.max").write_text("garbled\n")
    assert usable_cores(v2) == cores
    (v2 / "cpu.max").write_text("garbled 100000\n")
    assert usable_cores(v2) == cores


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux CPU affinity")
def test_usable_cores_are_those_the_process_may_run_on(tmp_path):
    # taskset -c 0, or a cpuset: one core usable whatever the machine has
    code = ("import os, sys; from pathlib import Path; os.sched_setaffinity(0, {0}); "
            "from shared.stack.process import usable_cores; "
            "print(usable_cores(Path(sys.argv[1])), os.cpu_count())")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == "1" and int(out[1]) == os.cpu_count()

"""`python -m bench.batch_e2e [--queries 100000]`: one large batch end to end on the
embedded stack, driven through the commands a user runs (`chordal index`, `chordal up`,
`chordal enqueue`, `chordal status`, `chordal ask`, `chordal cancel`), each a child
process started and stopped by PID.

Measured, and written to bench/results/batch_e2e.md (+ .json, + .png):
  - the enqueue rate of `chordal enqueue --max-in-flight 0` (the whole batch at once);
  - answers per second over time (the plot) and how the batch ended (done / failed);
  - Redis memory: before, peak (INFO used_memory_peak) and per finished query;
  - `chordal status --batch` on the large batch next to a 10-query batch (best of 3);
  - a question asked behind the queued batch (`chordal ask`): its time to answer;
  - a second batch of the same size cancelled half-way: the time `chordal cancel
    --batch` takes and how its queries ended.
`--behind` runs only the question asked behind the queued batch, `status` and a cancel
of the whole batch (bench/results/batch_e2e_behind.md).

The questions are the bundled ones (the heuristic planner answers them: no model), each
batch line with its own id.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import redis

from shared.stores.batches import BatchStore
from shared.config import Settings
from shared.stack.embedded import is_stack_running
from shared.stack.process import ChildProcess
from producers.batch.follow import batch_status

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DATA = ROOT / "shared" / "data"
SAMPLE_S = 2.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(message: str) -> None:
    print(f"[batch_e2e {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, home: Path, queries: int):
        self.home, self.n = home, queries
        self.env = {**os.environ, "CHORDAL_HOME": str(home),
                    "CHORDAL_REDIS_PORT": str(free_port())}
        for name in ("CHORDAL_REDIS_URL", "CHORDAL_LLM_BASE_URL", "CHORDAL_LLM_MODEL",
                     "CHORDAL_ES_URL"):
            self.env.pop(name, None)
        self.settings = Settings(_env_file=None, home=home,
                                 redis_port=int(self.env["CHORDAL_REDIS_PORT"]))
        self.up = ChildProcess([sys.executable, "-m", "producers", "up"], home / "up.log",
                               what="chordal up", env=self.env, cwd=ROOT,
                               stop_signal=2, stop_timeout=60)
        self.r: redis.Redis | None = None
        self.batches: BatchStore | None = None

    # -- commands -------------------------------------------------------------------------

    def chordal(self, *args: str, timeout: float = 3600) -> tuple[float, str]:
        """Run one `chordal` command to its end; (seconds, stdout). Fails on a non-zero
        exit, with its output."""
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "producers", *args], env=self.env,
                              cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise RuntimeError(f"chordal {' '.join(args)} exited {done.returncode}:\n"
                               f"{done.stdout}\n{done.stderr}")
        return seconds, done.stdout

    def start(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True)
        self.chordal("index", str(DATA / "corpus.jsonl"))
        self.up.start_and_wait(lambda: is_stack_running(self.settings), 120,
                               awaited="serve the plan, execute and finalize queues")
        self.r = redis.Redis.from_url(self.settings.effective_redis_url,
                                      decode_responses=True, socket_timeout=30)
        self.batches = BatchStore(self.r, self.settings.run_ttl_s)

    def stop(self) -> None:
        self.up.stop()

    def write_batch(self, name: str, n: int) -> Path:
        questions = [q for q in (DATA / "questions.txt").read_text().splitlines() if q.strip()]
        path = self.home / f"{name}.jsonl"
        with path.open("w") as f:
            for i in range(n):
                f.write(json.dumps({"id": f"{name}-{i}", "question": questions[i % len(questions)]})
                        + "\n")
        return path

    def enqueue(self, name: str, n: int) -> dict:
        path = self.write_batch(name, n)
        seconds, output = self.chordal("enqueue", str(path), "--batch", name,
                                       "--max-in-flight", "0")
        sent = re.search(r"submitted (\d+) queries .* in ([\d.]+)s \((\d+) queries/s", output)
        return {"queries": n, "command_s": round(seconds, 2),
                "sending_s": float(sent.group(2)) if sent else None,
                "rate_per_s": int(sent.group(3)) if sent else None}

    def memory(self) -> tuple[int, int]:
        info = self.r.info("memory")
        return int(info["used_memory"]), int(info["used_memory_peak"])

    def status_s(self, name: str) -> tuple[float, float]:
        """The best of 3 `chordal status --batch NAME` runs, whole command (a Python
        start included), and the best of 3 of the status read itself, in seconds."""
        command = min(self.chordal("status", "--batch", name)[0] for _ in range(3))
        reads = []
        for _ in range(3):
            started = time.perf_counter()
            batch_status(self.batches, name)
            reads.append(time.perf_counter() - started)
        return command, min(reads)

    def cancel(self, name: str) -> dict:
        """`chordal cancel --batch NAME`: its time, what it printed, the counts after."""
        seconds, output = self.chordal("cancel", "--batch", name)
        out = {"seconds": round(seconds, 2), "output": output.strip(),
               "counts": dict(batch_status(self.batches, name).counts)}
        log(f"cancelled: {out}")
        return out

    def follow(self, name: str, until, on_sample=None, timeout: float = 6 * 3600,
               started: float | None = None) -> list[dict]:
        """Sample the batch's counts every SAMPLE_S until `until(status)`; the samples,
        timed from `started` (a `time.monotonic()`; default now)."""
        samples, started = [], time.monotonic() if started is None else started
        while time.monotonic() - started < timeout:
            s = batch_status(self.batches, name)
            used, _ = self.memory()
            samples.append({"t": round(time.monotonic() - started, 2), "finished": s.finished,
                            "counts": dict(s.counts), "used_memory": used})
            if on_sample:
                on_sample(samples)
            if until(s):
                return samples
            time.sleep(SAMPLE_S)
        raise TimeoutError(f"batch {name} did not reach its mark in {timeout:.0f}s")


def ask_behind(bench: Bench) -> dict:
    question = (DATA / "questions.txt").read_text().splitlines()[1]
    seconds, output = bench.chordal("ask", question, "--json", timeout=600)
    record = json.loads(output)
    t = record.get("timings", {})
    return {"command_s": round(seconds, 2), "status": record.get("status"),
            "error": record.get("error"),
            "queued_to_done_s": round(t["done"] - t["queued"], 2)
            if "done" in t and "queued" in t else None,
            "queued_to_planning_s": round(t["planning"] - t["queued"], 2)
            if "planning" in t and "queued" in t else None}


def run_behind(queries: int, home: Path) -> dict:
    """`--behind`: the batch enqueued, the question asked behind it, `status` at that
    size and at 10 while it is queued, then the whole batch cancelled; minutes, not the
    batch's whole run."""
    bench = Bench(home, queries)
    result: dict = {"queries": queries}
    bench.start()
    try:
        log(f"enqueue {queries} queries to batch big (--max-in-flight 0)")
        result["enqueue"] = bench.enqueue("big", queries)
        log(f"enqueued: {result['enqueue']}; a question asked behind the batch")
        result["ask_behind"] = ask_behind(bench)
        log(f"the question behind it: {result['ask_behind']}")
        bench.enqueue("small", 10)
        bench.follow("small", lambda s: s.unfinished == 0, timeout=600)
        result["status_big_s"], result["status_big_read_s"] = bench.status_s("big")
        result["status_small_s"], result["status_small_read_s"] = bench.status_s("small")
        result["cancel"] = bench.cancel("big")
        result["redis_peak"] = bench.memory()[1]
    finally:
        bench.stop()
    return result


def save(result: dict, out: Path, name: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1))


def write_behind(result: dict, out: Path) -> None:
    save(result, out, "batch_e2e_behind")
    n, c = result["queries"], result["cancel"]
    lines = [
        f"# A question asked behind {n:,} queued queries (`python -m bench.batch_e2e --behind`)",
        "",
        f"- enqueue: {result['enqueue']['rate_per_s']} queries/s while sending",
        f"- the question (`chordal ask`): {result['ask_behind']}",
        f"- the status read itself: {result['status_big_read_s'] * 1000:.1f} ms at {n:,} "
        f"(mostly queued), {result['status_small_read_s'] * 1000:.1f} ms at 10",
        f"- `chordal cancel --batch` of the {n:,}: {c['seconds']} s; then {c['counts']}",
        f"- Redis peak {result['redis_peak'] / 2**20:.1f} MB", ""]
    (out / "batch_e2e_behind.md").write_text("\n".join(lines))


def run(queries: int, home: Path, cancel: bool) -> dict:
    bench = Bench(home, queries)
    result: dict = {"queries": queries}
    bench.start()
    try:
        result["redis_before"] = bench.memory()[0]
        log(f"enqueue {queries} queries to batch big (--max-in-flight 0)")
        started = time.monotonic()
        result["enqueue"] = bench.enqueue("big", queries)
        log(f"enqueued: {result['enqueue']}; a question asked behind the batch")
        behind = threading.Thread(target=lambda: result.update(ask_behind=ask_behind(bench)))
        behind.start()
        samples = bench.follow("big", lambda s: s.unfinished == 0, started=started,
                               on_sample=lambda ss: len(ss) % 30 == 0 and log(
                                   f"{ss[-1]['finished']}/{queries} finished"))
        behind.join()
        log(f"the question behind it: {result['ask_behind']}")
        result["big_samples"] = samples
        final = batch_status(bench.batches, "big")
        result["big_counts"] = dict(final.counts)
        result["big_seconds"] = samples[-1]["t"]
        result["redis_peak"] = bench.memory()[1]
        result["redis_after"] = bench.memory()[0]
        bench.enqueue("small", 10)
        bench.follow("small", lambda s: s.unfinished == 0, timeout=300)
        result["status_big_s"], result["status_big_read_s"] = bench.status_s("big")
        result["status_small_s"], result["status_small_read_s"] = bench.status_s("small")
        if cancel:
            log(f"enqueue {queries} queries to batch half, cancel it half-way")
            bench.enqueue("half", queries)
            bench.follow("half", lambda s: s.finished >= queries // 2)
            result["cancel"] = bench.cancel("half")
    finally:
        bench.stop()
    return result


def write(result: dict, out: Path) -> None:
    save(result, out, "batch_e2e")
    samples = result["big_samples"]
    rates = [(b["t"], (b["finished"] - a["finished"]) / max(b["t"] - a["t"], 1e-9))
             for a, b in zip(samples, samples[1:])]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.plot([t for t, _ in rates], [r for _, r in rates], label="answers/s")
        ax.set_xlabel("seconds since the batch was enqueued")
        ax.set_ylabel("queries finished per second")
        ax2 = ax.twinx()
        ax2.plot([s["t"] for s in samples], [s["used_memory"] / 2**20 for s in samples],
                 color="tab:red", alpha=0.6, label="Redis MB")
        ax2.set_ylabel("Redis used_memory (MB)")
        ax.set_title(f"one batch of {result['queries']:,} queries, embedded stack")
        fig.tight_layout()
        fig.savefig(out / "batch_e2e.png", dpi=100)
        plot = "![answers per second](batch_e2e.png)"
    except ImportError:
        plot = "(no plot: install chordal[bench] for matplotlib)"
    n, e = result["queries"], result["enqueue"]
    finished = sum(result["big_counts"].get(s, 0) for s in ("done", "failed", "cancelled"))
    per_query = (result["redis_after"] - result["redis_before"]) / max(finished, 1)
    lines = [
        f"# One batch of {n:,} queries, end to end (`python -m bench.batch_e2e`)", "",
        f"- enqueue (`chordal enqueue --max-in-flight 0`): {e['rate_per_s']} queries/s while "
        f"sending, {e['command_s']} s for the whole command",
        f"- ended: {result['big_counts']} in {result['big_seconds']:.0f} s "
        f"({n / max(result['big_seconds'], 1e-9):.1f} queries/s overall)",
        f"- Redis: {result['redis_before'] / 2**20:.1f} MB before, peak "
        f"{result['redis_peak'] / 2**20:.1f} MB, {result['redis_after'] / 2**20:.1f} MB after "
        f"({per_query:,.0f} B per finished query kept for CHORDAL_RUN_TTL_S)",
        f"- `chordal status --batch`: {result['status_big_s']:.2f} s at {n:,} queries, "
        f"{result['status_small_s']:.2f} s at 10 (whole command, best of 3); the status read "
        f"itself {result['status_big_read_s'] * 1000:.1f} ms at {n:,}, "
        f"{result['status_small_read_s'] * 1000:.1f} ms at 10",
        f"- a question asked behind it (`chordal ask`): {result['ask_behind']}",
    ]
    if "cancel" in result:
        c = result["cancel"]
        lines.append(f"- a second batch of {n:,} cancelled half-way: `chordal cancel --batch` "
                     f"took {c['seconds']} s; then {c['counts']}")
    lines += ["", plot, ""]
    (out / "batch_e2e.md").write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_e2e")
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--no-cancel", action="store_true",
                        help="skip the second batch cancelled half-way")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--behind", action="store_true",
                        help="only the question asked behind the queued batch, status and a "
                             "cancel of the whole batch (minutes, not the batch's run)")
    args = parser.parse_args()
    if args.queries < 10:
        parser.error("--queries: at least 10")
    if args.behind:
        write_behind(run_behind(args.queries, args.out / "batch_home"), args.out)
        report = "batch_e2e_behind.md"
    else:
        write(run(args.queries, args.out / "batch_home", not args.no_cancel), args.out)
        report = "batch_e2e.md"
    shutil.rmtree(args.out / "batch_home", ignore_errors=True)
    print((args.out / report).read_text())


if __name__ == "__main__":
    main()

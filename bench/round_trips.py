"""The cost of one query in Redis commands, and Chordal next to a bare Celery worker.

`python -m bench.round_trips [--queries N] [--repeats R] [--quick] [--out FILE.json]`
starts the embedded Redis, Chordal's workers (planner, executor, finalizer, react, as
`make bench` runs them) and a bare Celery worker (bench/bare_celery.py: kombu's own
transport with Chordal's reliability settings, 8 threads), then measures, in one run:

- **commands per query**: the two-step plan GET -> EXTRACT (plan, two steps, finalize:
  4 tasks) asked N times one after another. Counted two ways over the same window:
  `INFO commandstats` deltas (what Redis executed: commands inside Lua scripts and
  MULTI/EXEC included) and `MONITOR` on a connection of its own, which also says who
  sent each command: the sending process found from the client's port (/proc/net/tcp
  and /proc/PID/fd; the bench's own process is the `producer`: submit, wait, read the
  record), and `lua` for the commands a script ran. An idle window of the same stack
  measured first (heartbeats, idle consumers' polls, the sweeper) gives the background
  rate per command, which is subtracted.
- **tasks per second**: the bare worker draining no-op tasks, and Chordal answering
  two-step queries (queries/s x 4 tasks), all sent at once, in turn, `--repeats` times;
  the ratio of each pair, and the median. Both send task events, or neither: with
  `CHORDAL_WORKER_EVENTS=0` in the environment the bench measures Chordal without them
  and the bare worker too.
- **Redis CPU per query**: what the Redis server spent (`INFO cpu`, user + system)
  while Chordal answered those queries, over their number: how many queries one Redis
  core serves.
- **workers' CPU per query**: what each worker role's process spent meanwhile (user +
  system, /proc/PID/stat, its child processes counted with it: the finalizer's render
  processes), over the number of queries.
- **per-step overhead**: from a step's end to its dependent step's start (one query
  at a time), next to the round trip of a bare Celery no-op and of the same no-op on
  Chordal's executor (`chordal.bench.noop`, which pays Chordal's transport).

`make bench` runs it as one of its phases (bench/run.py); alone it writes
bench/results/round_trips.json (or FILE.json) and prints its table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import redis

from shared.config import Settings
from shared.ingest import load_jsonl
from shared.search import open_backend
from shared.stack.embedded import Stack
from shared.stack.process import ChildProcess

from bench import bare_celery, noop
from bench.figures import CORPUS, OVERHEAD_PLAN
from bench.harness import ROOT, Phase, standalone_settings

HERE = Path(__file__).resolve().parent
QUESTION = "What was Tesla's revenue in Q3 2023?"
TASKS_PER_QUERY = 4
"""plan, GET, EXTRACT, finalize"""
STOP = "round-trips-monitor-stop"


# -- who sent a command --------------------------------------------------------------

def _socket_inodes(redis_port: int) -> dict[str, int]:
    """socket inode -> local port of every TCP connection to `redis_port`."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(remote.rsplit(":", 1)[1], 16) == redis_port:
                found[inode] = int(local.rsplit(":", 1)[1], 16)
    return found


def client_roles(redis_port: int, pids: dict[int, str]) -> dict[int, str]:
    """client port -> role of each open connection to Redis that one of `pids` (pid ->
    role) holds."""
    inodes = _socket_inodes(redis_port)
    roles = {}
    for pid, role in pids.items():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                roles[inodes[target[8:-1]]] = role
    return roles


class Monitor:
    """MONITOR on a connection of its own, in a thread: every command Redis runs, as
    (client port or 'lua', command name)."""

    def __init__(self, url: str):
        self.client = redis.Redis.from_url(url, decode_responses=True)
        self.seen: list[tuple[str | int, str]] = []
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._ready = threading.Event()

    def __enter__(self) -> Monitor:
        self._thread.start()
        self._ready.wait(10)
        return self

    def _listen(self) -> None:
        with self.client.monitor() as m:
            self._ready.set()
            while True:
                c = m.next_command()
                words = c["command"].split(" ", 1)
                name = words[0].upper()
                if name == "ECHO" and STOP in c["command"]:
                    return
                who = "lua" if c.get("client_type") == "lua" else int(c.get("client_port") or 0)
                self.seen.append((who, name))

    def __exit__(self, *exc) -> None:
        self.client.echo(STOP)
        self._thread.join(10)
        self.client.close()


def commandstats(r: redis.Redis) -> Counter:
    """Calls per command so far (`INFO commandstats`)."""
    return Counter({k[len("cmdstat_"):].upper(): int(v["calls"])
                    for k, v in r.info("commandstats").items()})


class Window:
    """What Redis ran while the block ran: commandstats deltas (`stats`) and MONITOR's
    commands by command and by role (`by_role`), and the seconds it took."""

    def __init__(self, url: str, port: int, pids: dict[int, str]):
        self.url, self.port, self.pids = url, port, pids
        self.r = redis.Redis.from_url(url, decode_responses=True)

    def __enter__(self) -> Window:
        self.before = commandstats(self.r)
        self.roles = client_roles(self.port, self.pids)
        self.monitor = Monitor(self.url).__enter__()
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.monotonic() - self.t0
        self.roles.update(client_roles(self.port, self.pids))
        self.monitor.__exit__()
        # what reading the stats and stopping the monitor ran is not the stack's
        self.stats = commandstats(self.r) - self.before
        self.stats -= Counter({"INFO": 1, "MONITOR": 1, "ECHO": 1, "CLIENT|SETINFO": 2,
                               "CLIENT|SETNAME": 0})
        self.stats = +self.stats
        self.by_role: Counter = Counter()
        for who, name in self.monitor.seen:
            role = who if who == "lua" else self.roles.get(who, "other")
            self.by_role[(role, name)] += 1
        self.r.close()


def per_query(busy: Window, idle: Window, n: int) -> dict:
    """Commands per query: the busy window less the idle rate over as long, over `n`."""
    scale = busy.seconds / idle.seconds

    def less_idle(busy_counts: Counter, idle_counts: Counter) -> dict:
        keys = set(busy_counts) | set(idle_counts)
        out = {k: (busy_counts[k] - idle_counts[k] * scale) / n for k in keys}
        return {k: round(v, 1) for k, v in sorted(out.items(), key=lambda kv: -kv[1])
                if round(v, 1) > 0}

    stats = less_idle(busy.stats, idle.stats)
    roles = less_idle(busy.by_role, idle.by_role)
    by_role: dict[str, dict[str, float]] = {}
    for (role, name), v in roles.items():
        by_role.setdefault(str(role), {})[name] = v
    sent = sum(v for (role, _), v in roles.items() if role != "lua")
    return {"commands": round(sum(stats.values()), 1), "sent": round(sent, 1),
            "by_command": stats,
            "by_role": {r: {"total": round(sum(c.values()), 1), **c}
                        for r, c in sorted(by_role.items())},
            "idle_per_s": round(sum(idle.stats.values()) / idle.seconds, 1),
            "queries": n}


# -- the bare worker -----------------------------------------------------------------

class BareWorker(ChildProcess):
    """bench/bare_celery.py's worker as a child process, stopped by its PID; it sends
    task events when `events` (as Chordal's workers of the run do)."""

    def __init__(self, url: str, home: Path, events: bool = True):
        self.url = url
        self.name = f"bare-{os.getpid()}@bench"
        env = {**os.environ, "CHORDAL_BENCH_BARE_URL": url,
               "CHORDAL_BENCH_BARE_EVENTS": "1" if events else "0",
               "PYTHONPATH": os.pathsep.join(
                   filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        super().__init__(bare_celery.worker_argv(self.name), home / "logs" / "bare.log",
                         what="bare Celery worker", stop_timeout=30.0)
        self.env = env
        self.app = bare_celery.make_app(url, events)
        self.replies = redis.Redis.from_url(url)

    def start_and_ready(self, timeout: float = 60) -> BareWorker:
        self.start_and_wait(lambda: bool(self.app.control.ping([self.name], timeout=0.5)),
                            timeout, awaited=f"answer a ping as {self.name}")
        return self

    def _send(self, reply_key: str, i: int) -> None:
        self.app.send_task(bare_celery.NOOP, args=(reply_key, i))

    def round_trip(self) -> float:
        return noop.round_trip(self._send, self.replies)

    def rate(self, n: int) -> float:
        return noop.rate(self._send, self.replies, n)


# -- the measurements ----------------------------------------------------------------

def ask(phase: Phase):
    record = phase.ask(QUESTION, OVERHEAD_PLAN)
    if record.status != "done":
        raise RuntimeError(f"two-step query {record.query_id} ended {record.status}: "
                           f"{record.error}")
    return record


def commands_per_query(phase: Phase, n: int, port: int, pids: dict[int, str]) -> dict:
    url = phase.settings.effective_redis_url
    ask(phase)  # warm: connections open, scripts loaded, closed graphs read
    time.sleep(1.0)
    with Window(url, port, pids) as busy:
        for _ in range(n):
            ask(phase)
        time.sleep(1.0)  # the last task's ack, events and release land
    with Window(url, port, pids) as idle:
        time.sleep(max(3.0, busy.seconds))
    return per_query(busy, idle, n)


def redis_cpu_s(r: redis.Redis) -> float:
    """CPU seconds the Redis server has used (user + system, `INFO cpu`)."""
    cpu = r.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) `pid` and the processes below it have used so far;
    0 for a process gone."""
    tick, total, todo = os.sysconf("SC_CLK_TCK"), 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for thread in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in
                         Path(f"/proc/{p}/task/{thread}/children").read_text().split()]
        except (OSError, ValueError):
            continue  # ended meanwhile
    return total


def chordal_rate(phase: Phase, n: int) -> tuple[float, float, dict[str, float]]:
    """Answered two-step queries per second, `n` sent at once, times their 4 tasks; the
    milliseconds of CPU Redis spent per query meanwhile, and each worker role's."""
    cpu0 = redis_cpu_s(phase.store.r)
    workers0 = {w.role: process_cpu_s(w.pid) for w in phase.workers}
    t0 = time.time()
    queries = [phase.submit(f"{QUESTION} (#{i})", OVERHEAD_PLAN) for i in range(n)]
    records = [phase.wait(q, 600) for q in queries]
    bad = [r for r in records if r.status != "done"]
    if bad:
        raise RuntimeError(f"{len(bad)} of {n} two-step queries failed: {bad[0].error}")
    end = max(r.timings["done"] for r in records)
    workers = {w.role: (process_cpu_s(w.pid) - workers0[w.role]) / n * 1000
               for w in phase.workers}
    return (n / (end - t0) * TASKS_PER_QUERY, (redis_cpu_s(phase.store.r) - cpu0) / n * 1000,
            workers)


def overhead(phase: Phase, bare: BareWorker, n: int) -> dict:
    """Median ms from a step's end to its dependent's start, and of the no-op round
    trips, `n` of each one at a time, taken in turn (a busy moment of the machine falls
    on all three alike)."""
    hops, to_send, bare_rt, chordal_rt = [], [], [], []
    for _ in range(n):
        record = ask(phase)
        e1, e2 = record.steps
        hops.append(e2.started_at - e1.finished_at)
        sent = {d.step_id: d.dispatched_at for d in record.dispatch}.get(e2.step_id)
        if sent is not None:
            to_send.append(sent - e1.finished_at)
        bare_rt.append(bare.round_trip())
        chordal_rt.append(phase.noop_round_trip())
    return {"dependent_start_ms": statistics.median(hops) * 1000,
            "dependent_sent_ms": statistics.median(to_send) * 1000 if to_send else None,
            "bare_round_trip_ms": statistics.median(bare_rt) * 1000,
            "chordal_noop_round_trip_ms": statistics.median(chordal_rt) * 1000}


def measure(settings: Settings, quick: bool = False, queries: int = 10,
            repeats: int = 3) -> dict:
    """Every figure of the module docstring, with Chordal's workers and the bare worker
    on the Redis `settings` name (already running)."""
    port = settings.redis_port if not settings.redis_url else \
        redis.Redis.from_url(settings.effective_redis_url).connection_pool \
        .connection_kwargs["port"]
    bare_n, chordal_n, hops_n = (200, 40, 10) if quick else (2000, 300, 40)
    repeats = 1 if quick else repeats
    bare = BareWorker(settings.effective_redis_url, Path(settings.home), settings.worker_events)
    with Phase(settings) as phase:
        bare.start_and_ready()
        try:
            pids = {os.getpid(): "producer", bare.pid: "bare"}
            pids.update({w.pid: w.role for w in phase.workers})
            commands = commands_per_query(phase, 3 if quick else queries, port, pids)
            runs = []
            for _ in range(repeats):
                b = bare.rate(bare_n)
                c, cpu_ms, workers_ms = chordal_rate(phase, chordal_n)
                o = overhead(phase, bare, hops_n)
                runs.append({"bare_tasks_per_s": b, "chordal_tasks_per_s": c,
                             "redis_cpu_ms_per_query": cpu_ms,
                             **{f"{role}_cpu_ms_per_query": ms
                                for role, ms in workers_ms.items()},
                             "workers_cpu_ms_per_query": sum(workers_ms.values()),
                             "share_of_bare": c / b, **o,
                             "dependent_vs_bare": o["dependent_start_ms"]
                             / o["bare_round_trip_ms"],
                             "dependent_vs_chordal_noop": o["dependent_start_ms"]
                             / o["chordal_noop_round_trip_ms"]})
                log(f"  bare {b:.0f} tasks/s, Chordal {c:.0f} tasks/s ({c / b:.0%}); "
                    f"dependent step {o['dependent_start_ms']:.1f} ms, bare round trip "
                    f"{o['bare_round_trip_ms']:.1f} ms; workers' CPU "
                    f"{sum(workers_ms.values()):.1f} ms a query")
        finally:
            bare.stop()
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return {"events": settings.worker_events, "commands": commands, "runs": runs,
            "median": median,
            "sizes": {"bare_tasks": bare_n, "chordal_queries": chordal_n, "hops": hops_n}}


def table(r: dict) -> list[str]:
    """Markdown lines of the round-trips figure."""
    c, m, runs = r["commands"], r["median"], r["runs"]
    events = "on" if r.get("events", True) else "off (CHORDAL_WORKER_EVENTS=0)"
    lines = ["## Redis commands per query, and Chordal next to a bare Celery worker", "",
             f"Task events {events}, for Chordal's workers and the bare worker alike.", "",
             f"The two-step plan GET → EXTRACT (4 tasks), asked {c['queries']} times one "
             f"after another: **{c['sent']:.0f} commands sent to Redis per query** (MONITOR, "
             f"a script call counted once), {c['commands']:.0f} commands Redis ran (INFO "
             f"commandstats: those inside scripts too); MULTI/EXEC counted, idle background "
             f"({c['idle_per_s']:.0f} commands/s) subtracted.", "",
             "| command | per query |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in c["by_command"].items()]
    lines += ["", "By sender (MONITOR; `lua`: run by a script; `producer`: submit, wait "
              "and read the record):", "", "| sender | commands | top commands |",
              "|---|---:|---|"]
    for role, counts in c["by_role"].items():
        top = ", ".join(f"{k} {v:.1f}" for k, v in list(counts.items())[1:6])
        lines.append(f"| {role} | {counts['total']:.1f} | {top} |")
    lines += ["", f"Throughput and overhead, {len(runs)} run(s), median (each run's ratio "
              "from the same run):", "",
              "| run | bare Celery tasks/s | Chordal tasks/s | Chordal / bare | dependent "
              "step starts (ms) | bare round trip (ms) | Chordal no-op round trip (ms) | vs "
              "bare | vs Chordal no-op | Redis CPU per query (ms) | workers' CPU per "
              "query (ms): planner, executor, finalizer, all |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, row in [(str(i + 1), run) for i, run in enumerate(runs)] + [("median", m)]:
        lines.append(f"| {name} | {row['bare_tasks_per_s']:.0f} "
                     f"| {row['chordal_tasks_per_s']:.0f} "
                     f"| {row['share_of_bare']:.0%} | {row['dependent_start_ms']:.1f} "
                     f"| {row['bare_round_trip_ms']:.1f} "
                     f"| {row['chordal_noop_round_trip_ms']:.1f} "
                     f"| {row['dependent_vs_bare']:.2f}x "
                     f"| {row['dependent_vs_chordal_noop']:.2f}x "
                     f"| {row['redis_cpu_ms_per_query']:.2f} "
                     f"| {_workers_cpu(row)} |")
    return lines


def _workers_cpu(row: dict) -> str:
    roles = [row.get(f"{role}_cpu_ms_per_query") for role in ("planner", "executor",
                                                                "finalizer")]
    if None in roles:
        return "–"
    return ", ".join(f"{ms:.1f}" for ms in roles) + f", {row['workers_cpu_ms_per_query']:.1f}"


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.round_trips")
    parser.add_argument("--queries", type=int, default=10,
                        help="two-step queries counted (one after another)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the setup")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "round_trips.json")
    args = parser.parse_args(argv)
    settings = standalone_settings(HERE / "results" / "round-trips-home")
    settings = settings.model_copy(update={"search_db": Path(settings.home) / "search.db"})
    backend = open_backend(settings)
    backend.add(load_jsonl(CORPUS))
    backend.close()
    with Stack(settings, roles=()):
        result = measure(settings, args.quick, args.queries, args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print("\n".join(table(result)))


if __name__ == "__main__":
    main(sys.argv[1:])

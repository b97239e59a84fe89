"""The scaling-across-hosts figure: answers per second with I/O-bound steps (GETs of
`get_latency_s`) for 1, 2 and 4 executor hosts, each a Linux network namespace with its
own address (tests/hosts/cluster.py), Redis on its own host and the planner and
finalizer on another; the bench process sends the queries from the bridge.

Each executor host runs one executor of `threads` threads, so n hosts have n times the
slots; efficiency is answers/s over n times the one-host figure. Needs root (the
namespaces); without it the figure says why it was not measured.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from shared.config import Settings
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.workers import WorkerProcess

from bench.figures import CORPUS, bench_documents, get_plan, scaling_run
from bench.harness import Sender, bench_env
from tests.hosts.cluster import Cluster, HostRedis, probe

HOST_COUNTS = (1, 2, 4)


def scaling(home: Path, port: int, get_latency_s: float, queries: int, k: int = 4,
            threads: int = 4, counts=HOST_COUNTS) -> dict:
    """{"rows": [{hosts, answers_per_s, efficiency}], "note": …}; rows empty and the
    reason in `note` where namespaces cannot be made."""
    why = probe()
    if why:
        return {"rows": [], "note": f"not measured: {why}"}
    cluster = Cluster(home)
    try:
        redis_host, control = cluster.add_host("redis"), cluster.add_host("control")
        executors = [cluster.add_host(f"exec{i}") for i in range(1, max(counts) + 1)]
        server = HostRedis(redis_host, port, home / "redis",
                           password=secrets.token_hex(12)).start_on_host()
        settings = Settings(_env_file=None, home=home / "root", redis_url=server.url,
                            search_db=home / "search.db", get_cache_s=0, llm_base_url=None,
                            llm_model=None, query_timeout_s=600)
        backend = open_backend(settings)
        backend.add(load_jsonl(CORPUS))
        backend.add(bench_documents())
        backend.close()
        env = bench_env(get_latency_s)

        def worker(host, role: str, **update) -> WorkerProcess:
            w = WorkerProcess(role, settings.model_copy(update={"home": home / host.name,
                                                                **update}), env=env)
            host.start(w)
            w.wait_ready(60, broker=server.url)
            return w

        worker(control, "planner")
        worker(control, "finalizer")
        phase = Sender(settings)
        rows, started = [], 0
        for n in counts:
            while started < n:
                worker(executors[started], "executor", executor_concurrency=threads)
                started += 1
            phase.ask("warm-up", get_plan(1))
            rows.append({"hosts": n, "answers_per_s": scaling_run(phase, queries, k)})
        for row in rows:
            row["efficiency"] = row["answers_per_s"] / (rows[0]["answers_per_s"] * row["hosts"])
        return {"rows": rows, "note": f"{queries} queries of {k} GETs of "
                f"{get_latency_s * 1000:.0f} ms; one executor of {threads} threads per host"}
    finally:
        cluster.close()


def table(result: dict) -> list[str]:
    lines = ["## Scaling across hosts (network namespaces on one machine)", "",
             result["note"] + ".", ""]
    if result["rows"]:
        lines += ["| executor hosts | answers/s | speed-up | efficiency vs linear |",
                  "|---:|---:|---:|---:|"]
        base = result["rows"][0]["answers_per_s"]
        lines += [f"| {r['hosts']} | {r['answers_per_s']:.2f} | {r['answers_per_s'] / base:.2f}x "
                  f"| {r['efficiency']:.0%} |" for r in result["rows"]]
    return lines

"""`python -m bench [--quick]`: start one embedded Redis and the replay LLM server, run
each figure in its own worker phase, write bench/results/results.md and the PNGs.

Phases (workers restarted between them, Redis kept):
  A  heuristic planner, no injected latency, default threads: overhead, throughput
  R  Redis commands of one two-step query (by command and by sender), Chordal's tasks/s
     and dependent-step start next to a bare Celery worker's (bench/round_trips.py)
  B  replay LLM planner, GET latency 200 ms, 64 executor threads: fan-out at 0.2 s and
     1.0 s per model call, tokens
  C  GET latency 100 ms, executor threads 1, 2, 4, 8: scaling
  D  heuristic planner on the accuracy sets' own search stores: accuracy (bench/accuracy.py)
  E  replay LLM writing plans at 20 and 50 tokens/s, then the bundled local model when
     chordal[local-llm] is installed, each with streamed and with whole-reply planning
     workers: streaming (bench/streaming.py)
  F  executors on 1, 2 and 4 test hosts (network namespaces, root), 100 ms GETs: scaling
     across hosts (bench/hosts.py; its own Redis on its own host)
  G  heuristic planner and plans written from the question on real report tables
     (TAT-QA, build and held-out) and real filings (PDF): right / wrong / not found
     (bench/questions.py); then every plain cell of the TAT-QA tables asked for, checked
     against the table (bench/cell_sweep.py, in this process)
"""

from __future__ import annotations

import argparse
import shutil
import socket
import time
from pathlib import Path

from shared.config import Settings
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack

from bench import (accuracy, cell_sweep, figures, hosts, questions, report, round_trips,
                   streaming)
from bench.harness import Phase, ReplayLLM

RESULTS = Path(__file__).resolve().parent / "results"
FANOUT_GET_S = 0.2
SCALING_GET_S = 0.1
LLM_LATENCY_S = 0.2
SLOW_LLM_S = 1.0
SLOW_MAX_K = 16
"""The 1.0 s sweep stops at k = 16: one ReAct run at k = 64 would take about
65 × 1.0 s + 64 × 0.2 s ≈ 78 s, three times over."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the setup")
    args = parser.parse_args()
    quick = args.quick
    started = time.monotonic()
    home = RESULTS / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    base = Settings(_env_file=None, home=home, redis_port=free_port(), redis_url=None,
                    search_db=home / "search.db", max_steps=100, react_max_iterations=70,
                    query_timeout_s=600, get_cache_s=0, llm_base_url=None, llm_model=None,
                    # a replayed 64-step plan is ~1,600 tokens: above the 1,024 default cap
                    llm_max_tokens=8192)
    backend = open_backend(base)
    backend.add(load_jsonl(figures.CORPUS))
    backend.add(figures.bench_documents())
    backend.close()
    results: dict = {"llm_latency_s": LLM_LATENCY_S, "fanout_get_s": FANOUT_GET_S,
                     "scaling_get_s": SCALING_GET_S}
    llm = ReplayLLM(home / "llm", free_port(), LLM_LATENCY_S).start()
    try:
        with Stack(base, roles=()):
            log("phase A: overhead and throughput (heuristic planner, no injected latency)")
            with Phase(base) as phase:
                phase.ask("warm-up", figures.OVERHEAD_PLAN)
                results["overhead"] = figures.overhead(phase, 10 if quick else 60)
                results["throughput"] = figures.throughput(phase, 20 if quick else 300,
                                                           100 if quick else 1000)
            log("phase R: Redis commands per query, Chordal next to a bare Celery worker")
            results["round_trips"] = round_trips.measure(base, quick)
            log("phase B: fan-out and tokens (replay LLM, 200 ms GETs, 64 threads)")
            with_llm = base.model_copy(update={"llm_base_url": f"{llm.base_url}/v1",
                                               "llm_model": "replay", "llm_max_retries": 0,
                                               "executor_concurrency": 64})
            with Phase(with_llm, get_latency_s=FANOUT_GET_S) as phase:
                results["fanout"] = fanout_sweep(phase, llm, quick)
            log("phase C: scaling (100 ms GETs, 1/2/4/8 executor threads)")
            results["scaling"] = {}
            for threads in (1, 2, 4, 8):
                with Phase(base, get_latency_s=SCALING_GET_S, executor_threads=threads) as phase:
                    phase.ask("warm-up", figures.get_plan(1))
                    results["scaling"][threads] = figures.scaling_run(
                        phase, 8 if quick else 24, 4)
                log(f"  {threads} threads: {results['scaling'][threads]:.2f} answers/s")
            log("phase E: streaming (plans written at 20 and 50 tokens/s, then a real model)")
            results["streaming"] = streaming_phase(base, llm, quick)
            log("phase F: scaling across hosts (executors on 1, 2, 4 namespaced hosts)")
            results["hosts"] = hosts.scaling(home / "hosts", free_port(), SCALING_GET_S,
                                             8 if quick else 48,
                                             counts=(1, 2) if quick else hosts.HOST_COUNTS)
            log(f"  {results['hosts']['note']}")
            log("phase D: accuracy (publication-dated corpora with known answers)")
            results["accuracy"] = accuracy.accuracy(base)
            log("phase G: questions on real report tables and filings (TAT-QA, SEC PDFs)")
            results["questions"] = questions.questions(
                base, ("filings",) if quick else questions.SETS)
            if not quick:
                log("phase G: every plain cell of the TAT-QA tables asked for (in process)")
                results["cell_sweep"] = cell_sweep.sweeps()
    finally:
        llm.stop()
    results["elapsed_s"] = time.monotonic() - started
    report.write(results, RESULTS)
    log(f"wrote {RESULTS / 'results.md'} in {results['elapsed_s']:.0f} s")


def fanout_sweep(phase: Phase, llm: ReplayLLM, quick: bool) -> list[dict]:
    """The fan-out figure at each model latency: a list of {llm_s, reps, rows}, rows as
    `figures.fanout` returns them. The slower model plays through the replay server's
    per-entry delay, so both sweeps share one server and one worker set."""
    ks = [1, 4] if quick else [1, 4, 16, 64]
    reps = 1 if quick else 3
    sweeps = []
    slow_ks = [k for k in ks if k <= SLOW_MAX_K]
    for llm_s, sweep_ks in ((LLM_LATENCY_S, ks), (SLOW_LLM_S, slow_ks)):
        log(f"  model {llm_s:.1f} s per call, k = {sweep_ks}, {reps} repeats")
        rows = figures.fanout(phase, llm, sweep_ks, FANOUT_GET_S, llm_s - LLM_LATENCY_S, reps)
        sweeps.append({"llm_s": llm_s, "reps": reps, "rows": rows})
    return sweeps


def streaming_phase(base: Settings, llm: ReplayLLM, quick: bool) -> dict:
    """The streaming figure: replayed plans streamed and whole, then the local model."""
    reps = 1 if quick else 3
    sizes, speeds = ((4,), (50,)) if quick else (streaming.SIZES, streaming.SPEEDS)
    with_llm = base.model_copy(update={"llm_base_url": f"{llm.base_url}/v1",
                                       "llm_model": "replay", "llm_max_retries": 0})
    rows = []
    for mode in ("streamed", "whole"):
        with Phase(with_llm.model_copy(update={"llm_stream": mode == "streamed"}),
                   get_latency_s=FANOUT_GET_S) as phase:
            rows += streaming.replay_rows(phase, llm, mode, reps, sizes, speeds)
            log(f"  {mode}: {len(rows)} rows")
    if quick:
        real, note = [], "Real model: not run with --quick."
    else:
        real, note = streaming.real_rows(base.model_copy(update={"local_llm_port": free_port()}),
                                         FANOUT_GET_S, reps)
    return {"reps": reps, "get_latency_s": FANOUT_GET_S, "rows": rows + real, "real_note": note}


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)

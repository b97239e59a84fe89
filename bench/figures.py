"""The five measurements. Each takes a running `Phase` and returns plain dicts of
numbers that `bench.report` turns into the table and the plots.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from shared.models import RunRecord
from shared.search.document import Document

from bench.harness import Phase, ReplayLLM, Sender

CORPUS = Path(__file__).resolve().parent.parent / "shared" / "data" / "corpus.jsonl"
QUESTIONS = Path(__file__).resolve().parent.parent / "shared" / "data" / "questions.txt"
CITIES = ["Calder", "Riverton", "Harborline", "Northwind", "Meridian", "Kestrel", "Voltara",
          "Dresden"]
TITLES = [f"Bench Station {city} {n} Weather Log" for city in CITIES for n in range(1, 9)]
"""64 distinct titles: the plan repair merges GETs of the same document, so a fan-out
of k needs k different documents (indexed into the bench's own search store)."""


def bench_documents() -> list[Document]:
    return [Document(title=t, content=f"{t}: rainfall {i % 17 + 3} mm, wind {i % 11 + 4} km/h.",
                     date="2023-09-30") for i, t in enumerate(TITLES)]


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def elapsed(record: RunRecord) -> float:
    """Seconds from enqueue to the terminal status."""
    t = record.timings
    return (t.get("done") or t["failed"]) - t["queued"]


def get_plan(k: int) -> dict:
    """k independent GET steps (titles from the bundled corpus, cycled)."""
    steps = [{"id": f"E{i + 1}", "operation": "GET", "source": TITLES[i % len(TITLES)],
              "output_var": f"$R{i + 1}"} for i in range(k)]
    # the question names k; the template prints a step's value, as the LLM planner requires
    return {"domain": "general", "steps": steps,
            "answer": f"Fetched {k} documents, the first: {{{{ R1 }}}}"}


def react_script(k: int) -> list[dict]:
    """The model's replies for a ReAct loop making the same k GETs, one per turn."""
    def reply(tool, value):
        return {"match": None, "content": json.dumps(
            {"thought": "next", "action": {"tool": tool, "input": value}})}
    return ([reply("get", TITLES[i % len(TITLES)]) for i in range(k)]
            + [reply("finish", f"Fetched {k} documents [R1].")])


def slowed(entries: list[dict], delay_s: float) -> list[dict]:
    """Replay entries that each answer `delay_s` later than the server's own latency
    (the replay server's `slow` fault), so one server can play a slower model."""
    if not delay_s:
        return entries
    return [{**e, "fault": "slow", "delay": delay_s} for e in entries]


def spread(values: list[float]) -> dict:
    """Median, min and max of the repeats of one measurement."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def tokens(record: RunRecord) -> int:
    """Prompt + completion tokens of one query, as the replay server counted them."""
    return record.usage.get("prompt_tokens", 0) + record.usage.get("completion_tokens", 0)


def fanout(phase: Phase, llm: ReplayLLM, ks: list[int], get_latency_s: float,
           extra_llm_s: float, reps: int) -> list[dict]:
    """Per k: end-to-end seconds (median, min, max of `reps` repeats) and tokens of ReWOO
    (LLM plan, steps fanned out) and of ReAct (one GET per iteration), both through the
    replay server with every reply `extra_llm_s` slower than its base latency."""
    rows = []
    for k in ks:
        question = f"Fetch the {k} reports and summarise them."
        rewoo, react = [], []
        for _ in range(reps):
            llm.load(slowed([{"match": None, "content": json.dumps(get_plan(k))}], extra_llm_s))
            rewoo.append(phase.ask(question))
            llm.load(slowed(react_script(k), extra_llm_s))
            react.append(phase.ask(question, mode="react"))
        for r in rewoo + react:
            if r.status != "done":
                raise RuntimeError(f"fan-out k={k} {r.mode}: {r.status}: {r.error}")
        planning = statistics.median(sum(c.latency_ms for c in r.llm_calls) / 1000 for r in rewoo)
        rows.append({
            "k": k, "ok_steps": sum(s.status == "ok" for s in rewoo[0].steps),
            "rewoo_s": spread([elapsed(r) for r in rewoo]),
            "react_s": spread([elapsed(r) for r in react]),
            "ideal_s": planning + get_latency_s,
            "rewoo_tokens": statistics.median(map(tokens, rewoo)),
            "react_tokens": statistics.median(map(tokens, react)),
            "rewoo_calls": rewoo[0].usage.get("calls", 0),
            "react_calls": react[0].usage.get("calls", 0),
        })
    return rows


OVERHEAD_PLAN = {"domain": "finance", "steps": [
    {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
     "output_var": "$R1"},
    {"id": "E2", "operation": "EXTRACT", "source": "$R1",
     "pattern": r"revenue of \$(\d+(?:\.\d+)?) billion", "output_var": "$Y"}],
    "answer": "Revenue was ${{ Y }} billion."}


def overhead(phase: Phase, n: int) -> dict:
    """Milliseconds spent in Chordal's machinery around the tools of a two-step plan
    (one query at a time, so no queueing), next to a no-op round trip through Chordal's
    executor (bench/noop.py)."""
    hops = {"enqueue → first step starts": [], "step done → dependent step starts": [],
            "last step done → answer stored": []}
    tools = []
    for _ in range(n):
        r = phase.ask("What was Tesla's revenue in Q3 2023?", OVERHEAD_PLAN)
        if r.status != "done":
            raise RuntimeError(f"overhead query failed: {r.error}")
        e1, e2 = r.steps
        hops["enqueue → first step starts"].append(e1.started_at - r.timings["queued"])
        hops["step done → dependent step starts"].append(e2.started_at - e1.finished_at)
        hops["last step done → answer stored"].append(r.timings["done"] - e2.finished_at)
        tools += [e1.duration_ms / 1000, e2.duration_ms / 1000]
    noop = [phase.noop_round_trip() for _ in range(n)]
    out = {name: (statistics.median(v) * 1000, pct(v, 95) * 1000) for name, v in hops.items()}
    out["(tool itself, per step)"] = (statistics.median(tools) * 1000, pct(tools, 95) * 1000)
    out["no-op round trip on Chordal's executor"] = (statistics.median(noop) * 1000, pct(noop, 95) * 1000)
    return out


def throughput(phase: Phase, n: int, noops: int) -> dict:
    """Answered queries/s (heuristic planner, embedded search store, n sent at once)
    next to the no-op ceiling: no-op tasks/s on Chordal's executor over the tasks one
    query needs."""
    questions = [q for q in QUESTIONS.read_text().splitlines() if q.strip()]
    t0 = time.time()
    queries = [phase.submit(questions[i % len(questions)]) for i in range(n)]
    records = [phase.wait(q, 600) for q in queries]
    end = max((r.timings.get("done") or r.timings.get("failed")) for r in records)
    rate = n / (end - t0)
    tasks = statistics.mean(2 + len(r.steps) for r in records)  # plan + steps + finalize
    noop_rate = phase.noop_rate(noops)
    return {"queries": n, "done": sum(r.status == "done" for r in records),
            "qps": rate, "tasks_per_query": tasks, "noop_tasks_per_s": noop_rate,
            "ceiling_qps": noop_rate / tasks}


def scaling_run(phase: Sender, n: int, k: int) -> float:
    """Answers/s for n queries of k independent (slow) GETs, all sent at once."""
    t0 = time.time()
    queries = [phase.submit(f"Fetch {k} reports ({i}).", get_plan(k)) for i in range(n)]
    records = [phase.wait(q, 600) for q in queries]
    bad = [r for r in records if r.status != "done"]
    if bad:
        raise RuntimeError(f"scaling: {len(bad)} queries failed: {bad[0].error}")
    return n / (max(r.timings["done"] for r in records) - t0)


def save(fig, path: Path) -> None:
    """Write a matplotlib figure as a PNG and free it."""
    import matplotlib.pyplot as plt  # matplotlib is the bench extra's: loaded when drawing

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

"""The streaming figure: how soon the first step starts, and how soon the answer is
stored, when the planner sends each step as the model writes it (streamed) against
when it waits for the whole reply (whole).

Replay: the replay server writes a plan of k steps (k/2 GET → EXTRACT pairs over the
bench's synthetic documents, GETs of `get_latency_s`) at a known speed (its per-token
delay: 20 and 50 tokens/s; a whole reply is held back for the same generation time).
Real model: the bundled local model (chordal[local-llm]) plans bundled questions for
real; skipped, saying so, when the extra is not installed. Each point is the median of
`reps` runs; the whole-reply runs use workers with CHORDAL_LLM_STREAM=false.
"""

from __future__ import annotations

import contextlib
import json
import statistics

from shared.config import Settings
from shared.errors import ConfigError
from shared.models import RunRecord
from shared.stack.local_llm import LocalLLM

from bench.figures import TITLES, elapsed, save, spread
from bench.harness import Phase, ReplayLLM

SIZES = (4, 8, 16)
SPEEDS = (20, 50)
"""Tokens per second the replay server writes at."""
REAL_QUESTIONS = ("What was Tesla's total revenue in Q3 2023?",
                  "What was Northwind Motors' revenue in Q3 2023?")


def stream_plan(k: int) -> dict:
    """The planner reply for k steps: k/2 documents fetched, a figure read from each."""
    steps, shown = [], []
    for i in range(k // 2):
        steps += [{"id": f"E{2 * i + 1}", "operation": "GET", "source": TITLES[i % len(TITLES)],
                   "output_var": f"$D{i + 1}"},
                  {"id": f"E{2 * i + 2}", "operation": "EXTRACT", "source": f"$D{i + 1}",
                   "pattern": r"rainfall (\d+) mm", "output_var": f"$R{i + 1}"}]
        shown.append(f"{{{{ R{i + 1} }}}} mm")
    return {"reasoning": f"Fetch the {k // 2} station reports and read each rainfall.",
            "plan": {"domain": "generic", "steps": steps,
                     "answer": "Rainfall: " + ", ".join(shown) + "."}}


def first_step_s(record: RunRecord) -> float | None:
    """Seconds from enqueue to the first step's start (None: no step ran)."""
    starts = [s.started_at for s in record.steps if s.started_at]
    return min(starts) - record.timings["queued"] if starts else None


def replay_rows(phase: Phase, llm: ReplayLLM, mode: str, reps: int,
                sizes=SIZES, speeds=SPEEDS) -> list[dict]:
    """One row per (tokens/s, k): first-step and end-to-end seconds of `reps` runs."""
    rows = []
    for speed in speeds:
        for k in sizes:
            question = f"What rainfall did the {k // 2} stations report?"
            records = []
            for _ in range(reps):
                llm.load([{"match": None, "content": json.dumps(stream_plan(k)),
                           "token_delay": 1 / speed}])
                records.append(phase.ask(question))
            rows.append(_row(records, mode, f"replay {speed} tok/s", k))
    return rows


def real_rows(base: Settings, get_latency_s: float, reps: int) -> tuple[list[dict], str]:
    """Rows for the bundled local model, streamed and whole; empty with the reason when
    the extra is not installed."""
    try:
        model = LocalLLM(base)
    except ConfigError as exc:
        return [], f"real model not measured: {exc}"
    rows = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(model.start())
        settings = model.client_settings(base).model_copy(update={
            "llm_max_retries": 0, "llm_max_tokens": 1024})  # the default cap, for a real model
        for mode in ("streamed", "whole"):
            with Phase(settings.model_copy(update={"llm_stream": mode == "streamed"}),
                       get_latency_s=get_latency_s) as phase:
                for question in REAL_QUESTIONS:
                    records = [phase.ask(question) for _ in range(reps)]
                    rows.append(_row(records, mode, "SmolLM2-135M (local)", None, question))
    return rows, ("Real model: " + model.describe().split(" at ")[0] + ", planning bundled "
                  "questions; `answered` counts plans that passed the checks and ran.")


def _row(records: list[RunRecord], mode: str, model: str, k: int | None,
         question: str | None = None) -> dict:
    firsts = [f for f in map(first_step_s, records) if f is not None]
    calls = [c for r in records for c in r.llm_calls]
    return {"model": model, "k": k, "question": question, "mode": mode, "runs": len(records),
            "done": sum(r.status == "done" for r in records),
            "steps": statistics.median(len(r.steps) for r in records),
            "plan_modes": sorted({r.plan_mode or "-" for r in records}),
            "first_step_s": spread(firsts) if firsts else None,
            "end_s": spread([elapsed(r) for r in records]),
            "generation_s": statistics.median(c.latency_ms / 1000 for c in calls) if calls
            else None}


def table(result: dict) -> list[str]:
    """Markdown lines: streamed next to whole for every model and plan size."""
    lines = ["## Streaming: steps sent while the model writes the plan", "",
             f"Median (min–max) of {result['reps']} runs; GETs of "
             f"{result['get_latency_s'] * 1000:.0f} ms. First step: enqueue to the first "
             "step's start. Reply: the planner call's latency (generation).", "",
             "| model | k | mode | first step s | end to end s | reply s | answered | "
             "first step, streamed vs whole |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    rows = sorted(result["rows"], key=lambda w: (w["model"], w["k"] or 0, w["question"] or "",
                                                 w["mode"] != "streamed"))
    for row in rows:
        whole = next((w for w in rows if w["mode"] == "whole" and w["model"] == row["model"]
                      and w["k"] == row["k"] and w["question"] == row["question"]), None)
        gain = ""
        if row["mode"] == "streamed" and whole and row["first_step_s"] and whole["first_step_s"]:
            gain = (f"{whole['first_step_s']['median'] / row['first_step_s']['median']:.1f}x "
                    "sooner")
        k = row["k"] if row["k"] is not None else f"{row['steps']:.0f} ({row['question']})"
        lines.append(f"| {row['model']} | {k} | {row['mode']} | {_s(row['first_step_s'])} "
                     f"| {_s(row['end_s'])} | {row['generation_s'] or 0:.2f} "
                     f"| {row['done']}/{row['runs']} | {gain} |")
    if result.get("real_note"):
        lines += ["", result["real_note"]]
    return lines


def _s(s: dict | None) -> str:
    return "-" if s is None else f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})"


def plot(result: dict, path) -> None:
    """streaming.png: first-step and end-to-end seconds against k, streamed and whole,
    one panel per replay speed."""
    import matplotlib.pyplot as plt

    speeds = sorted({r["model"] for r in result["rows"] if r["k"] is not None})
    fig, axes = plt.subplots(1, len(speeds), figsize=(5 * len(speeds), 4), squeeze=False)
    for ax, model in zip(axes[0], speeds):
        for mode, color in (("streamed", "C1"), ("whole", "C0")):
            rows = sorted((r for r in result["rows"] if r["model"] == model
                           and r["mode"] == mode), key=lambda r: r["k"])
            ks = [r["k"] for r in rows]
            ax.plot(ks, [r["first_step_s"]["median"] for r in rows], color=color,
                    linestyle="--", marker="o", label=f"{mode}: first step starts")
            ax.plot(ks, [r["end_s"]["median"] for r in rows], color=color, marker="s",
                    label=f"{mode}: answer stored")
        ax.set(xlabel="steps in the plan (k)", ylabel="seconds from enqueue", title=model)
        ax.set_xticks(sorted({r["k"] for r in result["rows"] if r["k"]}))
        ax.legend(fontsize=7)
    save(fig, path)

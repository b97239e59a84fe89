"""Turns the measurements of one run into bench/results/results.md (markdown tables)
and one PNG per figure (matplotlib, headless)."""

from __future__ import annotations

import json
from pathlib import Path


def write(results: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    (out / "results.md").write_text(markdown(results))
    plots(results, out)


def markdown(r: dict) -> str:
    lines = ["# Chordal benchmark results", "",
             f"One run, {r['elapsed_s']:.0f} s, one machine. Replay LLM latency "
             f"{r['llm_latency_s'] * 1000:.0f} ms per call.", "",
             f"## Fan-out: k independent GETs ({r['fanout_get_s'] * 1000:.0f} ms each)", "",
             "| k | GETs ok | Chordal ReWOO (s) | ReAct chain (s) | ideal (s) | "
             "Chordal vs ReAct | Chordal vs ideal |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for f in r["fanout"]:
        lines.append(f"| {f['k']} | {f['ok_steps']} | {f['rewoo_s']:.2f} | {f['react_s']:.2f} "
                     f"| {f['ideal_s']:.2f} | {f['react_s'] / f['rewoo_s']:.1f}x faster "
                     f"| {f['rewoo_s'] / f['ideal_s']:.1f}x slower |")
    lines += ["", "## Per-step overhead (ms; one query at a time, no injected latency)", "",
              "| interval | median | p95 |", "|---|---:|---:|"]
    for name, (median, p95) in r["overhead"].items():
        lines.append(f"| {name} | {median:.1f} | {p95:.1f} |")
    t = r["throughput"]
    lines += ["", "## Throughput (heuristic planner, embedded search store)", "",
              "| queries | answered | queries/s | tasks per query | bare no-op tasks/s "
              "| ceiling queries/s | share of ceiling |",
              "|---:|---:|---:|---:|---:|---:|---:|",
              f"| {t['queries']} | {t['done']} | {t['qps']:.1f} | {t['tasks_per_query']:.1f} "
              f"| {t['noop_tasks_per_s']:.0f} | {t['ceiling_qps']:.1f} "
              f"| {t['qps'] / t['ceiling_qps']:.0%} |"]
    s = {int(k): v for k, v in r["scaling"].items()}
    base = s[1]
    lines += ["", f"## Scaling: executor threads, 4 GETs of {r['scaling_get_s'] * 1000:.0f} ms "
              "per query", "", "| threads | answers/s | speed-up | efficiency vs linear |",
              "|---:|---:|---:|---:|"]
    for n, rate in sorted(s.items()):
        lines.append(f"| {n} | {rate:.2f} | {rate / base:.2f}x | {rate / base / n:.0%} |")
    lines += ["", "## Tokens per query (prompt + completion, replay server)", "",
              "| k | ReWOO tokens (calls) | ReAct tokens (calls) | ReAct / ReWOO |",
              "|---:|---:|---:|---:|"]
    for f in r["fanout"]:
        ratio = f["react_tokens"] / f["rewoo_tokens"] if f["rewoo_tokens"] else float("nan")
        lines.append(f"| {f['k']} | {f['rewoo_tokens']:.0f} ({f['rewoo_calls']}) "
                     f"| {f['react_tokens']:.0f} ({f['react_calls']}) | {ratio:.1f}x |")
    return "\n".join(lines) + "\n"


def plots(r: dict, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = [f["k"] for f in r["fanout"]]
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (("react_s", "ReAct chain"), ("rewoo_s", "Chordal ReWOO chord"),
                       ("ideal_s", "ideal (plan + one GET)")):
        ax.plot(ks, [f[key] for f in r["fanout"]], marker="o", label=label)
    for f in r["fanout"]:
        ax.annotate(f"{f['react_s'] / f['rewoo_s']:.1f}x", (f["k"], f["rewoo_s"]),
                    textcoords="offset points", xytext=(4, 6), fontsize=8)
    ax.set(xscale="log", yscale="log", xlabel="independent GETs per question (k)",
           ylabel="end-to-end seconds", title=f"Fan-out, {r['fanout_get_s'] * 1000:.0f} ms per GET")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.legend()
    save(fig, out / "fanout.png")

    names = list(r["overhead"])
    fig, ax = plt.subplots(figsize=(7, 4))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [r["overhead"][n][0] for n in names], 0.4, label="median")
    ax.barh([i - 0.2 for i in y], [r["overhead"][n][1] for n in names], 0.4, label="p95")
    ax.set_yticks(list(y), names, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="milliseconds", title="Time in Chordal's machinery vs a bare Celery no-op")
    ax.legend()
    save(fig, out / "overhead.png")

    t = r["throughput"]
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.bar(["Chordal", "no-op ceiling"], [t["qps"], t["ceiling_qps"]], color=["C0", "C7"])
    ax.set(ylabel="queries/s", title=f"Throughput ({t['queries']} queries, "
                                     f"{t['tasks_per_query']:.1f} tasks each)")
    save(fig, out / "throughput.png")

    s = {int(k): v for k, v in r["scaling"].items()}
    n = sorted(s)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(n, [s[i] for i in n], marker="o", label="measured")
    ax.plot(n, [s[1] * i for i in n], linestyle="--", color="C7", label="linear")
    ax.set(xscale="log", yscale="log", xlabel="executor threads", ylabel="answers/s",
           title=f"Scaling, {r['scaling_get_s'] * 1000:.0f} ms GETs")
    ax.set_xticks(n, [str(i) for i in n])
    ax.legend()
    save(fig, out / "scaling.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    x = range(len(ks))
    ax.bar([i - 0.2 for i in x], [f["rewoo_tokens"] for f in r["fanout"]], 0.4, label="ReWOO")
    ax.bar([i + 0.2 for i in x], [f["react_tokens"] for f in r["fanout"]], 0.4, label="ReAct")
    ax.set_xticks(list(x), [str(k) for k in ks])
    ax.set(yscale="log", xlabel="GETs per question (k)", ylabel="tokens per query",
           title="Tokens per query")
    ax.legend()
    save(fig, out / "tokens.png")


def save(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt
    plt.close(fig)

"""Turns the measurements of one run into bench/results/results.md (markdown tables)
and one PNG per figure (matplotlib, headless)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.figures import save


def write(results: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    (out / "results.md").write_text(markdown(results))
    plots(results, out)


def markdown(r: dict) -> str:
    from bench.accuracy import table  # the accuracy figure writes its own table

    text = _markdown(r)
    if "round_trips" in r:
        from bench.round_trips import table as round_trips_table
        text += "\n" + "\n".join(round_trips_table(r["round_trips"])) + "\n"
    if "hosts" in r:
        from bench.hosts import table as hosts_table
        text += "\n" + "\n".join(hosts_table(r["hosts"])) + "\n"
    if "streaming" in r:
        from bench.streaming import table as streaming_table
        text += "\n" + "\n".join(streaming_table(r["streaming"])) + "\n"
    if "accuracy" in r:
        text += "\n" + "\n".join(table(r["accuracy"])) + "\n"
    if "questions" in r:
        from bench.questions import table as questions_table
        text += "\n" + "\n".join(questions_table(r["questions"])) + "\n"
    if "cell_sweep" in r:
        from bench.cell_sweep import table as sweep_table
        text += "\n" + "\n".join(sweep_table(r["cell_sweep"])) + "\n"
    return text


def _markdown(r: dict) -> str:
    lines = ["# Chordal benchmark results", "",
             f"One run, {r['elapsed_s']:.0f} s, one machine. Replay LLM latency "
             f"{r['llm_latency_s'] * 1000:.0f} ms per call (the fan-out figure also plays a "
             f"{r['fanout'][-1]['llm_s']:.1f} s model through the server's per-reply delay).",
             ""]
    lines += fanout_table(r)
    lines += ["", "## Per-step overhead (ms; one query at a time, no injected latency)", "",
              "| interval | median | p95 |", "|---|---:|---:|"]
    for name, (median, p95) in r["overhead"].items():
        lines.append(f"| {name} | {median:.1f} | {p95:.1f} |")
    t = r["throughput"]
    lines += ["", "## Throughput (heuristic planner, embedded search store)", "",
              "| queries | answered | queries/s | tasks per query | Chordal no-op tasks/s "
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
    for f in base_sweep(r)["rows"]:
        ratio = f["react_tokens"] / f["rewoo_tokens"] if f["rewoo_tokens"] else float("nan")
        lines.append(f"| {f['k']} | {f['rewoo_tokens']:.0f} ({f['rewoo_calls']}) "
                     f"| {f['react_tokens']:.0f} ({f['react_calls']}) | {ratio:.1f}x |")
    return "\n".join(lines) + "\n"


def fanout_table(r: dict) -> list[str]:
    """Markdown lines of the fan-out table: one row per (model latency, k), seconds as
    median (min–max) over the repeats, factors from the medians; then a note for every
    k a slower sweep left out, with the ReAct time that run would have taken."""
    get_s = r["fanout_get_s"]
    reps = r["fanout"][0]["reps"]
    lines = [f"## Fan-out: k independent GETs ({get_s * 1000:.0f} ms each)", "",
             f"Seconds: median{' (min–max)' if reps > 1 else ''} of {reps} repeat"
             f"{'s' if reps > 1 else ''}; factors from the medians. ReAct waits for k + 1 "
             "model calls and k GETs in turn, ReWOO for one model call and about one GET, so "
             "the ideal factor moves with the model/GET latency ratio from k (GETs dominate) "
             "to k + 1 (model calls dominate); Chordal's own overhead keeps it below.", "",
             "| model s/call | k | GETs ok | Chordal ReWOO (s) | ReAct chain (s) | ideal (s) | "
             "Chordal vs ReAct | Chordal vs ideal |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sweep in r["fanout"]:
        for f in sweep["rows"]:
            rewoo, react = f["rewoo_s"]["median"], f["react_s"]["median"]
            lines.append(f"| {sweep['llm_s']:.1f} | {f['k']} | {f['ok_steps']} "
                         f"| {spread_text(f['rewoo_s'], reps)} "
                         f"| {spread_text(f['react_s'], reps)} | {f['ideal_s']:.2f} "
                         f"| {react / rewoo:.1f}x faster | {rewoo / f['ideal_s']:.1f}x slower |")
    all_ks = {f["k"] for sweep in r["fanout"] for f in sweep["rows"]}
    for sweep in r["fanout"]:
        for k in sorted(all_ks - {f["k"] for f in sweep["rows"]}):
            lines += ["", f"k = {k} is not run at {sweep['llm_s']:.1f} s per call: one ReAct "
                      f"run would take about {k + 1} × {sweep['llm_s']:.1f} s + {k} × "
                      f"{get_s:.1f} s ≈ {(k + 1) * sweep['llm_s'] + k * get_s:.0f} s."]
    return lines


def spread_text(s: dict, reps: int) -> str:
    """A `figures.spread` as text, median (min–max) like 0.50 (0.48–0.53); the median
    alone for a single repeat."""
    if reps == 1:
        return f"{s['median']:.2f}"
    return f"{s['median']:.2f} ({s['min']:.2f}–{s['max']:.2f})"


def base_sweep(r: dict) -> dict:
    """The fan-out sweep at the server's own latency (the one the tokens figure uses;
    token counts do not depend on latency)."""
    return next(s for s in r["fanout"] if s["llm_s"] == r["llm_latency_s"])


def plots(r: dict, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fanout_plot(r, out / "fanout.png")
    if "streaming" in r:
        from bench.streaming import plot as streaming_plot
        streaming_plot(r["streaming"], out / "streaming.png")

    names = list(r["overhead"])
    fig, ax = plt.subplots(figsize=(7, 4))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [r["overhead"][n][0] for n in names], 0.4, label="median")
    ax.barh([i - 0.2 for i in y], [r["overhead"][n][1] for n in names], 0.4, label="p95")
    ax.set_yticks(list(y), names, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="milliseconds", title="Time in Chordal's machinery vs a no-op round trip")
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

    rows = base_sweep(r)["rows"]
    ks = [f["k"] for f in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    x = range(len(ks))
    ax.bar([i - 0.2 for i in x], [f["rewoo_tokens"] for f in rows], 0.4, label="ReWOO")
    ax.bar([i + 0.2 for i in x], [f["react_tokens"] for f in rows], 0.4, label="ReAct")
    ax.set_xticks(list(x), [str(k) for k in ks])
    ax.set(yscale="log", xlabel="GETs per question (k)", ylabel="tokens per query",
           title="Tokens per query")
    ax.legend()
    save(fig, out / "tokens.png")


def fanout_plot(r: dict, path: Path) -> None:
    """fanout.png: ReAct, ReWOO and ideal seconds against k, one line style per model
    latency, error bars from min to max of the repeats, ReAct/ReWOO factor annotated."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    # Legend entries in drawing order, grouped by model latency; an error bar's own
    # data line as its handle, since the error bar handle drops the dashes.
    handles, labels = [], []
    for sweep, style in zip(r["fanout"], ("-", "--", ":")):
        rows, tag = sweep["rows"], f"{sweep['llm_s']:.1f} s/call"
        ks = [f["k"] for f in rows]
        for key, label, color in (("react_s", "ReAct chain", "C0"),
                                  ("rewoo_s", "Chordal ReWOO chord", "C1")):
            median = [f[key]["median"] for f in rows]
            below = [f[key]["median"] - f[key]["min"] for f in rows]
            above = [f[key]["max"] - f[key]["median"] for f in rows]
            bars = ax.errorbar(ks, median, yerr=[below, above], color=color, linestyle=style,
                               marker="o", markersize=4, capsize=3)
            handles.append(bars.lines[0])
            labels.append(f"{label}, {tag}")
        handles += ax.plot(ks, [f["ideal_s"] for f in rows], color="C7", linestyle=style)
        labels.append(f"ideal (plan + one GET), {tag}")
        for f in rows:
            ax.annotate(f"{f['react_s']['median'] / f['rewoo_s']['median']:.1f}x",
                        (f["k"], f["rewoo_s"]["median"]), textcoords="offset points",
                        xytext=(4, 6), fontsize=8)
    all_ks = sorted({f["k"] for sweep in r["fanout"] for f in sweep["rows"]})
    ax.set(xscale="log", yscale="log", xlabel="independent GETs per question (k)",
           ylabel="end-to-end seconds",
           title=f"Fan-out, {r['fanout_get_s'] * 1000:.0f} ms per GET "
                 f"(median of {r['fanout'][0]['reps']}, bars min–max)")
    ax.set_xticks(all_ks, [str(k) for k in all_ks])
    ax.set_xmargin(0.08)
    plain_log_labels(ax.yaxis)
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.legend(handles, labels, fontsize=7, handlelength=4)  # long enough to show dashes
    save(fig, path)


def plain_log_labels(axis) -> None:
    """Label a log axis at 1-2-5 steps in plain numbers (0.5, 1, 2 …) instead of
    matplotlib's 10^x, which is hard to read off for seconds."""
    import matplotlib.ticker as ticker

    axis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
    axis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    axis.set_minor_formatter(ticker.NullFormatter())

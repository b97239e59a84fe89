"""The real-model tables: consumes the per-case rows `bench.real_model.planning` returns
(one per case, form and prompt variant) and the token counts; produces the summary
shares and the markdown written to bench/results/real_model.md.
"""

from __future__ import annotations

import statistics


def summary(rows: list[dict]) -> dict:
    """Shares over `rows` (one form and variant): replies that parse, plans passing the
    checks on attempt 1 and within all attempts, answers right, p50 planning seconds."""
    n = len(rows)
    replies = [parsed for r in rows for parsed in r["parsed"]]
    latencies = [r["planning_s"] for r in rows if r["planning_s"] is not None]
    judged = [r for r in rows if r.get("outcome") is not None]
    return {
        "cases": n,
        "replies": len(replies),
        "parse": sum(replies) / len(replies) if replies else 0.0,
        "valid_first": sum(r["valid_attempt"] == 1 for r in rows) / n if n else 0.0,
        "valid_within": sum(r["valid_attempt"] is not None for r in rows) / n if n else 0.0,
        "judged": len(judged),
        "correct": (sum(r["outcome"] == "correct" for r in judged) / len(judged)
                    if judged else None),
        "wrong": sum(r["outcome"] == "wrong" for r in judged),
        "p50_planning_s": statistics.median(latencies) if latencies else None,
        "tokens_per_query": (statistics.mean(r["tokens"] for r in rows) if rows else 0.0),
    }


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def quality_table(groups: dict[tuple[str, str], list[dict]], attempts: int) -> list[str]:
    """One row per (structured-output form, prompt variant)."""
    lines = ["| form | prompt | cases | replies | parse | valid on attempt 1 "
             f"| valid within {attempts} | answered right (wrong) | p50 planning s "
             "| tokens per query |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (form, variant), rows in groups.items():
        s = summary(rows)
        right = (f"{_pct(s['correct'])} ({s['wrong']}) of {s['judged']}"
                 if s["judged"] else "not run")
        p50 = "–" if s["p50_planning_s"] is None else f"{s['p50_planning_s']:.1f}"
        lines.append(f"| {form} | {variant} | {s['cases']} | {s['replies']} | {_pct(s['parse'])} "
                     f"| {_pct(s['valid_first'])} | {_pct(s['valid_within'])} | {right} "
                     f"| {p50} | {s['tokens_per_query']:.0f} |")
    return lines


def prompt_table(prompt_tokens: dict[str, int], ratios: dict[str, dict]) -> list[str]:
    """Per prompt variant: its system prompt's tokens and ReWOO vs ReAct tokens at k."""
    lines = ["| prompt | system prompt tokens | ReWOO tokens at k=4 | ReAct tokens at k=4 "
             "| ReWOO / ReAct |", "|---|---:|---:|---:|---:|"]
    for variant, tokens in prompt_tokens.items():
        r = ratios.get(variant)
        if r:
            lines.append(f"| {variant} | {tokens} | {r['rewoo']} | {r['react']} "
                         f"| {r['rewoo'] / r['react']:.2f} |")
        else:
            lines.append(f"| {variant} | {tokens} | – | – | – |")
    return lines


def react_table(rows: list[dict]) -> list[str]:
    """ReWOO planning tokens vs a real ReAct loop's tokens on the same questions."""
    lines = ["| question | ReWOO tokens (plan calls) | ReAct tokens (calls) | ReAct status |",
             "|---|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['id']} | {r['rewoo_tokens']} ({r['rewoo_calls']}) "
                     f"| {r['react_tokens']} ({r['react_calls']}) | {r['react_status']} |")
    return lines

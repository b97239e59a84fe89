"""The questions figure: real report tables and real filings with known answers, asked
through real workers (planner, executor, finalizer) on a store of their own each, and
judged by bench/gold.py: right, wrong or not found, per set and planner.

Data (committed under bench/data, read at run time, never fetched):
- TAT-QA (Zhu et al., ACL 2021, CC BY 4.0; bench/tatqa.py converts it): `build` from its
  dev file, which the question reading was developed on, and `held-out` from its
  test_gold file, which was never read while building (only this figure runs on it, and
  the report lists its misses by reason only, never its questions). Cases: `single-cell`,
  `arithmetic`, `non-figure`.
- Real filings (bench/data/filings, its README lists them): five SEC filings of Patriot
  Transportation Holding, Forms 10-Q of Apple, NVIDIA and Microsoft, and Forms 10-K of
  Apple, Palantir, Rocket Lab and Ondas (PDF, public documents, metadata in sidecars),
  read by `chordal index`'s reader, and questions whose answers were read off those
  filings by hand; and, held out (`cases-held-out.jsonl`, misses reported by reason
  only), Forms 10-Q of Amazon and Intel and Tesla's Form 10-K, with questions written
  before any change was tried on them.
Planners: the heuristic planner (the question alone, no LLM), and plans written from
the question alone as an LLM planner writes them (bench/question_plans.py; TAT-QA
figure questions only).

`python -m bench.questions [--sets build,held-out,filings]` runs only this figure;
`make bench` runs it with the others.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, deque
from itertools import islice
from pathlib import Path

from shared.config import Settings
from shared.ingest import load_jsonl, read_file
from shared.search import open_backend

from bench.gold import Verdict, judge
from bench.harness import Phase, standalone_settings
from bench.question_plans import derived_plan

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
TATQA = {"build": DATA / "tatqa" / "build", "held-out": DATA / "tatqa" / "held-out"}
FILINGS = DATA / "filings"
SETS = ("build", "held-out", "filings")
PLANNERS = {"heuristic": "heuristic planner", "derived": "plans from the question"}
OUTCOMES = ("right", "wrong", "not found")
WAIT_S = 300
IN_FLIGHT = 32


def load_cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def index_filings(settings: Settings) -> list[dict]:
    """Index the real filings into `settings`' store; what each took."""
    backend = open_backend(settings)
    took = []
    try:
        for path in sorted(FILINGS.glob("*.pdf")):
            read = read_file(path)
            backend.add(read.documents)
            took.append({"file": path.name, "pages": read.pages, "tables": read.tables,
                         "seconds": round(read.seconds, 1), "read_in_part": read.unread})
    finally:
        backend.close()
    return took


def run_set(base: Settings, name: str) -> dict:
    """Index one set into its own store, ask every case through real workers, judge."""
    settings = base.model_copy(update={"search_db": base.home / f"questions-{name}.db",
                                       "llm_base_url": None, "llm_model": None})
    settings.search_path.unlink(missing_ok=True)
    started = time.monotonic()
    if name == "filings":
        indexed = index_filings(settings)
        cases = load_cases(FILINGS / "cases.jsonl") + load_cases(FILINGS / "cases-held-out.jsonl")
    else:
        backend = open_backend(settings)
        backend.add(load_jsonl(TATQA[name] / "corpus.jsonl"))
        backend.close()
        indexed = []
        cases = load_cases(TATQA[name] / "cases.jsonl")
    index_s = time.monotonic() - started
    verdicts: dict[str, list[Verdict]] = {"heuristic": [], "derived": []}
    to_ask = [("heuristic", case, None) for case in cases]
    for case in cases:
        if name != "filings" and not case["set"].startswith("non-figure") and \
                (plan := derived_plan(case["question"])) is not None:
            to_ask.append(("derived", case, plan))
        elif name != "filings" and not case["set"].startswith("non-figure"):
            verdicts["derived"].append(Verdict(case["id"], case["set"], "not found", None,
                                               "no plan: the question reads as no line item"))
    with Phase(settings) as phase:
        # at most IN_FLIGHT asked at a time: single questions are taken last in, first
        # out (docs/operations.md), so the first of hundreds asked at once would wait for
        # all the others, past its deadline
        pending = iter(to_ask)
        asked = deque((p, c, phase.submit(c["question"], plan))
                      for p, c, plan in islice(pending, IN_FLIGHT))
        while asked:
            planner, case, query = asked.popleft()
            verdicts[planner].append(judge(case, phase.wait(query, WAIT_S)))
            for p, c, plan in islice(pending, 1):
                asked.append((p, c, phase.submit(c["question"], plan)))
    return {"indexed": indexed, "index_s": round(index_s, 1), "cases": len(cases),
            "verdicts": {p: [v.__dict__ for v in vs] for p, vs in verdicts.items() if vs}}


def questions(base: Settings, sets: tuple[str, ...] = SETS) -> dict:
    """{set: run_set(...)} for every set."""
    return {name: run_set(base, name) for name in sets}


def counts(verdicts: list[dict]) -> dict[str, Counter]:
    """Outcomes per case set."""
    out: dict[str, Counter] = {}
    for v in verdicts:
        out.setdefault(v["set"], Counter())[v["outcome"]] += 1
    return out


def table(results: dict) -> list[str]:
    """Markdown: one row per data set, planner and case set; then what went wrong."""
    lines = ["## Questions on real report tables and filings", "",
             "Real data nobody here wrote: TAT-QA's tables and paragraphs from real annual "
             "reports (build: its dev file, developed on; held-out: its test_gold file, never "
             "read while building) and real SEC filings (PDF). Right / wrong / not found "
             "as bench/gold.py judges them (the gold's scale, rounding to its decimals, sign). "
             "Targets: single-cell ≥ 90% right and ≤ 1% wrong; arithmetic ≥ 80% right and "
             "≤ 2% wrong; the heuristic planner never wrong on real filings; a question whose "
             "answer is words never answered with a figure.", "",
             "| data | planner | questions | cases | right | wrong | not found | right % "
             "| wrong % |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, result in results.items():
        for planner, verdicts in result["verdicts"].items():
            for kind, c in sorted(counts(verdicts).items()):
                n = sum(c.values())
                lines.append(f"| {name} | {PLANNERS[planner]} | {kind} | {n} | {c['right']} "
                             f"| {c['wrong']} | {c['not found']} | {c['right'] / n:.0%} "
                             f"| {c['wrong'] / n:.1%} |")
    for name, result in results.items():
        if result["indexed"]:
            pages = sum(f["pages"] for f in result["indexed"])
            lines += ["", f"{name}: {len(result['indexed'])} PDFs, {pages} pages indexed in "
                      f"{result['index_s']:.0f} s (" + ", ".join(
                          f"{f['file']}: {f['pages']} pages, {f['tables']} tables, "
                          f"{f['seconds']:.0f} s" for f in result["indexed"]) + ")."]
            lines += [f"- {f['file']} read in part: {'; '.join(f['read_in_part'])}"
                      for f in result["indexed"] if f.get("read_in_part")]
    for name, result in results.items():
        for planner, verdicts in result["verdicts"].items():
            wrong = [v for v in verdicts if v["outcome"] == "wrong"]
            if not wrong:
                continue
            lines += ["", f"Wrong answers, {name}, {PLANNERS[planner]}:", ""]
            # never shown: the held-out questions stay unread
            held = [v for v in wrong if name == "held-out" or "held out" in v["set"]]
            reasons = Counter(_reason(v["detail"]) for v in held)
            lines += [f"- {v['id']} ({v['set']}): answered {v['got']!r}: {v['detail']}"
                      for v in wrong if v not in held]
            lines += [f"- {n} × {reason} (held out)" for reason, n in reasons.most_common()]
    return lines


def _reason(detail: str) -> str:
    """A wrong answer's kind, without its figures (for the held-out set)."""
    if "percentage" in detail:
        return "percentage where the gold has none, or none where it has one"
    if "words" in detail:
        return "a figure for a question whose answer is words"
    if "does not hold" in detail:
        return "a sentence that does not hold the gold words"
    return "another figure than the gold's"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.questions")
    parser.add_argument("--sets", default=",".join(SETS),
                        help=f"comma-separated, of {', '.join(SETS)}")
    args = parser.parse_args()
    sets = tuple(s.strip() for s in args.sets.split(",") if s.strip())
    if unknown := [s for s in sets if s not in SETS]:
        parser.error(f"--sets: unknown {', '.join(unknown)}; use {', '.join(SETS)}")
    from shared.stack.embedded import Stack

    base = standalone_settings(HERE / "results" / "questions-home")
    started = time.monotonic()
    with Stack(base, roles=()):
        results = questions(base, sets)
    out = HERE / "results"
    (out / "questions.json").write_text(json.dumps(results, indent=1, default=str))
    text = "\n".join(table(results))
    (out / "questions.md").write_text(text + "\n")
    print(text)
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()

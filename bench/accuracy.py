"""The accuracy figure: publication-dated corpora with questions whose answers are known,
answered by real workers (planner, executor, finalizer) on their own search store each,
and judged by `shared.evaluation`: for given plans and for the heuristic planner,
how many answers were right, wrong, or withheld.

Two sets, each a folder with corpus.jsonl, cases.jsonl and NOTES.md (the traps):
- `development` (bench/accuracy/): written by a helper who did not see the code; the
  matching rules and the heuristic planner were then tuned on it.
- `held-out` (bench/accuracy_holdout/): written later by another helper, also without
  seeing the code or the first set; its first run is recorded in docs/benchmarks.md, and it has
  been used to find bugs since, so it is no longer unseen.
- `probe` (bench/accuracy_probe/): a black-box tester's ten small corpora in other
  fields (statistics, sports, trials, elections, recalls, weather, schools, banks),
  written against the running tool to make it answer wrong, turned into cases.

`python -m bench.accuracy` runs only this figure (about half a minute); `make bench`
runs it with the others.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from shared.config import Settings
from shared.evaluation import Verdict, judge, load_cases, score
from shared.ingest import load_jsonl
from shared.search import open_backend

from bench.harness import Phase, standalone_settings

HERE = Path(__file__).resolve().parent
SETS = {"development": HERE / "accuracy", "held-out": HERE / "accuracy_holdout",
        "probe": HERE / "accuracy_probe"}


def run_set(base: Settings, name: str, folder: Path) -> list[Verdict]:
    """Index the set's corpus into its own store, answer every case, judge them."""
    settings = base.model_copy(update={"search_db": base.home / f"accuracy-{name}.db",
                                       "llm_base_url": None, "llm_model": None})
    settings.search_path.unlink(missing_ok=True)
    backend = open_backend(settings)
    backend.add(load_jsonl(folder / "corpus.jsonl"))
    backend.close()
    cases = load_cases(folder / "cases.jsonl")
    with Phase(settings) as phase:
        queries = [(case, phase.submit(case.question, case.plan)) for case in cases]
        return [judge(case, phase.wait(query, 120)) for case, query in queries]


def accuracy(base: Settings) -> dict:
    """{set name: {"score": score table, "verdicts": [...]}} for every set."""
    out = {}
    for name, folder in SETS.items():
        verdicts = run_set(base, name, folder)
        out[name] = {"score": score(verdicts), "verdicts": [
            {"id": v.case.id, "kind": v.case.kind, "outcome": v.outcome, "got": v.got,
             "doc": v.doc, "detail": v.detail} for v in verdicts]}
    return out


def table(results: dict) -> list[str]:
    """Markdown lines: one row per set and planner, then every case not answered right."""
    lines = ["## Accuracy: publication-dated corpora, known answers", "",
             "Answerable cases: right / wrong / withheld (the system said \"not found\"). "
             "Cases that must abstain: withheld / wrong. A wrong answer is a value that "
             "differs from the document's, or the right figure from another document.", "",
             "| set | planner | cases | answered right | answered wrong | withheld "
             "| must abstain | abstained | answered anyway |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, result in results.items():
        for kind, label in (("plan", "given plans"), ("question", "heuristic")):
            s = result["score"].get(kind)
            if s:
                lines.append(f"| {name} | {label} | {s['cases']} | {s['answered_right']} "
                             f"| {s['answered_wrong']} | {s['missed']} | {s['abstain_cases']} "
                             f"| {s['abstained_right']} | {s['abstain_wrong']} |")
    misses = [(name, v) for name, result in results.items() for v in result["verdicts"]
              if v["outcome"] != "correct"]
    if misses:
        lines += ["", "Cases not answered right:", ""]
        lines += [f"- {name} {v['id']} ({v['outcome']}): {v['detail'][:300]}"
                  for name, v in misses]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.accuracy")
    parser.parse_args()
    from shared.stack.embedded import Stack

    base = standalone_settings(HERE / "results" / "accuracy-home")
    started = time.monotonic()
    with Stack(base, roles=()):
        results = accuracy(base)
    print("\n".join(table(results)))
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()

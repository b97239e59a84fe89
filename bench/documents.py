"""`python -m bench.documents --filings DIR [--jsonl FILE]`: what real documents cost.
Consumes a folder of PDF filings (each given the title of its file name) and, with
`--jsonl`, a corpus to index beside them; prints per filing the pages read a second and
the peak memory of this process, then for GET sources that name no indexed document
(and one that names one exactly) the time of the first lookup and the median of four
more, on a fresh SQLite store under a temporary directory.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from shared.errors import ToolError
from shared.ingest import load_jsonl, read_file
from shared.models import GetStep
from shared.search import SqliteSearch
from shared.tools.get import run_get

MISSES = ["Acme Corp 2018 Form 10-K", "3M 2018 Form 10-K", "Boeing 2022 Annual Report",
          "Patriot Transportation Holding 2024 Annual Report",
          "Patriot Transportation Holding quarterly report"]
"""Sources that fit no filing (or several): the rules judge every candidate."""


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def lookup_ms(store: SqliteSearch, source: str, runs: int = 5) -> tuple[float, float, str]:
    times, outcome = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        try:
            outcome = run_get(GetStep(id="E1", operation="GET", source=source), store).document.title
        except ToolError as e:
            outcome = e.code
        times.append((time.perf_counter() - started) * 1000)
    return times[0], statistics.median(times[1:]), outcome


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.documents")
    parser.add_argument("--filings", type=Path, required=True, help="a folder of PDF files")
    parser.add_argument("--jsonl", type=Path, help="a corpus indexed beside them")
    args = parser.parse_args()
    docs, pages, seconds = [], 0, 0.0
    print("| filing | pages | tables | seconds | pages/s | peak RSS MB |\n|---|---|---|---|---|---|")
    for path in sorted(args.filings.glob("*.pdf")):
        read = read_file(path, {"title": f"Filing {path.stem}"})
        docs += read.documents
        pages, seconds = pages + read.pages, seconds + read.seconds
        print(f"| {path.name} | {read.pages} | {read.tables} | {read.seconds:.1f} | "
              f"{read.pages / read.seconds:.1f} | {peak_mb():.0f} |")
    print(f"\n{pages} pages in {seconds:.0f} s: {pages / seconds:.1f} pages/s; a 300-page "
          f"filing at this rate: {300 * seconds / pages:.0f} s")
    if args.jsonl:
        docs += load_jsonl(args.jsonl)
    with tempfile.TemporaryDirectory() as home, SqliteSearch(Path(home) / "search.db") as store:
        store.add(docs)
        print(f"\n| GET source ({store.count()} documents) | first ms | then ms | outcome |\n"
              "|---|---|---|---|")
        for source in [*MISSES, docs[0].title]:
            first, then, outcome = lookup_ms(store, source)
            print(f"| {source} | {first:.1f} | {then:.1f} | {outcome} |")


if __name__ == "__main__":
    main()

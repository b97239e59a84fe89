"""`chordal results`: consumes a batch's members and their run-store records (pipelined,
`CHUNK` a round trip); produces one JSON line per query, in the batch file's line order:

    {"id", "line", "question", "status", "answer", "footnotes", "complete", "missing",
     "error", "latency_s"}

`answer` is the answer text (null until the query is done), `footnotes` the evidence
behind it (`number`, `title`, `date`, `url`, `variables`), `error` why it failed or who
cancelled it (status `cancelled`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import TextIO

from shared.stores.batches import BatchStore

FIELDS = ("query", "status", "answer", "error", "t_queued", "t_done", "t_failed", "t_cancelled")


def result_line(qid: str, line: int, row: list[str | None]) -> dict:
    """The exported object of one query from its run-store fields (`FIELDS`)."""
    query, status, answer, error, queued, done, failed, cancelled = row
    parsed = json.loads(answer) if answer else {}
    end = done or failed or cancelled
    return {
        "id": qid,
        "line": line,
        "question": json.loads(query)["question"] if query else None,
        "status": status or "missing",
        "answer": parsed.get("text"),
        "footnotes": [{"number": f["number"], "title": f["evidence"].get("title"),
                       "date": f["evidence"].get("date"), "url": f["evidence"].get("url"),
                       "variables": f.get("variables", [])}
                      for f in parsed.get("footnotes", [])],
        "complete": parsed.get("complete") if parsed else None,
        "missing": parsed.get("missing", []),
        "error": error if error else (None if status else "record expired from the run store"),
        "latency_s": round(float(end) - float(queued), 3) if end and queued else None,
    }


def export_results(batches: BatchStore, batch: str, out: TextIO,
                   on_chunk: Callable[[int], None] = lambda n: None) -> Counter:
    """Write one JSON line per query of `batch` to `out`; count the statuses written."""
    counts: Counter = Counter()
    for members in batches.members(batch):
        ids = [qid for qid, _ in members]
        for (qid, line), row in zip(members, batches.fields(ids, FIELDS)):
            item = result_line(qid, line, row)
            counts[item["status"]] += 1
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
        on_chunk(len(members))
    return counts

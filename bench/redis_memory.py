"""Redis memory per answered query on documents of real-filing size.

Indexes the real filings of bench/data/filings (read by `chordal index`'s PDF reader)
and documents of about 1 MB of text made from them, starts the embedded stack (Redis
and one worker per role), then:

- answers N queries (GET a filing, EXTRACT a figure from it) and reports Redis's
  `used_memory` growth per answered query, with and without the shared cached copies
  of document texts (`chordal:text:*`, one per document version, shared by all queries),
  and what one query's keys take (MEMORY USAGE of each, every field counted);
- the `used_memory` freed by deleting every key of the answered queries, per query:
  what they hold, with their entries in Redis's key and expiry tables (steadier than
  the growth, which moves with client buffers and the AOF buffer by a few hundred KB);
- the size of `chordal show --json` (the RunRecord as JSON) of one of them;
- a hostile plan of 20 GETs with `top_k: 10` over the 1 MB documents: Redis growth (with
  and without the shared text copies its GETs and finalizer write) and the size of
  `GET /queries/{id}` (the same RunRecord JSON).

`python -m bench.redis_memory [--queries N] [--out FILE.json]`; runs on any checkout
(only APIs that predate references are used), so the figure before and after a change
comes from the same script.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import redis

from shared.ingest import read_file
from shared.search import Document, open_backend
from shared.stack.embedded import Stack

from bench.harness import Sender, standalone_settings

HERE = Path(__file__).resolve().parent
FILINGS = HERE / "data" / "filings"
BIG = 1_000_000
"""Characters of each document of the hostile plan."""
HOSTILE_SCOPES = ([f"2023-{m:02d}-01..2024-06-30" for m in range(1, 13)]
                  + [f"2024-01-{d:02d}..2024-12-31" for d in range(1, 9)])
"""Twenty windows that all hold the hostile documents' publication date."""
PATTERN = r"(?i)total (?:operating )?revenues?\D{0,80}?(\d[\d,]*(?:\.\d+)?)"


def filings() -> list[Document]:
    docs = []
    for path in sorted(FILINGS.glob("*.pdf")):
        docs.extend(read_file(path).documents)
    return docs


def big_documents(source: list[Document], n: int = 12) -> list[Document]:
    text = "\n".join(d.content for d in source)
    body = (text * (BIG // max(1, len(text)) + 1))[:BIG]
    return [Document(id=f"hostile-{i}", title=f"Hostile Holdings annual report volume {i}",
                     date="2024-03-01", content=f"Volume {i}.\n{body}") for i in range(n)]


def used(r: redis.Redis) -> int:
    return int(r.info("memory")["used_memory"])


def dataset(r: redis.Redis) -> int:
    """Redis's own count of the bytes its keys and values take (MEMORY STATS
    `dataset.bytes`: used_memory without client buffers, AOF buffer and scripts)."""
    return int(r.memory_stats()["dataset.bytes"])


def usage(r: redis.Redis, key: str) -> int:
    """MEMORY USAGE of `key`, every field of a hash counted (not 5 of them)."""
    return r.memory_usage(key, samples=0) or 0


def by_kind(r: redis.Redis) -> dict[str, int]:
    """MEMORY USAGE of every key in Redis, summed by kind (`run`, `steps`, `text`, …)."""
    sizes: dict[str, int] = defaultdict(int)
    for key in r.scan_iter(count=1000):
        sizes[key_kind(key)] += usage(r, key)
    return dict(sizes)


def freed(r: redis.Redis, query_ids: list[str]) -> tuple[int, int]:
    """The keys of `query_ids` and the `used_memory` deleting them all frees."""
    keys = [k for qid in query_ids for k in r.scan_iter(f"chordal:*{qid}*", count=1000)]
    settle(r)
    before = used(r)
    for i in range(0, len(keys), 500):
        r.delete(*keys[i:i + 500])
    return len(keys), before - used(r)


def grown_by_kind(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0)
            for k in sorted(set(before) | set(after)) if after.get(k, 0) != before.get(k, 0)}


def text_cache_bytes(r: redis.Redis) -> int:
    return sum(usage(r, k) for k in r.scan_iter("chordal:text:*", count=1000))


def key_kind(key: str) -> str:
    parts = key.split(":")
    return parts[1] if len(parts) > 1 else key


def breakdown(r: redis.Redis, qid: str) -> dict[str, int]:
    """MEMORY USAGE of every key of one query, summed by kind (run, steps, graph, …)."""
    sizes: dict[str, int] = defaultdict(int)
    for key in r.scan_iter(f"chordal:*{qid}*", count=1000):
        sizes[key_kind(key)] += usage(r, key)
    return dict(sizes)


def settle(r: redis.Redis) -> None:
    """Let the workers' last writes land and Redis shrink idle clients' buffers (its
    cron does that after 2 s) before a reading."""
    time.sleep(3.0)


def run(n: int) -> dict:
    settings = standalone_settings(HERE / "results" / "redis-memory-home")
    real = filings()
    backend = open_backend(settings)
    backend.add(real)
    backend.add(big_documents(real))
    backend.close()
    sizes = sorted(len(d.content) for d in real)
    out: dict = {"documents": {"filings": len(real), "filing_chars": sizes,
                               "hostile_chars": BIG}}
    with Stack(settings) as stack:
        sender = Sender(settings.model_copy(update={"redis_url": stack.redis_url}))
        r = redis.Redis.from_url(stack.redis_url, decode_responses=True)
        sender.ask("warm up", {"steps": [{"id": "E1", "operation": "COMPUTE",
                                          "expression": "1 + 1", "output_var": "$X"}]})
        settle(r)
        before, keys_before, data_before = used(r), by_kind(r), dataset(r)
        records = []
        for i in range(n):
            doc = real[i % len(real)]
            plan = {"steps": [
                {"id": "E1", "operation": "GET", "source": doc.title, "output_var": "$D"},
                {"id": "E2", "operation": "EXTRACT", "source": "$D", "pattern": PATTERN,
                 "output_var": "$R", "fallback": "not stated"}],
                "answer": "Total revenue: {{ R }}."}
            records.append(sender.ask(f"revenue {i}", plan))
        settle(r)
        grown = used(r) - before
        data_grown = dataset(r) - data_before
        keys_grown = grown_by_kind(keys_before, by_kind(r))
        cached = text_cache_bytes(r)
        answered = [rec for rec in records if rec.status == "done"]
        sample = answered[-1] if answered else records[-1]
        out["answered"] = {
            "queries": n, "done": len(answered),
            "used_memory_growth": grown,
            "bytes_per_answered_query": round(grown / max(1, len(answered))),
            "text_cache_bytes": cached,
            "bytes_per_answered_query_without_text_cache":
                round((grown - cached) / max(1, len(answered))),
            "dataset_bytes_per_answered_query_without_text_cache":
                round((data_grown - cached) / max(1, len(answered))),
            "keys_growth_by_kind": keys_grown,
            "key_bytes_per_answered_query": round(
                sum(v for k, v in keys_grown.items() if k != "text") / max(1, len(answered))),
            "one_query_keys": breakdown(r, sample.query_id),
            "show_json_bytes": len(sample.model_dump_json(indent=2)),
        }
        keys, gone = freed(r, [rec.query_id for rec in answered])
        out["answered"]["keys_per_answered_query"] = round(keys / max(1, len(answered)), 1)
        out["answered"]["used_memory_freed_per_answered_query"] = round(
            gone / max(1, len(answered)))
        settle(r)
        before, cached = used(r), text_cache_bytes(r)
        hostile = {"steps": [  # scopes differ, so repair merges none of the 20 GETs
            {"id": f"E{i}", "operation": "GET", "source": "Hostile Holdings annual report",
             "top_k": 10, "temporal_scope": scope, "output_var": f"$D{i}"}
            for i, scope in enumerate(HOSTILE_SCOPES, 1)]}
        record = sender.ask("hostile", hostile)
        settle(r)
        out["hostile"] = {
            "status": record.status,
            "steps_ok": sum(s.status == "ok" for s in record.steps),
            "errors": sorted({s.error_code for s in record.steps if s.error_code}),
            "used_memory_growth": used(r) - before,
            "used_memory_growth_without_text_cache":
                used(r) - before - (text_cache_bytes(r) - cached),
            "get_query_bytes": len(record.model_dump_json()),
        }
        r.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.queries)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

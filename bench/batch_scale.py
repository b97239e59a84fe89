"""The batch-size figures: `chordal status` of a batch of 100,000 queries next to one of
10, read from the batch counters and by reading every record (what it did before the
counters), the time to recount the counters from the records, and the time to cancel
the batch half-way (half its queries unfinished).

`python -m bench.batch_scale [--size N]`: starts its own embedded Redis under a
temporary directory (stopped by its PID), creates the batches with the batch store
directly (the records `chordal enqueue` writes, without sending messages: no workers
run), moves every fourth query to `done` and every fourth to `failed` through the run
store's own scripts, then times each reading (median of 5) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import redis

from producers.batch.follow import batch_status, tally_batch
from producers.cancel import cancel_batch
from shared.stores.batch_counts import recount
from shared.stores.batches import BatchStore
from shared.models import Answer, Query
from shared.stack.redis_server import EmbeddedRedis
from shared.stores.runs import RunStore

from bench.run import free_port

TTL_S = 3600
CHUNK = 1000


def fill(store: RunStore, name: str, size: int) -> None:
    batches = BatchStore(store.r, TTL_S)
    now = time.time()
    for start in range(0, size, CHUNK):
        rows = [(i, Query(id=f"{name}-{i}", question=f"Question {i}?", created_at=now,
                          deadline_s=3600)) for i in range(start, min(size, start + CHUNK))]
        batches.create(name, rows)
    answer = Answer(text="42")
    for i in range(0, size, 4):
        store.finish(f"{name}-{i}", answer)
    for i in range(1, size, 4):
        store.fail(f"{name}-{i}", "deadline exceeded while queued: no workers")


def median_s(fn, reps: int = 5) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def commands(r: redis.Redis) -> int:
    return int(r.info("stats")["total_commands_processed"])


def main(size: int) -> None:
    with tempfile.TemporaryDirectory() as home, \
            EmbeddedRedis(Path(home), free_port()) as server:
        store = RunStore.from_url(server.url, TTL_S)
        batches = BatchStore(store.r, TTL_S)
        started = time.perf_counter()
        fill(store, "small", 10)
        fill(store, "large", size)
        print(f"created {size + 10} records in {time.perf_counter() - started:.1f}s; "
              f"Redis used {store.r.info('memory')['used_memory'] / 2**20:.0f} MB")
        rows = ["| reading | 10 queries | %d queries |" % size, "|---|---|---|"]
        for label, fn in (("status from the counters", batch_status),
                          ("status reading every record", lambda b, n: tally_batch(b, n).result())):
            cells = []
            for name in ("small", "large"):
                before = commands(store.r)
                fn(batches, name)
                n = commands(store.r) - before - 1  # less the INFO itself
                cells.append(f"{median_s(lambda: fn(batches, name)) * 1000:.1f} ms ({n} commands)")
            rows.append(f"| {label} | {cells[0]} | {cells[1]} |")
        rows.append(f"| `status --recount` | {median_s(lambda: recount(store.r, 'small', TTL_S), 1) * 1000:.1f} ms "
                    f"| {median_s(lambda: recount(store.r, 'large', TTL_S), 1):.2f} s |")
        done = cancel_batch(batches, store, "large", "cancelled by the bench")
        rows.append(f"| `cancel --batch` | | {done.seconds:.2f} s ({done.cancelled} cancelled, "
                    f"{done.finished} already finished) |")
        print("\n".join(rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    main(parser.parse_args().size)

"""A single question asked behind a batch: its time to answer (`python -m bench.lanes
[N]`, default N=2000).

Starts the embedded stack with two workers per role (planner, executor, finalizer) over
the bundled corpus, enqueues N queries as one batch (as `chordal enqueue --max-in-flight
0` does), asks one question at once, and prints one JSON line: the seconds the
question took to answer, how many batch queries were done by then, and the batch's
total time.
"""

from __future__ import annotations

import json
import socket
import sys
import tempfile
import time
from pathlib import Path

from producers.batch.send import enqueue
from producers.submit import submit
from shared.stores.batches import BatchStore
from shared.broker.app import make_celery
from shared.config import Settings
from shared.ingest import load_jsonl
from shared.models import Query
from shared.search import open_backend
from shared.stack.embedded import Stack
from shared.stores.runs import RunStore

DATA = Path(__file__).resolve().parent.parent / "shared" / "data"
ROLES = ("planner", "planner", "executor", "executor", "finalizer", "finalizer")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def behind_a_batch(n: int) -> dict:
    home = Path(tempfile.mkdtemp(prefix="chordal-lanes-"))
    settings = Settings(_env_file=None, home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db", llm_base_url=None, llm_model=None)
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    questions = [q for q in (DATA / "questions.txt").read_text().splitlines() if q.strip()]
    with Stack(settings, roles=ROLES) as stack:
        s = settings.model_copy(update={"redis_url": stack.redis_url})
        store, app = RunStore.from_url(s.effective_redis_url, s.run_ttl_s), make_celery(s)
        rows = [(i + 1, Query(id=f"lane-{i}", question=f"{questions[i % 5]} (#{i})",
                              deadline_s=3600)) for i in range(n)]
        started = time.monotonic()
        enqueue(rows, "behind", BatchStore(store.r, s.run_ttl_s), store, app,
                queue_wait_s=s.batch_queue_wait_s, lane_depth=s.plan_lane_depth)
        asked = time.monotonic()
        question = Query(question=questions[0], deadline_s=3600, created_at=time.time())
        submit(question, store, app)
        record = store.wait(question.id, 3600)
        answered_s = time.monotonic() - asked
        done = sum(store.status(f"lane-{i}") == "done" for i in range(n))
        for i in range(n):
            store.wait(f"lane-{i}", 3600)
        return {"batch": n, "enqueue_s": round(asked - started, 2),
                "question": record.status, "question_answer_s": round(answered_s, 2),
                "batch_done_when_answered": done,
                "batch_total_s": round(time.monotonic() - started, 1)}


if __name__ == "__main__":
    print(json.dumps(behind_a_batch(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)))

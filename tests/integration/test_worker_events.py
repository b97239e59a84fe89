"""CHORDAL_WORKER_EVENTS off: the workers answer as before and publish no task event
(Flower then shows them, by their worker events, but none of their tasks, and
`chordal flower` says so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
import redis

from shared.config import Settings
from shared.ingest import load_jsonl
from shared.search import open_backend
from shared.stack.embedded import Stack

from ..conftest import DATA, Pipeline, free_port

pytestmark = pytest.mark.integration
PLAN = json.loads((DATA / "plans" / "tesla_yield.json").read_text())


class Events:
    """The routing keys of every Celery event published on a Redis while the block runs
    (`task.received`, `worker.heartbeat`, …): kombu publishes each event to the channel
    `/<db>.celeryev/<routing key>`."""

    def __init__(self, url: str):
        self.pubsub = redis.Redis.from_url(url).pubsub()
        self.seen: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)

    def __enter__(self) -> Events:
        self.pubsub.psubscribe("*celeryev*")
        self.pubsub.get_message(timeout=5)  # the subscription's confirmation
        self._thread.start()
        return self

    def _listen(self) -> None:
        while not self._stop.is_set():
            message = self.pubsub.get_message(timeout=0.2)
            if message and message["type"] == "pmessage":
                self.seen.append(message["channel"].decode().rsplit("/", 1)[-1])

    def wait_for(self, routing_key: str, timeout: float = 10.0) -> bool:
        """True once an event with `routing_key` was published, False after `timeout`."""
        deadline = time.monotonic() + timeout
        while routing_key not in self.seen and time.monotonic() < deadline:
            time.sleep(0.1)
        return routing_key in self.seen

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        self.pubsub.close()


def test_workers_with_events_off_answer_and_publish_no_task_event(tmp_path_factory):
    home = tmp_path_factory.mktemp("events-off-home")
    settings = Settings(home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db", worker_events=False)
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    with Stack(settings, roles=("planner", "executor", "finalizer")) as stack:
        pipeline = Pipeline(settings.model_copy(update={"redis_url": stack.redis_url}))
        with Events(stack.redis_url) as events:
            record = pipeline.ask("What was Tesla's battery yield rate in Q3 2023?", PLAN)
            heard_workers = events.wait_for("worker.heartbeat")  # every 2 s
    assert record.status == "done" and "91.7" in record.answer.text, record.error
    assert heard_workers  # the listener hears events: the workers' own still go out
    assert [key for key in events.seen if key.startswith("task.")] == []


def test_chordal_flower_warns_that_with_events_off_it_shows_no_task(tmp_path):
    env = {**os.environ, "CHORDAL_HOME": str(tmp_path), "CHORDAL_WORKER_EVENTS": "0",
           "CHORDAL_FLOWER_AUTH": "ops:s3cret", "CHORDAL_REDIS_URL":
           f"redis://127.0.0.1:{free_port()}/0"}  # nobody there: it stops after the warning
    result = subprocess.run([sys.executable, "-m", "producers", "flower", "--port",
                             str(free_port())], env=env, capture_output=True, text=True,
                            timeout=60)
    assert "CHORDAL_WORKER_EVENTS is off" in result.stderr
    assert "Flower shows them but none of their tasks" in result.stderr

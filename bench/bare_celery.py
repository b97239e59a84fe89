"""A bare Celery worker: the ceiling Chordal's throughput and per-step overhead are
measured against (bench/round_trips.py).

Kombu's own Redis transport (nothing of shared/broker/transport.py, no held-message records,
no heartbeats, no run store) with the reliability settings Chordal's workers use:
late acks, prefetch 1, a task given back when its worker is lost, a pool of threads,
and task events as Chordal's workers in the same run send them (on unless
CHORDAL_BENCH_BARE_EVENTS is 0). One task, `bare.noop`, on its own queue `bare`, which pushes its
argument to the reply list the bench names (bench/noop.py), as Chordal's no-op does.

The broker URL comes from CHORDAL_BENCH_BARE_URL: a benchmark fixture, not a setting
of the product, and it imports nothing of Chordal.
"""

from __future__ import annotations

import os
import sys

import redis
from celery import Celery

QUEUE = "bare"
NOOP = "bare.noop"
THREADS = 8


def make_app(url: str, events: bool = True) -> Celery:
    app = Celery("bare", broker=url, set_as_current=False)
    app.conf.update(
        task_serializer="json", result_serializer="json", accept_content=["json"],
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        worker_send_task_events=events, task_send_sent_event=events, task_track_started=True,
        task_default_queue=QUEUE, task_ignore_result=True, worker_hijack_root_logger=False,
        broker_transport_options={"visibility_timeout": 3600})
    replies = redis.Redis.from_url(url)

    @app.task(name=NOOP)
    def noop(reply_key: str, x: int = 0) -> None:
        replies.rpush(reply_key, x)
    return app


def worker_argv(name: str) -> list[str]:
    """The command of the bare worker (the same flags as a Chordal worker's, shared/stack
    /workers.py: no gossip or mingle; events as its app's configuration says)."""
    return [sys.executable, "-m", "celery", "-A", "bench.bare_celery:app", "worker",
            "-Q", QUEUE, "-n", name, "-P", "threads", "-c", str(THREADS),
            "--without-gossip", "--without-mingle", "-l", "WARNING"]


app = make_app(os.environ.get("CHORDAL_BENCH_BARE_URL", "redis://127.0.0.1:6379/0"),
               os.environ.get("CHORDAL_BENCH_BARE_EVENTS", "1") != "0")

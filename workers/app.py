"""The Celery app of the workers: shared configuration plus the task modules.

Start a worker with `chordal worker --role ROLE` (or `celery -A workers.app:app worker
-Q QUEUES`). Importing this module builds nothing: the worker imports the task modules
(`TASK_MODULES`, the app's `include`) as it starts, and the process's Settings are
built once, from `CHORDAL_*`, by the first call of `settings()` (the app's
configuration is the first). Every role registers every task and runs from each queue
only that queue's own tasks (workers/consumer.py refuses the rest); the background
services (workers/services/) are bootsteps of the app's worker and consumer, loaded as a
worker starts.
"""

from __future__ import annotations

import functools
import logging

from celery.signals import after_setup_logger, after_setup_task_logger

from shared.broker.app import make_celery
from shared.config import Settings
from shared.llm.client import LLMClient
from shared.broker.log_lines import BoundedLines, quiet_task_lines
from shared.search import SearchBackend, open_backend
from shared.search.cache import with_get_cache
from shared.stores.runs import RunStore

TASK_MODULES = ("workers.planner", "workers.executor", "workers.finalizer", "workers.react")
"""Imported by the worker as it starts; each registers its tasks on `app`."""
CONSUMER_STEPS = ("workers.services.heartbeat:Heartbeat",
                  "workers.services.recovery:Recovery",
                  "workers.services.giveback:GiveBackOnReconnect")
WORKER_STEPS = ("workers.services.deadlines:DeadlineSweep",
                "workers.services.lanes:LaneFeed",
                "workers.services.resumer:ReactResumer")
"""The background services (workers/services/), by name: loaded as a worker starts."""
log = logging.getLogger("chordal.workers")


@functools.cache
def settings() -> Settings:
    """The worker process's Settings, built once; it logs in to Redis as the `workers`
    ACL user unless CHORDAL_REDIS_ROLE says otherwise (Flower runs on this app as
    `monitoring`)."""
    built = Settings()
    return built if "redis_role" in built.model_fields_set else built.as_role("workers")


app = make_celery(settings, include=TASK_MODULES)
app.conf.worker_consumer = "workers.consumer:Consumer"  # runs only each queue's own tasks
app.steps["worker"].update(WORKER_STEPS)
app.steps["consumer"].update(CONSUMER_STEPS)


@after_setup_logger.connect
@after_setup_task_logger.connect
def _bounded_lines(logger: logging.Logger, **_) -> None:
    """No log line as long as the plan or source it quotes (shared/broker/log_lines.py)."""
    for handler in logger.handlers:
        handler.addFilter(BoundedLines())


@after_setup_logger.connect
def _no_line_per_task(loglevel: int = logging.INFO, **_) -> None:
    """Celery's two INFO lines a task are left out (shared/broker/log_lines.py)."""
    quiet_task_lines(loglevel, log)


@functools.cache
def run_store() -> RunStore:
    s = settings()
    return RunStore.from_url(s.effective_redis_url, s.run_ttl_s, s.text_cache_s,
                             s.max_step_bytes, s.max_query_bytes)


@functools.cache
def search_backend() -> SearchBackend:
    """The process's search backend, behind the shared GET cache in Redis unless
    CHORDAL_GET_CACHE_S is 0."""
    return with_get_cache(open_backend(settings()), run_store().r, settings().get_cache_s)


@functools.cache
def llm_client() -> LLMClient | None:
    """The process's LLM client (its calls share the cluster-wide concurrency cap in the
    run store's Redis); None when no LLM is configured."""
    return LLMClient(settings(), run_store().r) if settings().llm_enabled else None

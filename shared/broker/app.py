"""The Celery configuration every Chordal process shares (workers and producers).

Consumes `Settings`; produces a configured `Celery` app that knows the queues and task
names but no task code: a worker's app names the task modules it imports as it starts
(workers/app.py), producers send tasks to it by name. Each setting below closes a known
way to lose or duplicate work; see docs/reliability.md.
"""

from __future__ import annotations

import ssl
from typing import Callable, Sequence
from urllib.parse import urlsplit

from celery import Celery
from kombu import Queue
from kombu.utils.url import parse_url

from shared import naming
from shared.config import Settings
from shared.errors import ConfigError
from shared.broker.transport import install as install_transport


def tls_options(url: str) -> dict | None:
    """The `ssl_*` parameters of a `rediss://` URL as Celery's `broker_use_ssl` and
    `redis_backend_use_ssl` take them (kombu's own reading: `ssl_cert_reqs` as an
    `ssl.CERT_*` constant, `required` when the URL says nothing); None for a `redis://`
    URL. kombu and redis-py read them from the URL themselves, but Flower's broker view
    (queue lengths) reads only `broker_use_ssl`, and without it connects to a TLS Redis
    in plain text."""
    if urlsplit(url).scheme != "rediss":
        return None
    try:
        options = dict(parse_url(url).get("ssl") or {})
    except KeyError as e:
        raise ConfigError(f"CHORDAL_REDIS_URL has ssl_cert_reqs={e.args[0]}; use required "
                          "(check the server's certificate against ssl_ca_certs), optional "
                          "or none") from None
    options.setdefault("ssl_cert_reqs", ssl.CERT_REQUIRED)
    return options


def celery_config(settings: Settings) -> dict:
    if settings.task_time_limit_s >= settings.visibility_timeout_s:
        raise ConfigError(
            f"CHORDAL_TASK_TIME_LIMIT_S ({settings.task_time_limit_s}) must be below "
            f"CHORDAL_VISIBILITY_TIMEOUT_S ({settings.visibility_timeout_s}), or Redis "
            "redelivers tasks that are still running")
    transport = {"visibility_timeout": settings.visibility_timeout_s}
    url = settings.effective_redis_url
    tls = tls_options(url)
    return {
        "broker_url": url,
        "result_backend": url,
        "broker_use_ssl": tls,
        "redis_backend_use_ssl": tls,
        "broker_transport_options": transport,
        "result_backend_transport_options": transport,
        "broker_connection_retry_on_startup": True,
        # JSON only: nothing pickled crosses a queue.
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        # A task is acknowledged after it ran; a worker that dies mid-task gives it back.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # A batch query's steps, finalizer and ReAct iterations stay in the batch lane
        # (naming.BATCH_PRIORITY); a single question's go ahead of them.
        "task_inherit_parent_priority": True,
        "task_time_limit": settings.task_time_limit_s,
        "task_soft_time_limit": max(1, settings.task_time_limit_s - 5),
        # Events let Flower see every task (CHORDAL_WORKER_EVENTS off: Flower sees none).
        "worker_send_task_events": settings.worker_events,
        "task_send_sent_event": settings.worker_events,
        "task_track_started": True,
        # No result is stored, not even a Celery built-in's: results and failures live in
        # the run store, and the `workers` ACL user may not write Celery's result keys.
        "task_ignore_result": True,
        "result_expires": settings.run_ttl_s,
        "result_extended": False,
        "task_default_queue": naming.QUEUE_EXECUTE,
        "task_queues": [Queue(q) for q in (naming.QUEUE_PLAN, naming.QUEUE_EXECUTE,
                                            naming.QUEUE_FINALIZE, naming.QUEUE_REACT)],
        "task_routes": {
            naming.TASK_PLAN: {"queue": naming.QUEUE_PLAN},
            naming.TASK_REACT: {"queue": naming.QUEUE_REACT},
            naming.TASK_FINALIZE: {"queue": naming.QUEUE_FINALIZE},
            **{name: {"queue": naming.QUEUE_EXECUTE} for name in naming.STEP_TASKS.values()},
        },
        "worker_hijack_root_logger": False,
        "worker_cancel_long_running_tasks_on_connection_loss": False,
    }


def make_celery(settings: Settings | Callable[[], Settings], main: str = "chordal",
                include: Sequence[str] = ()) -> Celery:
    """The app configured from `settings`; given a callable instead, the configuration
    is built when the app first needs it (a worker's app, workers/app.py). `include`
    names the task modules a worker imports as it starts."""
    install_transport()  # kombu's Redis transport, one upstream defect closed
    app = Celery(main, include=list(include))
    if callable(settings):
        app.add_defaults(lambda: celery_config(settings()))
    else:
        app.conf.update(celery_config(settings))
    return app

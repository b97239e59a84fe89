"""`chordal flower`: Flower on Chordal's Celery app, behind basic auth, with metrics.

Consumes the Settings (`CHORDAL_FLOWER_AUTH` as `user:password`, the Redis URL, the
task time limit); produces a Flower process that takes this one's place (exec, so its
PID is this command's): the web UI, the REST API under `/api/` (basic auth required,
which Flower checks with `hmac.compare_digest`) and Prometheus metrics at `/metrics`,
on the one address given. Flower's API is open when started without credentials, so
this command refuses to start without them. It logs in to Redis as the `monitoring`
ACL user (shared/access/acl.py), over TLS when the URL is `rediss://` (the TLS options
reach Flower's broker view as `broker_use_ssl`, shared/broker/app.py).

Flower learns about tasks from the events the workers send; it sees the tasks that
start after it does, and none when the workers send no events (`CHORDAL_WORKER_EVENTS`
off: it says so as it starts). Every executor task's arguments lead with its `action_id`,
so Flower's search box (or `/api/tasks?search=...`) finds a step by it.
"""

from __future__ import annotations

import os
import sys

import typer

from shared.config import Settings
from shared.errors import ConfigError
from shared.stack.embedded import redis_answers

APP = "workers.app:app"
#: Runtime histogram buckets (seconds): steps take milliseconds, LLM planning seconds.
RUNTIME_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
#: Flower reads every `FLOWER_*` variable as an option (and fails on unknown ones);
#: only the ones set here may reach it.
FLOWER_ENV_PREFIX = "FLOWER_"
EVENTS_OFF = ("warning: CHORDAL_WORKER_EVENTS is off: workers started with it send no task "
              "events, and Flower shows them but none of their tasks")


def basic_auth(settings: Settings) -> str:
    """The `user:password[,user:password]` list for Flower; ConfigError when unusable."""
    if settings.flower_auth is None or not settings.flower_auth.get_secret_value().strip():
        raise ConfigError(
            "CHORDAL_FLOWER_AUTH is not set: Flower's API and UI would be open to anyone "
            "who reaches the port. Set it to user:password (e.g. "
            "`export CHORDAL_FLOWER_AUTH=admin:$(openssl rand -hex 12)`) and start again")
    value = settings.flower_auth.get_secret_value().strip()
    for pair in value.split(","):
        user, _, password = pair.partition(":")
        if not user.strip() or not password:
            raise ConfigError(
                "CHORDAL_FLOWER_AUTH must be user:password (several separated by commas; "
                "a password cannot contain a comma); one entry has no "
                f"{'user' if not user.strip() else 'password'}")
    return value


def runtime_buckets(settings: Settings) -> str:
    """Histogram buckets up to the task time limit, as Flower's option wants them."""
    limit = settings.task_time_limit_s
    return ",".join(f"{b:g}" for b in (*[b for b in RUNTIME_BUCKETS if b < limit], limit))


def flower_argv(settings: Settings, port: int, address: str, max_tasks: int,
                purge_offline_s: int) -> list[str]:
    """The Flower command line; the credentials go in the environment, not in `ps`."""
    return [sys.executable, "-m", "celery", "-A", APP, "flower",
            f"--port={port}", f"--address={address}", f"--max_tasks={max_tasks}",
            f"--purge_offline_workers={purge_offline_s}",
            f"--task_runtime_metric_buckets={runtime_buckets(settings)}"]


def flower_env(settings: Settings) -> dict[str, str]:
    """This process's environment with the credentials as `FLOWER_BASIC_AUTH` and no
    other `FLOWER_*` variable (one could turn auth off or change what we set), and the
    Redis of the `monitoring` ACL user."""
    settings = settings.as_role("monitoring")
    env = {k: v for k, v in os.environ.items() if not k.startswith(FLOWER_ENV_PREFIX)}
    env["FLOWER_BASIC_AUTH"] = basic_auth(settings)
    env["CHORDAL_REDIS_URL"] = settings.effective_redis_url
    env["CHORDAL_REDIS_ROLE"] = settings.redis_role
    return env


def flower(port: int = typer.Option(5555, "--port", help="TCP port of the UI, API and /metrics."),
           address: str = typer.Option("127.0.0.1", "--address",
                                       help="Address to bind; 0.0.0.0 for every interface."),
           max_tasks: int = typer.Option(100_000, "--max-tasks", min=1000,
                                         help="Tasks Flower keeps in memory (oldest dropped)."),
           purge_offline_s: int = typer.Option(
               60, "--purge-offline-workers", min=10,
               help="Seconds after its last heartbeat that a worker (and its metrics) is "
                    "dropped; a killed worker never says goodbye.")):
    """Run Flower (UI, REST API, Prometheus /metrics) with basic auth from CHORDAL_FLOWER_AUTH."""
    settings = Settings().as_role("monitoring")  # events, broadcasts, queue lengths: read-only
    env = flower_env(settings)  # refuses before anything else when auth is missing
    if not settings.worker_events:
        print(EVENTS_OFF, file=sys.stderr)
    if not redis_answers(settings.effective_redis_url, timeout=2.0):
        raise ConfigError(
            f"no Redis answers at {settings.masked_redis_url}: start the stack (`chordal up`) "
            "or point CHORDAL_REDIS_URL at the Redis the workers use")
    argv = flower_argv(settings, port, address, max_tasks, purge_offline_s)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)

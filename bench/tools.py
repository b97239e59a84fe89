"""Bench-only tool module, loaded into the bench workers with
CHORDAL_TOOL_MODULES=bench.tools (never into a user's workers).

- Re-registers the GET runner so each GET sleeps CHORDAL_BENCH_GET_LATENCY_S seconds
  first: a search backend with injected latency, for executors and ReAct alike (both
  run GET through `shared.tools.registry`).
- Registers `chordal.bench.noop` on the workers' Celery app, and admits it on the
  `execute` queue (shared/broker/admission.py refuses any other queue's task): a task that
  does nothing but push its argument to the reply list the bench names
  (bench/noop.py), the floor any round trip through Chordal's workers pays.

It reads the environment directly because it is a benchmark fixture, not a setting
of the product.
"""

from __future__ import annotations

import os
import time

from shared import naming
from shared.tools import registry

NOOP_TASK = "chordal.bench.noop"
GET_LATENCY_S = float(os.environ.get("CHORDAL_BENCH_GET_LATENCY_S", "0") or 0)

_real_get = registry.RUNNERS["GET"]


def _slow_get(step, inputs, backend):
    if GET_LATENCY_S > 0:
        time.sleep(GET_LATENCY_S)
    return _real_get(step, inputs, backend)


registry.register("GET", _slow_get)

from workers.app import app, run_store  # noqa: E402 - GET is re-registered first

naming.QUEUE_TASKS[naming.QUEUE_EXECUTE] = (naming.QUEUE_TASKS[naming.QUEUE_EXECUTE]
                                            | {NOOP_TASK})


@app.task(name=NOOP_TASK, ignore_result=True)
def noop(reply_key: str, x: int = 0) -> None:
    run_store().r.rpush(reply_key, x)

"""Bench-only tool module, loaded into the bench workers with
CHORDAL_TOOL_MODULES=bench.tools (never into a user's workers).

- Re-registers the GET runner so each GET sleeps CHORDAL_BENCH_GET_LATENCY_S seconds
  first: a search backend with injected latency, for executors and ReAct alike (both
  run GET through `shared.tools.registry`).
- Registers `chordal.bench.noop` on the workers' Celery app: a task that does nothing,
  the floor any Celery round trip on the same Redis pays.

It reads the environment directly because it is a benchmark fixture, not a setting
of the product.
"""

from __future__ import annotations

import os
import time

from shared.tools import registry

NOOP_TASK = "chordal.bench.noop"
GET_LATENCY_S = float(os.environ.get("CHORDAL_BENCH_GET_LATENCY_S", "0") or 0)

_real_get = registry.RUNNERS["GET"]


def _slow_get(step, inputs, backend):
    if GET_LATENCY_S > 0:
        time.sleep(GET_LATENCY_S)
    return _real_get(step, inputs, backend)


registry.register("GET", _slow_get)

from workers.app import app  # noqa: E402 - GET is re-registered first


@app.task(name=NOOP_TASK, acks_late=False)
def noop(x: int = 0) -> int:
    return x

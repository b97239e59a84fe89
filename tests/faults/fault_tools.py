"""Fault injection for the fault tests: the workers import this module through
CHORDAL_TOOL_MODULES=fault_tools (this directory on PYTHONPATH) and GET is re-registered
so the source title can carry a fault in front of the real title:

    "[slow S] Tesla Q3 2023 Financial Report"          sleeps S seconds, then a real GET
    "[down-until T] Tesla Q3 2023 Financial Report"    the search store raises
                                                       SearchUnavailable until epoch T
Any other source is an ordinary GET.
"""

from __future__ import annotations

import re
import time

from shared.errors import SearchUnavailable
from shared.tools import registry

FAULT = re.compile(r"^\[(slow|down-until) ([0-9.]+)\] (.*)$")
_real_get = registry.RUNNERS["GET"]


class DownBackend:
    """A search backend whose every call fails as an unreachable store does."""

    def __getattr__(self, name):
        def unavailable(*args, **kwargs):
            raise SearchUnavailable("search store unreachable (injected fault)")
        return unavailable


def _faulty_get(step, inputs, backend):
    match = FAULT.match(step.source or "")
    if not match:
        return _real_get(step, inputs, backend)
    kind, arg, title = match.groups()
    step = step.model_copy(update={"source": title})
    if kind == "slow":
        time.sleep(float(arg))
    elif time.time() < float(arg):
        backend = DownBackend()
    return _real_get(step, inputs, backend)


registry.register("GET", _faulty_get)

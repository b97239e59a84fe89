"""A GET that waits for the test, for the browser tests of the pages: the workers of
tests/producers/test_pages_browser.py import this module (CHORDAL_TOOL_MODULES=
page_tools, this directory on PYTHONPATH), and GET is re-registered so a source

    "[gate PATH S] Tesla Q3 2023 Financial Report"

waits until file PATH exists, or S seconds have passed, then runs the real GET. The
test holds a query in `executing` as long as it needs, with no timing guess.
"""

from __future__ import annotations

import os
import re
import time

from shared.tools import registry

GATE = re.compile(r"^\[gate (\S+) ([0-9.]+)\] (.*)$")
_real_get = registry.RUNNERS["GET"]


def _gated_get(step, inputs, backend):
    match = GATE.match(step.source or "")
    if not match:
        return _real_get(step, inputs, backend)
    path, limit, title = match.groups()
    deadline = time.monotonic() + float(limit)
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _real_get(step.model_copy(update={"source": title}), inputs, backend)


registry.register("GET", _gated_get)

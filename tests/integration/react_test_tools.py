"""ReAct tools for the integration tests. The test stack's workers import this module
through CHORDAL_TOOL_MODULES=react_test_tools (with this directory on PYTHONPATH), as a
user's own tool module would be imported.

    slow   sleeps `input` seconds (default 5), then answers "finally awake"
"""

from __future__ import annotations

import time

from shared.react.tools import register_tool
from shared.tools.base import ToolOutput


def _slow(step, inputs, backend) -> ToolOutput:
    time.sleep(float(step.input or 5))
    return ToolOutput(value="finally awake", confidence="slow")


register_tool("slow", "answers after `input` seconds (a test tool)", 5, _slow)

"""Acting: consumes one parsed Action (tool name and input) and the earlier results of
the loop, produces the StepResult of running the tool — never an exception.

The tool runs through `shared.tools.registry.run_tool` in a daemon thread; after
`timeout_s` (settings.react_tool_timeout_s) the loop stops waiting and the result is
the error TIMEOUT, so the loop goes on. The thread is abandoned, not killed: a tool
must not hold a lock the next call needs. Error codes besides the tools' own:
UNKNOWN_TOOL, BAD_INPUT (the input does not make a step, or names no earlier result),
TIMEOUT, TOOL_CRASHED.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from pydantic import ValidationError

from shared import naming
from shared.errors import ToolError
from shared.models import StepResult
from shared.search import SearchBackend
from shared.journey.steps import failure_result, running_task, tool_result
from shared.stores.texts import TextReader
from shared.tools import registry
from shared.tools.base import ToolOutput

from .tools import FINISH, TOOLS


def call_with_timeout(fn: Callable[[], ToolOutput], timeout_s: float, what: str) -> ToolOutput:
    """`fn()` in a daemon thread; ToolError TIMEOUT when it has not returned in time."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["exc"] = exc

    thread = threading.Thread(target=target, name=f"react-tool-{what}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise ToolError("TIMEOUT", f"{what} did not answer within {timeout_s:g} s; it was "
                        "abandoned: try another tool or a narrower input")
    if "exc" in box:
        raise box["exc"]
    return box["out"]


def run_action(tool: str, value: Any, *, query_id: str, n: int,
               results: dict[str, StepResult], backend: SearchBackend | None,
               timeout_s: float, reader: TextReader | None = None) -> StepResult:
    """Run tool `tool` on the model's input; never raises (failures are error results).
    `results` are the earlier results by step id (R1…, and ReWOO steps in auto mode);
    `reader` reads back the document texts they hold by reference."""
    step_id = f"R{n}"
    base = dict(action_id=naming.action_id(query_id, step_id), step_id=step_id,
                started_at=time.time(), **running_task())
    started = time.perf_counter()
    spec = TOOLS.get(tool)
    operation = tool.upper()
    try:
        if spec is None:
            raise ToolError("UNKNOWN_TOOL", f"there is no tool {tool!r}; use one of "
                            f"{', '.join([*TOOLS, FINISH])}")
        try:
            step = spec.build(value, step_id, results)
        except (ValueError, ValidationError) as exc:
            raise ToolError("BAD_INPUT", f"{tool}: {_why(exc)}; example input: "
                            f"{spec.example!r}") from None
        operation = step.operation
        missing = [f"${r}" for r in step.references() if r not in results]
        if missing:
            known = ", ".join(f"${k}" for k in results) or "none yet"
            raise ToolError("BAD_INPUT", f"{', '.join(missing)} is no earlier result "
                            f"(results so far: {known})")
        inputs = {r: reader.resolve(results[r], step_id)
                  if reader is not None and results[r].status == "ok" else results[r]
                  for r in step.references()}
        out = call_with_timeout(lambda: registry.run_tool(step, inputs, backend), timeout_s, tool)
        return tool_result({**base, "operation": operation}, out, started)
    except Exception as exc:  # a failed tool, transient or not, or a tool bug: an observation
        return failure_result({**base, "operation": operation}, exc, started)


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                         for e in exc.errors(include_url=False))
    return str(exc)

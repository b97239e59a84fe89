"""The ReAct tools: consumes a tool name and the model's input for it, produces the
StepResult of running it through the same registry the executors use
(`shared.tools.registry.run_tool`), stored by the loop under `{query_id}:R{n}`.

    get           GetStep       a document by title (`$R2` etc. substituted)
    search        SearchStep    ranked snippets, each with its document
    extract       ExtractStep   a value from an earlier result (`source: "$R1"`), by
                                pattern, or by row and period
    cell          ExtractStep   a table's cell by row and period: `{"source": "$R1",
                                "row": "capital expenditure", "period": "FY2018"}`, or
                                as text, "capital expenditure FY2018"
    calculate     ComputeStep   arithmetic over numbers and earlier results
    current_time  ToolCall      the current UTC time (a registry runner, as user tools are)
    finish        -             ends the loop; its input is the final answer

Add a tool with `register_tool(name, description, example, runner)`: the runner is a
registry runner `runner(step, inputs, backend) -> ToolOutput` that reads `step.input`.
Workers import the modules named in settings.tool_modules (`CHORDAL_TOOL_MODULES`),
so a module that calls `register_tool` at import makes its tools available everywhere.
`shared/react/act.py` runs a tool with a timeout.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from pydantic import BaseModel, ConfigDict

from shared.errors import ConfigError
from shared.models import ComputeStep, ExtractStep, GetStep, SearchStep, StepResult
from shared.models.plan import VAR_RE
from shared.search.periods import find_periods
from shared.tools import registry
from shared.tools.base import ToolOutput
from shared.tools.cells.request import ALL_PERIODS

FINISH = "finish"
DOCUMENT_OPERATIONS = ("GET", "SEARCH")


class ToolCall(BaseModel):
    """The step of a tool that is not a plan operation: its input as the model gave it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    operation: str
    input: Any = None

    def references(self) -> list[str]:
        return VAR_RE.findall(self.input) if isinstance(self.input, str) else []


Builder = Callable[[Any, str, dict[str, StepResult]], Any]
"""`build(tool_input, step_id, earlier_results) -> step model`; raises ValueError."""


@dataclass(frozen=True)
class ReactTool:
    name: str
    description: str
    example: Any
    """An input the prompt shows."""
    build: Builder


def _fields(value: Any, main: str, aliases: dict[str, tuple[str, ...]]) -> dict:
    """The model's input as step fields: a bare string is the `main` field."""
    if not isinstance(value, dict):
        if value is None or str(value).strip() == "":
            raise ValueError(f"give the {main}")
        return {main: str(value)}
    found = {}
    for field, names in aliases.items():
        for name in (field, *names):
            if value.get(name) not in (None, ""):
                found[field] = value[name]
                break
    return found


def _latest_document(results: dict[str, StepResult]) -> str | None:
    ok = [r for r in results.values() if r.status == "ok" and r.operation in DOCUMENT_OPERATIONS]
    return f"${ok[-1].step_id}" if ok else None


def _get(value, step_id, results):
    f = _fields(value, "source", {"source": ("title", "name", "query"),
                                  "temporal_scope": ("scope", "period"), "top_k": ()})
    return GetStep(id=step_id, operation="GET", **f)


def _search(value, step_id, results):
    f = _fields(value, "query", {"query": ("q", "text"), "temporal_scope": ("scope", "period"),
                                 "top_k": ()})
    return SearchStep(id=step_id, operation="SEARCH", **{"top_k": 3, **f})


def _extract(value, step_id, results):
    f = _fields(value, "pattern", {"source": ("from", "text"), "pattern": ("regex",),
                                   "row": ("line_item", "item"), "period": ("column", "year"),
                                   "quantity": (), "fallback": ()})
    return _extract_step(f, step_id, results)


_EVERY_PERIOD = re.compile(r"[\s,;:-]+(?:all|(?:in\s+)?(?:all|every)\s+periods?)\s*$", re.I)
"""A cell asked in every period: "gross profit, all periods", "gross profit all"."""


def _cell(value, step_id, results):
    if isinstance(value, str):  # "capital expenditure FY2018": the period, then the row
        mention = next(iter(find_periods(value)), None)
        f = {"row": value}
        if every := _EVERY_PERIOD.search(value):  # "gross profit, all periods"
            f = {"row": value[:every.start()].strip(" ,;:-"), "period": ALL_PERIODS}
        elif mention is not None:
            f = {"row": f"{value[:mention.start]} {value[mention.end:]}".strip(" ,;:-"),
                 "period": mention.text}
    else:
        f = _fields(value, "row", {"source": ("from", "text"), "row": ("line_item", "item"),
                                   "period": ("column", "year", "scope"), "quantity": ()})
    if not f.get("row"):
        raise ValueError('give the row (a line item, "capital expenditure") and the period '
                         '("FY2018")')
    return _extract_step(f, step_id, results)


def _extract_step(f: dict, step_id: str, results: dict[str, StepResult]) -> ExtractStep:
    f.setdefault("source", _latest_document(results) or "")
    if not f["source"]:
        raise ValueError("no document to extract from yet: get or search first, then "
                         'give "source": "$R1"')
    if not VAR_RE.fullmatch(f["source"]):
        f["source"] = f"${f['source']}" if f["source"] in results else f["source"]
    return ExtractStep(id=step_id, operation="EXTRACT", **f)


def _calculate(value, step_id, results):
    f = _fields(value, "expression", {"expression": ("expr", "formula")})
    return ComputeStep(id=step_id, operation="COMPUTE", expression=str(f.get("expression", "")))


def _current_time(step, inputs, backend) -> ToolOutput:
    return ToolOutput(value=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      confidence="clock")


TOOLS: dict[str, ReactTool] = {
    "get": ReactTool("get", "fetch one document by its title; optional temporal_scope "
                     "(2023, 2023-Q3, 2023-07)", {"source": "Acme Robotics Q3 2023 Quarterly "
                     "Report", "temporal_scope": "2023-Q3"}, _get),
    "search": ReactTool("search", "keyword search; returns snippets of the best documents",
                        "Acme Robotics revenue third quarter 2023", _search),
    "extract": ReactTool("extract", "take a value out of an earlier result with a regex "
                         "that has exactly one capture group", {"source": "$R1", "pattern":
                         r"revenue of \$(\d+(?:\.\d+)?) million"}, _extract),
    "cell": ReactTool("cell", "read one figure from a table of an earlier document: its "
                      "row (the line item, as the table or an analyst names it) and period "
                      "(the column: FY2018, 2019-Q3, December 31, 2018; all: its figure in every "
                      "period, a list for mean(), sum() or change())", {"source": "$R1",
                      "row": "capital expenditure", "period": "FY2018"}, _cell),
    "calculate": ReactTool("calculate", "arithmetic or comparison over numbers and earlier "
                           "results ($R2); mean($R3) or sum($R3) of a list, change($R3) or "
                           "percent_change($R3) of a list of two", "$R2 - $R4",
                           _calculate),
}
"""Tool name -> tool; `register_tool` adds to it."""


def register_tool(name: str, description: str, example: Any,
                  runner: Callable[..., ToolOutput]) -> ReactTool:
    """Make `name` a ReAct tool run by the registry `runner` (as operation `NAME`)."""
    key = (name or "").strip().lower()
    if not key.isidentifier() or key == FINISH:
        raise ConfigError(f"tool name {name!r} must be an identifier such as \"weather\" "
                          f"(and not {FINISH!r})")
    operation = key.upper()
    registry.register(operation, runner)
    tool = ReactTool(key, description, example,
                     lambda value, step_id, results: ToolCall(id=step_id, operation=operation,
                                                              input=value))
    TOOLS[key] = tool
    return tool


register_tool("current_time", "the current date and time (UTC, ISO 8601)", None, _current_time)


def load_tool_modules(modules: Iterable[str]) -> None:
    """Import each module (it registers its tools); ConfigError names one that fails."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise ConfigError(f"CHORDAL_TOOL_MODULES: cannot import {name!r} "
                              f"({type(exc).__name__}: {exc}); check PYTHONPATH") from exc

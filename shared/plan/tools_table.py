"""The tools table: consumes the tool name a ReWOO or LLMCompiler plan calls (`Wikipedia`,
`search`, `math`, …), produces the Chordal operation that runs it (`GET`, `SEARCH`,
`COMPUTE`, …).

Names match case-insensitively. A caller may pass its own table (`parse_plan(text,
tools={"kb": "GET"})`); it replaces `DEFAULT_TOOLS` (extend it with
`{**DEFAULT_TOOLS, "kb": "GET"}`). The operation names themselves (`GET`, `extract`, …)
always resolve, whatever the table, so a plan that names operations directly parses.
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.errors import InputError
from shared.models import OPERATIONS

DEFAULT_TOOLS: dict[str, str] = {
    "wikipedia": "GET", "get": "GET", "fetch": "GET", "lookup": "GET", "document": "GET",
    "google": "SEARCH", "search": "SEARCH", "bing": "SEARCH",
    "extract": "EXTRACT", "regex": "EXTRACT",
    "calculator": "COMPUTE", "calculate": "COMPUTE", "compute": "COMPUTE", "math": "COMPUTE",
    "wolframalpha": "COMPUTE",
    "if": "IF", "condition": "IF",
    "validate": "VALIDATE", "check": "VALIDATE",
    "merge": "MERGE",
    "filter": "FILTER",
    "arbitrate": "ARBITRATE",
}
"""Tool name (lower case) -> operation."""


class ToolsTable:
    """A checked, case-insensitive tool-name -> operation table."""

    def __init__(self, tools: Mapping[str, str] | None = None):
        table = DEFAULT_TOOLS if tools is None else tools
        if not isinstance(table, Mapping):
            raise InputError(f"tools must be a dict of tool name -> operation, not "
                             f"{type(table).__name__}; e.g. {{'wikipedia': 'GET'}}")
        self.names: dict[str, str] = {}
        for name, op in table.items():
            if not isinstance(name, str) or not isinstance(op, str) or op.upper() not in OPERATIONS:
                raise InputError(f"tools table maps {name!r} to {op!r}; map each tool name "
                                 f"(text) to one of {', '.join(OPERATIONS)}")
            self.names[name.strip().lower()] = op.upper()

    def operation(self, tool: str) -> str | None:
        """The operation `tool` runs, or None when neither the table nor OPERATIONS has it."""
        key = tool.strip().lower()
        return self.names.get(key) or (key.upper() if key.upper() in OPERATIONS else None)

    def known(self) -> str:
        """The tool names a plan may call, for error messages."""
        names = dict.fromkeys([*self.names, *(op.lower() for op in OPERATIONS)])
        return ", ".join(names)

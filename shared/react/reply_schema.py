"""The strict JSON schema of a ReAct reply: consumes the tool names, produces the schema a
constrained decoder compiles (through the form the endpoint accepts, shared/llm/forms.py)
so the model can only write one well-formed Action naming a tool that exists:

    {"thought": "<text>", "action": {"tool": "get" | "search" | … | "finish", "input": "<text>"}}

Derived with shared/llm/schema.py from the pydantic models below, the tool an enum of
the names registered when it is built. The input is text: every tool reads a bare
string as its main field (tools.py), and a free-form object has no strict schema.
"""

from __future__ import annotations

from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict, create_model

from shared.llm.schema import strict_schema

from .tools import FINISH


class ReplyAction(BaseModel):
    """The action of a reply; `tool` is narrowed to the registered names in `reply_schema`."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    input: str
    """The tool's input as text: a title, a query, a regex, an expression, the answer."""


class Reply(BaseModel):
    """One ReAct turn: the reasoning first (decoders write fields in schema order)."""

    model_config = ConfigDict(extra="forbid")

    thought: str
    action: ReplyAction


def reply_schema(tools: Iterable[str]) -> dict:
    """The strict schema of a reply whose tool is one of `tools` or finish."""
    names = tuple(dict.fromkeys([*tools, FINISH]))
    action = create_model("ReplyAction", __base__=ReplyAction,
                          tool=(Literal[names], ...))  # type: ignore[valid-type]
    reply = create_model("Reply", __base__=Reply, action=(action, ...))
    return strict_schema(reply)

"""The strict schema of a ReAct reply: the tools as an enum, strict objects, and what a
constrained decoder writes to it reads back as the Action."""

from __future__ import annotations

import json

from shared.llm.schema import KEYWORDS
from shared.react.actions import parse_action
from shared.react.reply_schema import reply_schema
from shared.react.tools import TOOLS


def keywords(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in keywords(v)} - {
            *node.get("properties", {}), *node.get("$defs", {})}
    return {k for v in node for k in keywords(v)} if isinstance(node, list) else set()


def test_the_tool_is_an_enum_of_the_registered_tools_and_finish():
    schema = reply_schema(TOOLS)
    tool = schema["$defs"]["ReplyAction"]["properties"]["tool"]
    assert tool == {"type": "string", "enum": [*TOOLS, "finish"]}
    assert schema["required"] == ["thought", "action"]  # the reasoning is written first


def test_every_object_is_strict_and_uses_only_keywords_decoders_compile():
    schema = reply_schema(["get"])
    for node in (schema, schema["$defs"]["ReplyAction"]):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    assert keywords(schema) <= KEYWORDS


def test_a_reply_written_to_the_schema_reads_back_as_its_action():
    reply = {"thought": "Find the report.", "action": {"tool": "search", "input": "Tesla Q3"}}
    a = parse_action(json.dumps(reply))
    assert (a.thought, a.tool, a.input) == ("Find the report.", "search", "Tesla Q3")

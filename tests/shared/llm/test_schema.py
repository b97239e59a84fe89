"""The planner's reply schema: derived from the Plan models, strict in OpenAI's sense, free
of keywords grammar converters reject, every string and array bounded (the steps by
CHORDAL_MAX_STEPS), and matched by the prompt's examples."""

from __future__ import annotations

import json
import typing

from pydantic import BaseModel

from shared.config import Settings
from shared.llm.forms import request_fields
from shared.planners.prompts import (EXAMPLE_STEPS, REPLY_SCHEMA, REPLY_STRING_CHARS,
                                WORKED_EXAMPLE, PlannerReply, reply_schema)
from shared.planners.llm import read_reply
from shared.llm.schema import LENGTHS, strict_schema
from shared.models import DOMAINS, OPERATIONS, GetStep, Plan, Step
from shared.models.fields import Text

COMPILED_EVERYWHERE = {"type", "properties", "required", "additionalProperties", "items",
                       "enum", "anyOf", "$ref", "$defs"}
STEP_MODELS = typing.get_args(typing.get_args(Step)[0])


def keywords(node: object) -> set[str]:
    """Every keyword used anywhere in a schema (property names are not keywords)."""
    if isinstance(node, list):
        return set().union(*map(keywords, node))
    if not isinstance(node, dict):
        return set()
    found = set(node)
    for key, value in node.items():
        children = value.values() if key in ("properties", "$defs") else [value]
        found |= set().union(*map(keywords, children))
    return found


def nodes(node: object) -> list[dict]:
    """Every schema in a schema (property names skipped)."""
    if isinstance(node, list):
        return [n for item in node for n in nodes(item)]
    if not isinstance(node, dict):
        return []
    children = [v for key, value in node.items()
                for v in (value.values() if key in ("properties", "$defs") else [value])]
    return [node] + nodes(children)


def objects(node: object) -> list[dict]:
    if isinstance(node, list):
        return [o for n in node for o in objects(n)]
    if not isinstance(node, dict):
        return []
    own = [node] if "properties" in node else []
    return own + [o for v in node.values() for o in objects(v)]


def step_schema(operation: str) -> dict:
    return next(d for d in REPLY_SCHEMA["$defs"].values()
                if d["properties"].get("operation", {}).get("enum") == [operation])


def test_the_schema_uses_only_keywords_every_constrained_decoder_compiles():
    assert keywords(REPLY_SCHEMA) <= COMPILED_EVERYWHERE | LENGTHS
    assert "pattern" in Plan.model_json_schema()["$defs"]["GetStep"]["properties"]["id"]


def test_every_string_and_array_is_bounded_so_a_looping_model_must_close_it():
    strings = [n for n in nodes(REPLY_SCHEMA) if n.get("type") == "string" and "enum" not in n]
    arrays = [n for n in nodes(REPLY_SCHEMA) if n.get("type") == "array"]
    assert len(strings) > 30 and len(arrays) == 5  # steps, two sources, prefer, source_type
    assert all(n["maxLength"] == REPLY_STRING_CHARS for n in strings)
    assert all(n["maxItems"] == Settings().max_steps == 20 for n in arrays)
    assert REPLY_SCHEMA["$defs"]["Plan"]["properties"]["steps"]["minItems"] == 1


def test_the_steps_follow_the_max_steps_in_force():
    steps = reply_schema(7)["$defs"]["Plan"]["properties"]["steps"]
    assert (steps["minItems"], steps["maxItems"]) == (1, 7)


def test_the_strict_form_bounds_arrays_only_as_openais_strict_mode_takes_them():
    strict = request_fields("json_schema", reply_schema(7))["response_format"]["json_schema"]
    assert keywords(strict["schema"]) <= COMPILED_EVERYWHERE | {"minItems", "maxItems"}
    assert strict["schema"]["$defs"]["Plan"]["properties"]["steps"]["maxItems"] == 7
    grammar = request_fields("json_object_schema", reply_schema(7))["response_format"]
    assert grammar["schema"] == reply_schema(7)


def test_every_object_is_strict_every_property_required_and_the_optional_ones_nullable():
    for node in objects(REPLY_SCHEMA):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    get = step_schema("GET")["properties"]
    assert get["source"] == {"type": "string", "maxLength": REPLY_STRING_CHARS}
    assert get["temporal_scope"] == get["output_var"] == {"anyOf": [
        {"type": "string", "maxLength": REPLY_STRING_CHARS}, {"type": "null"}]}
    assert get["top_k"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_the_reply_is_reasoning_then_a_plan_with_steps_as_a_union_on_operation():
    assert REPLY_SCHEMA["required"] == ["reasoning", "plan"]
    plan = REPLY_SCHEMA["$defs"]["Plan"]
    assert plan["required"] == ["domain", "steps", "answer"]  # planner, drop_unused left out
    assert plan["properties"]["domain"]["anyOf"][0]["enum"] == list(DOMAINS)
    alternatives = plan["properties"]["steps"]["items"]["anyOf"]
    operations = [REPLY_SCHEMA["$defs"][a["$ref"].split("/")[-1]]["properties"]["operation"]
                  for a in alternatives]
    assert operations == [{"type": "string", "enum": [op]} for op in OPERATIONS]


def test_every_field_of_every_step_model_is_in_its_schema_under_its_json_name():
    for model in STEP_MODELS:
        operation = typing.get_args(model.model_fields["operation"].annotation)[0]
        names = {f.alias or name for name, f in model.model_fields.items()}
        assert set(step_schema(operation)["properties"]) == names
    assert "else" in step_schema("IF")["properties"]


def test_a_field_added_to_a_step_model_appears_in_the_strict_schema():
    class TaggedGet(GetStep):
        tag: Text | None = None

    class Reply(BaseModel):
        steps: list[TaggedGet]

    tagged = strict_schema(Reply, last=("output_var",))["$defs"]["TaggedGet"]
    assert tagged["required"][-2:] == ["tag", "output_var"]
    assert tagged["properties"]["tag"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_the_worked_example_is_a_reply_the_reply_model_reads():
    reply = PlannerReply.model_validate(WORKED_EXAMPLE)
    assert [s.operation for s in reply.plan.steps] == ["GET", "EXTRACT", "EXTRACT", "COMPUTE"]
    assert (reply.plan.steps[2].row, reply.plan.steps[2].period) == ("capital expenditure",
                                                                      "2023-Q3")


def test_every_example_step_writes_schema_fields_in_the_order_decoders_impose():
    for step in [*EXAMPLE_STEPS, *WORKED_EXAMPLE["plan"]["steps"]]:
        order = step_schema(step["operation"])["required"]
        assert list(step) == [name for name in order if name in step], step["id"]


def test_a_reply_written_to_the_schema_with_nulls_reads_as_the_plan_with_its_defaults():
    step = {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
            "temporal_scope": None, "top_k": None, "output_var": None}
    assert list(step) == step_schema("GET")["required"]
    written = {"reasoning": "r", "plan": {"domain": None, "steps": [step], "answer": None}}
    plan, _ = read_reply(json.dumps(written))
    assert (plan.domain, plan.answer, plan.steps[0].top_k, plan.steps[0].var) == (
        "generic", None, 1, "E1")


def test_a_reply_reading_a_table_cell_with_nulls_for_the_pattern_reads_as_a_row_step():
    step = {"id": "E2", "operation": "EXTRACT", "source": "$R1", "pattern": None,
            "row": "purchases of property, plant and equipment", "period": "FY2018",
            "fallback": None, "quantity": "money", "output_var": "$CAPEX"}
    assert list(step) == step_schema("EXTRACT")["required"]
    get = {"id": "E1", "operation": "GET", "source": "Patriot Transportation 2018 Form 10-K",
           "temporal_scope": None, "top_k": None, "output_var": "$R1"}
    written = {"reasoning": "r", "plan": {"domain": "finance", "steps": [get, step],
                                          "answer": None}}
    plan, _ = read_reply(json.dumps(written))
    assert (plan.steps[1].pattern, plan.steps[1].row, plan.steps[1].period) == (
        None, "purchases of property, plant and equipment", "FY2018")

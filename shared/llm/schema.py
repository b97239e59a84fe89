"""Strict JSON schemas of pydantic models: a model in, the schema that constrained decoders
compile out (OpenAI's strict mode, llama.cpp's and llama-cpp-python's grammar converters,
vLLM, Ollama); and `without_nulls`, which reads a reply written to one back as the model
expects it.

- Every object lists all its properties in `required` (in the model's field order, but
  for the fields asked to come `last`), with `additionalProperties: false` (OpenAI
  strict). A field the model may leave out becomes nullable: `null` stands for "left
  out".
- A discriminated union (`oneOf`, which strict mode refuses) becomes `anyOf`; a `const`
  becomes a one-value `enum`.
- Only `KEYWORDS` are kept. Regex `pattern` and `format` crash or break grammar
  converters (llama.cpp's turns a pattern it cannot read into a grammar its parser
  rejects, and llama-cpp-python's server then dies); string and array lengths become
  repetitions that llama.cpp refuses past a few hundred; `default`, `title` and
  `discriminator` are refused by strict mode or ignored. The models still check all of
  these when the reply is read.
"""

from __future__ import annotations

from pydantic import BaseModel

KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items",
                      "enum", "anyOf", "$ref", "$defs"})
"""The JSON schema keywords every common constrained decoder compiles."""
NULL = {"type": "null"}


def strict_schema(model: type[BaseModel], omit: dict[str, tuple[str, ...]] | None = None,
                  last: tuple[str, ...] = ()) -> dict:
    """The strict schema of `model`; `omit` maps a model's name to fields to leave out of
    it (fields the reply must not set); `last` names fields moved to the end of every
    object that has them (decoders make the model write them in schema order)."""
    schema = model.model_json_schema()
    for name, fields in (omit or {}).items():
        node = schema if name == model.__name__ else schema["$defs"][name]
        node["properties"] = {k: v for k, v in node["properties"].items() if k not in fields}
        node["required"] = [k for k in node.get("required", ()) if k not in fields]
    return _strict(schema, last)


def _strict(node: dict, last: tuple[str, ...]) -> dict:
    node = dict(node)
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    out = {k: v for k, v in node.items() if k in KEYWORDS}
    if "$defs" in out:
        out["$defs"] = {name: _strict(d, last) for name, d in out["$defs"].items()}
    if "items" in out:
        out["items"] = _strict(out["items"], last)
    if "anyOf" in out:
        out["anyOf"] = [_strict(alt, last) for alt in out["anyOf"]]
    if "properties" in out:
        out.update(_strict_object(out["properties"], set(node.get("required", ())), last))
    return out


def _strict_object(properties: dict, required: set[str], last: tuple[str, ...]) -> dict:
    order = sorted(properties, key=lambda name: name in last)  # stable: the rest keep theirs
    strict = {name: _strict(properties[name], last) for name in order}
    return {"properties": {name: p if name in required else _nullable(p)
                           for name, p in strict.items()},
            "required": order, "additionalProperties": False}


def _nullable(schema: dict) -> dict:
    if schema == NULL or NULL in schema.get("anyOf", ()):
        return schema
    return {"anyOf": [schema, NULL]}


def without_nulls(value: object) -> object:
    """`value` with every object member that is null left out, at any depth: what a
    reply written to a strict schema means (the models' defaults fill them)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value

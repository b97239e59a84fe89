"""Strict JSON schemas of pydantic models: a model in, the schema that constrained decoders
compile out (OpenAI's strict mode, llama.cpp's and llama-cpp-python's grammar converters,
vLLM, Ollama); `bounded`, the same schema with a length bound on every string and array,
so that a model that loops under it must close what it writes; and `without_nulls`,
which reads a reply written to one back as the model expects it.

- Every object lists all its properties in `required` (in the model's field order, but
  for the fields asked to come `last`), with `additionalProperties: false` (OpenAI
  strict). A field the model may leave out becomes nullable: `null` stands for "left
  out".
- A discriminated union (`oneOf`, which strict mode refuses) becomes `anyOf`; a `const`
  becomes a one-value `enum`.
- Only `KEYWORDS` are kept. Regex `pattern` and `format` crash or break grammar
  converters (llama.cpp's turns a pattern it cannot read into a grammar its parser
  rejects, and llama-cpp-python's server then dies); `default`, `title` and
  `discriminator` are refused by strict mode or ignored. The models still check all of
  these (and their own lengths) when the reply is read.
- Lengths are the caller's choice (`bounded`): llama-cpp-python's converter writes a
  bound of n as n nested optional groups, and llama.cpp's grammar parser (0.3.36)
  refuses a rule nested deeper than 1,000 (`maxLength` 1,001 or `maxItems` 1,002 fail
  with "number of rules that are going to be repeated … exceeds sane defaults", and
  the server then dies), so the models' own lengths (a 4,000-character question) are
  not copied. OpenAI's strict mode takes `minItems`/`maxItems` but not `maxLength`
  (openai-python's own strict tool schemas bound arrays and write string limits in
  descriptions): `STRICT_MODE_REFUSES` is left out of the strict form (forms.py).
"""

from __future__ import annotations

from pydantic import BaseModel

KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items",
                      "enum", "anyOf", "$ref", "$defs"})
"""The JSON schema keywords every common constrained decoder compiles."""
LENGTHS = frozenset({"maxLength", "minItems", "maxItems"})
"""The length keywords `bounded` adds (grammar converters compile them to repetitions)."""
STRICT_MODE_REFUSES = frozenset({"maxLength"})
"""What OpenAI's strict mode does not take of `LENGTHS`."""
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


def bounded(schema: dict, max_chars: int, max_items: int) -> dict:
    """`schema` with every string that is not an enum at most `max_chars` characters
    and every array at most `max_items` items (bounds it already has are kept)."""
    node = dict(schema)
    for key in ("properties", "$defs"):
        if key in node:
            node[key] = {name: bounded(d, max_chars, max_items) for name, d in node[key].items()}
    if "items" in node:
        node["items"] = bounded(node["items"], max_chars, max_items)
    if "anyOf" in node:
        node["anyOf"] = [bounded(alt, max_chars, max_items) for alt in node["anyOf"]]
    if node.get("type") == "string" and "enum" not in node:
        node.setdefault("maxLength", max_chars)
    if node.get("type") == "array":
        node.setdefault("maxItems", max_items)
    return node


def without(schema: object, keywords: frozenset[str]) -> object:
    """`schema` without `keywords` anywhere (property names are not keywords)."""
    if isinstance(schema, list):
        return [without(s, keywords) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: ({name: without(d, keywords) for name, d in v.items()}
                if k in ("properties", "$defs") else without(v, keywords))
            for k, v in schema.items() if k not in keywords}


def without_nulls(value: object) -> object:
    """`value` with every object member that is null left out, at any depth: what a
    reply written to a strict schema means (the models' defaults fill them)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value

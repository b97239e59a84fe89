"""Structured-output forms: the ways OpenAI-compatible servers are asked for JSON that fits
a schema. Consumes a form's name and a schema; produces the request fields that ask for
it (`request_fields`), the form a request body asks for (`form_of`, the replay server's
view), and whether an error reply is the server refusing the form (`refuses`).

| form | request | spoken by |
|---|---|---|
| `json_schema` | `response_format: {"type": "json_schema", "json_schema": {…, "strict": true}}` | OpenAI; llama.cpp server, vLLM, Ollama, LM Studio |
| `json_object_schema` | `response_format: {"type": "json_object", "schema": …}` | llama-cpp-python |
| `json_schema_body` | `"json_schema": …` in the body | llama.cpp server |
| `guided_json` | `"guided_json": …` in the body | vLLM |
| `ollama_format` | `"format": …` in the body | Ollama |
| `json_object` | `response_format: {"type": "json_object"}` (JSON, no schema) | most |
| `none` | nothing: the prompt alone asks for JSON | all |

The strict form leaves out the length keywords OpenAI's strict mode does not take
(schema.STRICT_MODE_REFUSES); the other forms pass the schema whole to a grammar.

The forms' names and the order they are tried in are `FORMS` of shared/config.py. A
refusal is an HTTP 4xx (but 401, 403, 408, 409, 429) or 5xx whose message names the
form's field (`response_format`, `json_schema`, …), its schema or grammar: llama-cpp-python answers `json_schema` with
HTTP 500 naming `response_format`, OpenAI an unknown field with 400. Most servers
ignore a body field they do not know instead of refusing it, so a body form is only
reached when both `response_format` forms were refused.
"""

from __future__ import annotations

import re

from shared.llm.schema import STRICT_MODE_REFUSES, without

_BODY_FIELDS = {"json_schema_body": "json_schema", "guided_json": "guided_json",
                "ollama_format": "format"}
_NAMED_IN_REFUSALS = {"json_schema": ("response_format", "json_schema", "schema", "grammar"),
                      "json_object_schema": ("response_format", "json_object", "schema",
                                             "grammar"),
                      "json_object": ("response_format", "json_object")}
_NOT_REFUSALS = (401, 403, 408, 409, 429)


def field(form: str) -> str | None:
    """The top-level request field that carries `form` (None for `none`)."""
    if form == "none":
        return None
    return _BODY_FIELDS.get(form, "response_format")


def request_fields(form: str, schema: dict) -> dict:
    """Keyword arguments of `chat.completions.create` that ask for `form` with `schema`."""
    if form in _BODY_FIELDS:
        return {"extra_body": {_BODY_FIELDS[form]: schema}}
    if form == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": "reply", "strict": True, "schema": without(schema, STRICT_MODE_REFUSES)}}}
    if form == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    return {"response_format": {"type": "json_object"}} if form == "json_object" else {}


def form_of(body: dict) -> str:
    """The form a chat completion request body asks for."""
    response_format = body.get("response_format") or {}
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "json_schema":
        return "json_schema"
    if kind == "json_object":
        return "json_object_schema" if "schema" in response_format else "json_object"
    return next((form for form, name in _BODY_FIELDS.items() if name in body), "none")


def refuses(form: str, status: int, message: str) -> bool:
    """Whether an HTTP `status` reply saying `message` refuses `form` (rather than failing
    for a reason a retry may cure)."""
    if form == "none":
        return False
    names = _NAMED_IN_REFUSALS.get(form) or (_BODY_FIELDS[form], "schema", "grammar")
    return names_in_refusal(status, message, *names)


def names_in_refusal(status: int, message: str, *names: str) -> bool:
    """Whether an HTTP `status` reply saying `message` is a refusal (a 4xx but 401, 403,
    408, 409, 429, or a 5xx) that names one of `names` as a whole word, in any case."""
    if status < 400 or status in _NOT_REFUSALS:
        return False
    return any(re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", message,
                         re.IGNORECASE) for name in names)

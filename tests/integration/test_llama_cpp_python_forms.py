"""Structured output against the real llama-cpp-python server on SmolLM2-135M (the
`local_llm` fixture): it answers `json_schema` with HTTP 500, which is asked once, not
retried, and takes `json_object_schema`, decoding under the grammar it compiles from the
schema. (That the plan schema compiles is tests/shared/llm/test_grammar.py, with the
same converter and parser in-process: a whole plan takes SmolLM2 most of a minute.)
Skipped, saying why, without `chordal[local-llm]`. Mechanics, not quality."""

from __future__ import annotations

import json
import re

import pytest

from shared.config import Settings
from shared.llm.client import LLMClient

pytestmark = pytest.mark.integration
PROBE = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["chordal-7"]}},
         "required": ["answer"], "additionalProperties": False}
"""A schema only constrained decoding satisfies: nothing asks the model for `chordal-7`."""


def chat_statuses(log: str) -> list[str]:
    return re.findall(r'"POST /v1/chat/completions HTTP/1.1" (\d+)', log)


def test_json_schema_is_refused_once_and_json_object_schema_constrains_the_reply(local_llm):
    settings = local_llm.client_settings(Settings(llm_timeout_s=120, llm_max_retries=2))
    before = local_llm.log_path.stat().st_size  # the server is shared: read what is new
    reply = LLMClient(settings).chat([{"role": "user", "content": "Say hello."}],
                                     purpose="probe", json_schema=PROBE)
    assert json.loads(reply.content) == {"answer": "chordal-7"}
    assert (reply.call.json_form, reply.call.retries) == ("json_object_schema", 0)
    with local_llm.log_path.open() as log:
        log.seek(before)
        assert chat_statuses(log.read()) == ["500", "200"]

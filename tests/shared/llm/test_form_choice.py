"""Structured output negotiated over real HTTP with the replay server emulating each kind
of server: which form a call ends on, that a refusal is not retried, the choice cached
in Redis for every client, and CHORDAL_LLM_JSON_FORM forcing a form."""

from __future__ import annotations

import json
import logging

import pytest
import redis
from pydantic import ValidationError

from shared.config import FORMS, Settings
from shared.errors import LLMError
from shared.llm.client import LLMClient

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}},
          "required": ["answer"], "additionalProperties": False}
ASK = [{"role": "user", "content": "What is the answer?"}]
REPLY = {"content": {"answer": "42"}}
LLAMA_CPP_PYTHON = {"server": {"accepts": ["json_object_schema", "json_schema_body",
                                           "guided_json", "ollama_format", "json_object"],
                               "refuses_with": "llama_cpp_python"}}


def server(accepts: list[str], refuses_with: str = "openai") -> dict:
    return {"server": {"accepts": accepts, "refuses_with": refuses_with}}


def ask(settings: Settings, r: redis.Redis | None = None):
    return LLMClient(settings, r).chat(ASK, purpose="test", json_schema=SCHEMA)


@pytest.fixture
def r(redis_server) -> redis.Redis:
    return redis.Redis.from_url(redis_server.url)


@pytest.mark.parametrize("script_server, form", [
    (server(["json_schema"]), "json_schema"),
    (LLAMA_CPP_PYTHON, "json_object_schema"),
    (server(["json_schema_body"]), "json_schema_body"),
    (server(["guided_json"], "vllm"), "guided_json"),
    (server(["ollama_format"]), "ollama_format"),
    (server(["json_object"]), "json_object"),
    (server([], "llama_cpp_python"), "none"),
], ids=["openai", "llama-cpp-python", "llama.cpp", "vllm", "ollama", "json-mode", "nothing"])
def test_each_server_gets_the_first_form_it_accepts_after_one_request_per_refused_form(
        fake_llm, llm_settings, script_server, form):
    fake_llm.load([script_server, REPLY])
    reply = ask(llm_settings)
    assert reply.content == '{"answer": "42"}'
    assert (reply.call.json_form, reply.call.retries) == (form, 0)
    log = fake_llm.log()
    tried = list(FORMS[:FORMS.index(form) + 1])
    assert [(q["form"], q["status"] == 200) for q in log] == [
        (f, f == form) for f in tried]  # a refusal, even an HTTP 500, is asked once


def test_the_accepted_form_carries_the_schema_where_that_server_reads_it(fake_llm, llm_settings):
    fake_llm.load([LLAMA_CPP_PYTHON, REPLY])
    ask(llm_settings)
    assert fake_llm.log()[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_the_form_found_is_stored_in_redis_so_every_client_goes_straight_to_it(
        fake_llm, llm_settings, r, caplog):
    settings = llm_settings.model_copy(update={"llm_json_form_ttl_s": 600})
    fake_llm.load([LLAMA_CPP_PYTHON, REPLY, REPLY, REPLY])
    first = LLMClient(settings, r)
    with caplog.at_level(logging.INFO, logger="chordal.llm"):
        first.chat(ASK, purpose="a", json_schema=SCHEMA)
        first.chat(ASK, purpose="b", json_schema=SCHEMA)
    ask(settings, r)  # another worker's client
    assert [q["form"] for q in fake_llm.log()] == ["json_schema", "json_object_schema",
                                                    "json_object_schema", "json_object_schema"]
    stored = json.loads(r.get(first.forms.key))
    assert stored["form"] == "json_object_schema"
    assert "json_schema refused (HTTP 500: 1 validation error:" in stored["reason"]
    assert 590 <= r.ttl(first.forms.key) <= 600
    (line,) = [m for m in caplog.messages if "takes structured output" in m]  # logged once
    assert line.startswith(f"{fake_llm.base_url}/v1 (model replay) takes structured output "
                           "as json_object_schema: json_schema refused (HTTP 500")


def test_a_stored_form_the_server_now_refuses_is_replaced_by_one_it_accepts(
        fake_llm, llm_settings, r):
    fake_llm.load([server(["json_object"]), REPLY])
    ask(llm_settings, r)
    fake_llm.load([server(["json_schema"]), REPLY, REPLY])  # the server was upgraded
    assert ask(llm_settings, r).call.json_form == "json_schema"
    ask(llm_settings, r)
    assert [q["form"] for q in fake_llm.log()] == ["json_object", "json_schema", "json_schema"]


def test_a_transient_500_while_the_form_is_unknown_is_retried_not_taken_for_a_refusal(
        fake_llm, llm_settings):
    fake_llm.load([{"fault": "500", "retry_after": 0.05}, REPLY])
    reply = ask(llm_settings)
    assert (reply.call.json_form, reply.call.retries) == ("json_schema", 1)
    assert [q["form"] for q in fake_llm.log()] == ["json_schema", "json_schema"]


def test_a_forced_form_is_sent_without_trying_the_others(fake_llm, llm_settings):
    fake_llm.load([REPLY])
    reply = ask(llm_settings.model_copy(update={"llm_json_form": "guided_json"}))
    (request,) = fake_llm.log()
    assert request["form"] == "guided_json" and reply.call.json_form == "guided_json"


def test_a_forced_form_the_server_refuses_fails_at_once_naming_the_setting_and_the_fix(
        fake_llm, llm_settings):
    fake_llm.load([LLAMA_CPP_PYTHON, REPLY])
    with pytest.raises(LLMError) as caught:
        ask(llm_settings.model_copy(update={"llm_json_form": "json_schema"}))
    assert "failed after 1 HTTP attempt: HTTP 500" in caught.value.message
    assert ("the server refuses the form CHORDAL_LLM_JSON_FORM=json_schema forces: set it to "
            "auto") in caught.value.message
    assert caught.value.call.json_form == "json_schema" and len(fake_llm.log()) == 1


def test_a_json_form_setting_that_is_no_form_names_the_variable_and_the_choices():
    with pytest.raises(ValidationError, match=r"CHORDAL_LLM_JSON_FORM is 'xml'; set it to auto "
                                              r"\(.*\) or to one of json_schema, "):
        Settings(llm_json_form="xml")


def test_the_log_line_masks_a_password_in_the_endpoint_url(fake_llm, llm_settings, caplog):
    url = fake_llm.base_url.replace("://", "://user:s3cret@") + "/v1"
    fake_llm.load([LLAMA_CPP_PYTHON, REPLY])
    with caplog.at_level(logging.INFO, logger="chordal.llm"):
        ask(llm_settings.model_copy(update={"llm_base_url": url}))
    assert "user:***@" in caplog.text and "s3cret" not in caplog.text

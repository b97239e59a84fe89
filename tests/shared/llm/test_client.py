"""LLMClient against the real replay server: replies, JSON formats, retries, failures."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from shared import naming
from shared.config import Settings
from shared.errors import ConfigError, LLMError
from shared.llm.client import LLMClient

from ...conftest import free_port
from .conftest import in_flight

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
ASK = [{"role": "user", "content": "What is the answer?"}]


def test_chat_returns_the_scripted_reply_with_its_tokens_and_no_retries(fake_llm, llm_settings):
    fake_llm.load([{"content": "forty-two, said the replay server"}])
    reply = LLMClient(llm_settings).chat(ASK, purpose="test")
    assert reply.content == "forty-two, said the replay server"
    call = reply.call
    assert (call.purpose, call.model, call.status, call.retries) == ("test", "replay", "ok", 0)
    assert call.prompt_tokens == 5 and call.completion_tokens == 9  # ~4 characters a token
    assert call.latency_ms > 0 and call.started_at > 0


def test_a_schema_is_sent_as_strict_json_schema_at_low_temperature_and_the_call_says_so(
        fake_llm, llm_settings):
    fake_llm.load([{"content": {"answer": "42"}}])
    reply = LLMClient(llm_settings).chat(ASK, purpose="test", json_schema=SCHEMA)
    (request,) = fake_llm.log()
    assert request["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "reply", "strict": True, "schema": SCHEMA}}
    assert request["temperature"] == llm_settings.llm_temperature == 0.0
    assert reply.call.json_form == "json_schema"


def test_a_call_without_a_schema_asks_for_no_form(fake_llm, llm_settings):
    fake_llm.load([{"content": "text"}])
    reply = LLMClient(llm_settings).chat(ASK, purpose="test")
    assert fake_llm.log()[0]["form"] == "none" and reply.call.json_form is None


def test_a_429_and_a_500_are_retried_honouring_retry_after_and_counted(fake_llm, llm_settings):
    fake_llm.load([{"fault": "429", "retry_after": 1}, {"fault": "500", "retry_after": 0.1},
                   {"content": "finally"}])
    reply = LLMClient(llm_settings).chat(ASK, purpose="test")
    assert reply.content == "finally" and reply.call.retries == 2
    first, second, _ = fake_llm.log()
    assert second["at"] - first["at"] >= 0.9  # waited the Retry-After of the 429


def test_a_request_slower_than_the_timeout_is_retried(fake_llm, llm_settings):
    fake_llm.load([{"fault": "slow", "delay": 2, "content": "too late"}, {"content": "in time"}])
    settings = llm_settings.model_copy(update={"llm_timeout_s": 0.5})
    reply = LLMClient(settings).chat(ASK, purpose="test")
    assert reply.content == "in time" and reply.call.retries == 1


def test_failure_after_the_retries_raises_an_llm_error_carrying_the_failed_call(fake_llm, llm_settings):
    fake_llm.load([{"fault": "500", "retry_after": 0.05}] * 4)
    with pytest.raises(LLMError) as caught:
        LLMClient(llm_settings).chat(ASK, purpose="plan 1")
    error = caught.value
    assert "LLM call (plan 1) failed after 4 HTTP attempts: HTTP 500" in error.message
    assert error.call.status == "error" and error.call.retries == 3
    assert "internal error (replay fault, line 4)" in error.call.error


def test_an_exhausted_script_fails_at_once_without_retries(fake_llm, llm_settings):
    fake_llm.load([])
    with pytest.raises(LLMError, match="no entry left") as caught:
        LLMClient(llm_settings).chat(ASK, purpose="test")
    assert caught.value.call.retries == 0 and len(fake_llm.log()) == 1


def test_an_unreachable_endpoint_fails_with_a_message_naming_the_url(llm_settings):
    url = f"http://127.0.0.1:{free_port()}/v1"
    settings = llm_settings.model_copy(update={"llm_base_url": url, "llm_max_retries": 1})
    with pytest.raises(LLMError, match=f"cannot connect to {url}; is the server running"):
        LLMClient(settings).chat(ASK, purpose="test")


def test_a_client_without_an_endpoint_and_model_is_a_config_error_naming_both():
    with pytest.raises(ConfigError, match="CHORDAL_LLM_BASE_URL .* and CHORDAL_LLM_MODEL"):
        LLMClient(Settings(llm_base_url=None, llm_model=None))


def test_a_call_holds_a_slot_of_the_shared_limit_so_others_wait(fake_llm, llm_settings, redis_server):
    fake_llm.load([{"fault": "slow", "delay": 1.5, "content": "slow one"}])
    settings = llm_settings.model_copy(update={"llm_max_concurrency": 1})
    r = redis.Redis.from_url(redis_server.url)
    r.delete(naming.llm_slots_key())
    first = LLMClient(settings, r)
    done = threading.Thread(target=first.chat, args=(ASK,), kwargs={"purpose": "first"})
    done.start()
    try:
        while not fake_llm.log():  # the first call is in flight
            time.sleep(0.02)
        assert in_flight(first.limit) == 1
        second = LLMClient(settings, r, slot_timeout_s=0.2)
        with pytest.raises(LLMError, match="CHORDAL_LLM_MAX_CONCURRENCY=1") as caught:
            second.chat(ASK, purpose="second")
        assert caught.value.call.status == "error"
        assert len(fake_llm.log()) == 1  # the second call never reached the server
    finally:
        done.join()
    assert in_flight(first.limit) == 0


def test_every_request_is_bounded_by_max_tokens_and_a_cut_reply_says_length(
        fake_llm, llm_settings):
    fake_llm.load([{"content": "x" * 400}])
    settings = llm_settings.model_copy(update={"llm_max_tokens": 16})
    reply = LLMClient(settings).chat(ASK, purpose="test")
    assert fake_llm.log()[0]["max_tokens"] == 16
    assert len(reply.content) == 64 and reply.call.finish_reason == "length"


def test_stop_sequences_are_sent_and_the_reply_ends_before_them(fake_llm, llm_settings):
    fake_llm.load([{"content": '{"a": 1}\nObservation: made up by the model'}])
    reply = LLMClient(llm_settings).chat(ASK, purpose="test", stop=["\nObservation"])
    assert fake_llm.log()[0]["stop"] == ["\nObservation"]
    assert reply.content == '{"a": 1}' and reply.call.finish_reason == "stop"

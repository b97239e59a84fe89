"""LLMClient.chat_stream against the real replay server: the text piece by piece, token
counts and timings, whole replies from servers that refuse or ignore streams (and the
choice remembered), structured-output forms, a stream that breaks off, and
CHORDAL_LLM_STREAM=false."""

from __future__ import annotations

import json

import pytest

from shared.errors import LLMError, LLMStreamBroken
from shared.llm.client import LLMClient
from shared.llm.stream_choice import refused

from .conftest import in_flight

ASK = [{"role": "user", "content": "What is the answer?"}]
TEXT = '{"answer": "forty-two, said the replay server"}'  # 47 characters: 12 tokens
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class Pieces(list):
    """An `on_text` that keeps what it was given."""

    def __call__(self, text: str) -> None:
        self.append(text)


def test_the_text_arrives_in_order_a_token_at_a_time_with_the_servers_token_counts(
        fake_llm, llm_settings):
    fake_llm.load([{"content": TEXT}])
    pieces = Pieces()
    reply = LLMClient(llm_settings).chat_stream(ASK, purpose="plan 1", on_text=pieces)
    assert "".join(pieces) == reply.content == TEXT and len(pieces) == 12
    call = reply.call
    assert (call.streamed, call.status, call.finish_reason, call.retries) == (
        True, "ok", "stop", 0)
    assert (call.prompt_tokens, call.completion_tokens, call.tokens_estimated) == (5, 12, False)
    assert 0 < call.first_token_ms <= call.latency_ms
    assert call.started_at < call.ended_at
    (request,) = fake_llm.log()
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}


def test_a_server_that_sends_no_usage_has_the_prompt_counted_by_a_one_token_request(
        fake_llm, llm_settings, r):
    client = LLMClient(llm_settings, r)
    r.set(client.stream_choice.key, json.dumps({"mode": "plain", "reason": "test"}))
    fake_llm.load([{"content": TEXT}, {"content": "x"}])
    call = client.chat_stream(ASK, purpose="test", on_text=Pieces()).call
    streamed, counted = fake_llm.log()
    assert streamed["stream_options"] is None
    assert (counted["stream"], counted["max_tokens"]) == (False, 1)
    assert (call.prompt_tokens, call.completion_tokens, call.tokens_estimated) == (5, 12, False)


def test_when_the_count_fails_too_the_tokens_are_estimated_and_flagged(
        fake_llm, llm_settings, r):
    client = LLMClient(llm_settings, r)
    r.set(client.stream_choice.key, json.dumps({"mode": "plain", "reason": "test"}))
    fake_llm.load([{"content": TEXT}])  # nothing left for the count: HTTP 500
    call = client.chat_stream(ASK, purpose="test", on_text=Pieces()).call
    assert (call.prompt_tokens, call.completion_tokens, call.tokens_estimated) == (5, 12, True)


def test_a_server_that_refuses_streams_gets_a_whole_request_and_is_remembered(
        fake_llm, llm_settings):
    fake_llm.load([{"server": {"streams": "refuse"}}, {"content": TEXT}, {"content": "again"}])
    client = LLMClient(llm_settings)
    assert client.streams is None  # not known yet
    pieces = Pieces()
    reply = client.chat_stream(ASK, purpose="test", on_text=pieces)
    assert pieces == [] and reply.content == TEXT
    assert (reply.call.streamed, reply.call.first_token_ms, reply.call.retries) == (
        False, None, 0)
    assert reply.call.completion_tokens == 12 and reply.call.ended_at is not None
    assert client.streams is False
    client.chat_stream(ASK, purpose="test", on_text=Pieces())
    assert [(q["stream"], q["status"]) for q in fake_llm.log()] == [
        (True, 400), (False, 200), (False, 200)]  # the refusal is asked once, not retried


def test_a_server_that_ignores_streams_is_read_as_a_whole_reply_and_remembered(
        fake_llm, llm_settings):
    fake_llm.load([{"server": {"streams": "ignore"}}, {"content": TEXT}, {"content": "again"}])
    client = LLMClient(llm_settings)
    pieces = Pieces()
    reply = client.chat_stream(ASK, purpose="test", on_text=pieces)
    assert pieces == [] and reply.content == TEXT and reply.call.streamed is False
    assert client.chat_stream(ASK, purpose="test", on_text=Pieces()).content == "again"
    assert [q["stream"] for q in fake_llm.log()] == [True, False]


def test_the_stream_choice_is_kept_in_redis_so_another_clients_calls_go_whole_at_once(
        fake_llm, llm_settings, r):
    fake_llm.load([{"server": {"streams": "refuse"}}, {"content": TEXT}, {"content": TEXT}])
    first = LLMClient(llm_settings, r)
    first.chat_stream(ASK, purpose="test", on_text=Pieces())
    stored = json.loads(r.get(first.stream_choice.key))
    assert stored["mode"] == "whole"
    assert stored["reason"].startswith("usage refused (HTTP 400: Unrecognized request "
                                       "argument supplied: stream")
    other = LLMClient(llm_settings, r)  # another worker's client
    assert other.streams is False
    other.chat_stream(ASK, purpose="test", on_text=Pieces())
    assert [q["stream"] for q in fake_llm.log()] == [True, False, False]


def test_a_streaming_server_is_remembered_as_one(fake_llm, llm_settings, r):
    fake_llm.load([{"content": TEXT}])
    client = LLMClient(llm_settings, r)
    assert client.streams is None
    client.chat_stream(ASK, purpose="test", on_text=Pieces())
    assert client.streams is True and LLMClient(llm_settings, r).streams is True


def test_forms_are_negotiated_within_a_stream_and_a_stream_refusal_keeps_the_form(
        fake_llm, llm_settings):
    fake_llm.load([{"server": {"accepts": ["json_object_schema"],
                               "refuses_with": "llama_cpp_python", "streams": "refuse"}},
                   {"content": TEXT}])
    pieces = Pieces()
    reply = LLMClient(llm_settings).chat_stream(ASK, purpose="test", json_schema=SCHEMA,
                                                on_text=pieces)
    assert reply.content == TEXT and pieces == []
    assert (reply.call.json_form, reply.call.retries) == ("json_object_schema", 0)
    assert [(q["form"], q["stream"], q["status"]) for q in fake_llm.log()] == [
        ("json_schema", True, 500),         # the form refused, as llama-cpp-python does
        ("json_object_schema", True, 400),  # the form taken, the stream refused
        ("json_object_schema", False, 200)]


def test_a_streamed_reply_in_the_form_the_server_accepts(fake_llm, llm_settings):
    fake_llm.load([{"server": {"accepts": ["json_object_schema"],
                               "refuses_with": "llama_cpp_python"}}, {"content": TEXT}])
    pieces = Pieces()
    reply = LLMClient(llm_settings).chat_stream(ASK, purpose="test", json_schema=SCHEMA,
                                                on_text=pieces)
    assert len(pieces) == 12 and reply.call.streamed
    assert reply.call.json_form == "json_object_schema"
    assert fake_llm.log()[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_a_stream_that_breaks_off_raises_with_the_text_so_far_and_is_not_retried(
        fake_llm, llm_settings):
    fake_llm.load([{"fault": "cut", "after": 10, "content": TEXT}, {"content": TEXT}])
    pieces = Pieces()
    with pytest.raises(LLMStreamBroken) as caught:
        LLMClient(llm_settings).chat_stream(ASK, purpose="plan 1", on_text=pieces)
    error = caught.value
    assert isinstance(error, LLMError) and error.partial == "".join(pieces) == TEXT[:10]
    assert error.message.startswith(
        f"LLM call (plan 1) failed: the stream from {fake_llm.base_url}/v1 broke off after "
        "10 characters: the connection closed mid-reply (peer closed connection")
    assert (error.call.status, error.call.streamed) == ("error", True)
    assert error.call.first_token_ms is not None and error.call.error in error.message
    assert len(fake_llm.log()) == 1


def test_a_stream_that_stalls_past_the_timeout_breaks_off_naming_the_setting(
        fake_llm, llm_settings):
    fake_llm.load([{"content": TEXT, "token_delay": 3}])
    settings = llm_settings.model_copy(update={"llm_timeout_s": 0.5})
    with pytest.raises(LLMStreamBroken, match=r"broke off after 0 characters: no chunk came "
                                              r"within 0.5s \(CHORDAL_LLM_TIMEOUT_S\)"):
        LLMClient(settings).chat_stream(ASK, purpose="test", on_text=Pieces())


class Enough(Exception):
    """What the caller's `on_text` raises to stop reading."""


def test_an_error_raised_by_on_text_propagates_and_frees_the_slot(fake_llm, llm_settings, r):
    fake_llm.load([{"content": TEXT}])
    client = LLMClient(llm_settings, r)
    pieces = Pieces()

    def stop_at_the_third(text: str) -> None:
        pieces(text)
        if len(pieces) == 3:
            raise Enough

    with pytest.raises(Enough):
        client.chat_stream(ASK, purpose="test", on_text=stop_at_the_third)
    assert len(pieces) == 3 and in_flight(client.limit) == 0


def test_with_streaming_off_every_call_is_a_whole_reply_left_to_the_caller(
        fake_llm, llm_settings):
    fake_llm.load([{"content": TEXT}])
    client = LLMClient(llm_settings.model_copy(update={"llm_stream": False}))
    assert client.streams is False
    pieces = Pieces()
    reply = client.chat_stream(ASK, purpose="test", on_text=pieces)
    assert pieces == [] and reply.content == TEXT and reply.call.streamed is False
    assert fake_llm.log()[0]["stream"] is False


def test_chat_records_when_the_whole_reply_arrived(fake_llm, llm_settings):
    fake_llm.load([{"content": TEXT}])
    call = LLMClient(llm_settings).chat(ASK, purpose="test").call
    assert call.started_at < call.ended_at and not call.streamed
    assert fake_llm.log()[0]["stream"] is False


@pytest.mark.parametrize("mode, status, message, after", [
    ("usage", 400, "Unrecognized request argument supplied: stream_options", "plain"),
    ("usage", 400, "'stream' is not supported", "whole"),
    ("plain", 500, "stream: extra inputs are not permitted", "whole"),
    ("usage", 500, "internal error while streaming", None),  # names no field
    ("usage", 429, "stream rate limited", None),
    ("whole", 400, "stream", None),
])
def test_only_a_refusal_naming_the_stream_fields_moves_on_to_the_next_mode(
        mode, status, message, after):
    assert refused(mode, status, message) == after

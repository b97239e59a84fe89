"""LLMClient against the real replay server when the server misbehaves: replies that
ignore `max_tokens` (the `flood` fault) are cut at the bound `max_tokens` sets, never
read whole, the prompt-count request included; a reply that trickles is stopped at
CHORDAL_LLM_REPLY_S or the caller's deadline, whole or streamed; a Retry-After longer
than the time left is not waited for; a caller's `on_text` can stop a stream."""

from __future__ import annotations

import json
import time

import pytest
import redis

from shared.errors import LLMError, LLMReplyStopped
from shared.llm.bounds import max_body_bytes
from shared.llm.client import LLMClient
from shared.llm.stream_reader import StopReading

from .conftest import in_flight

ASK = [{"role": "user", "content": "What is the answer?"}]
HUGE = 100_000_000
"""Characters of a flood: a reply no bound of 64 tokens comes near."""


def client(llm_settings, r: redis.Redis | None = None, **settings) -> LLMClient:
    return LLMClient(llm_settings.model_copy(update={"llm_max_tokens": 64, **settings}), r)


def sent(fake_llm) -> list[int | None]:
    """The body bytes the server got out for each request (floods only)."""
    return [request.get("sent") for request in fake_llm.log()]


def test_a_stream_past_max_tokens_pieces_is_cut_there_and_the_call_says_the_client_cut_it(
        fake_llm, llm_settings):
    fake_llm.load([{"fault": "flood", "chars": HUGE, "content": '{"answer": 42}'}])
    pieces: list[str] = []
    reply = client(llm_settings).chat_stream(ASK, purpose="plan 1", on_text=pieces.append)
    assert len(pieces) == 64 and reply.content == "".join(pieces)
    assert reply.content.startswith('{"answer": 42}')
    call = reply.call
    assert (call.status, call.finish_reason) == ("ok", "length")
    assert call.cut_by_client == ("the server sent more than 64 pieces of text for "
                                  "max_tokens=64: it ignores max_tokens")
    assert sent(fake_llm)[0] < HUGE / 4  # the server stopped when the client did


def test_a_stream_of_huge_pieces_is_cut_at_the_bytes_max_tokens_allows(fake_llm, llm_settings):
    fake_llm.load([{"fault": "flood", "chars": HUGE, "piece": 65536, "content": "{"}])
    reply = client(llm_settings).chat_stream(ASK, purpose="plan 1", on_text=lambda t: None)
    assert reply.call.finish_reason == "length"
    assert reply.call.cut_by_client.startswith("the server sent more than ")
    assert reply.call.cut_by_client.endswith(" bytes for a reply of at most 64 tokens: it "
                                             "ignores max_tokens")
    assert len(reply.content) < max_body_bytes(64, 1000)
    assert sent(fake_llm)[0] < HUGE / 4


def test_a_whole_reply_larger_than_max_tokens_allows_fails_unread(fake_llm, llm_settings):
    fake_llm.load([{"fault": "flood", "chars": HUGE, "content": '{"answer": 42}'}])
    with pytest.raises(LLMError) as caught:
        client(llm_settings).chat(ASK, purpose="plan 1")
    error = caught.value
    assert "was not read: the server sent more than" in error.message
    assert error.message.endswith("for a reply of at most 64 tokens: it ignores max_tokens")
    assert error.call.status == "error" and "ignores max_tokens" in error.call.error
    assert sent(fake_llm)[0] < HUGE / 4 and len(fake_llm.log()) == 1  # not retried


def test_the_prompt_count_request_reads_no_more_than_a_one_token_reply(fake_llm, llm_settings, r):
    llm = client(llm_settings, r)
    r.set(llm.stream_choice.key, json.dumps({"mode": "plain", "reason": "test"}))
    fake_llm.load([{"content": '{"answer": 42}'},
                   {"fault": "flood", "chars": HUGE, "content": '{"answer": 42}'}])
    call = llm.chat_stream(ASK, purpose="plan 1", on_text=lambda t: None).call
    stream, count = fake_llm.log()
    assert (stream["stream"], count["stream"], count["max_tokens"]) == (True, False, 1)
    assert call.status == "ok" and call.tokens_estimated  # the count could not be read
    assert count["sent"] < HUGE / 4


def test_a_stream_that_trickles_is_stopped_at_the_reply_limit_naming_the_setting(
        fake_llm, llm_settings):
    fake_llm.load([{"content": "x" * 400, "token_delay": 0.3}])
    pieces: list[str] = []
    with pytest.raises(LLMReplyStopped) as caught:
        client(llm_settings, llm_reply_s=1.5).chat_stream(ASK, purpose="plan 1",
                                                          on_text=pieces.append)
    error = caught.value
    assert error.partial == "".join(pieces) and 0 < len(error.partial) < 400
    assert error.message.endswith(f"characters of reply from {fake_llm.base_url}/v1: the "
                                  "reply ran past its 1.5s limit (CHORDAL_LLM_REPLY_S)")
    assert (error.call.status, error.call.streamed) == ("error", True)
    assert error.call.error == "stopped: the reply ran past its 1.5s limit (CHORDAL_LLM_REPLY_S)"
    assert len(fake_llm.log()) == 1


def test_a_whole_reply_that_takes_longer_than_the_deadline_is_stopped_and_not_retried(
        fake_llm, llm_settings):
    fake_llm.load([{"content": "x" * 400, "token_delay": 0.3}, {"content": "again"}])
    with pytest.raises(LLMReplyStopped, match="the reply ran past the query's deadline") as caught:
        client(llm_settings).chat(ASK, purpose="react 1", deadline=time.time() + 1)
    assert len(fake_llm.log()) == 1
    assert "CHORDAL_QUERY_TIMEOUT_S, or `chordal ask --timeout`" in str(caught.value)


def test_a_call_whose_deadline_has_passed_sends_nothing(fake_llm, llm_settings):
    fake_llm.load([{"content": "late"}])
    with pytest.raises(LLMReplyStopped, match="ran past the query's deadline") as caught:
        client(llm_settings).chat(ASK, purpose="plan 2", deadline=time.time() - 1)
    assert caught.value.call.status == "error" and fake_llm.log() == []


def test_a_retry_after_longer_than_the_time_left_is_not_waited_for(fake_llm, llm_settings):
    fake_llm.load([{"fault": "429", "retry_after": 30}, {"content": "after the wait"}])
    with pytest.raises(LLMError, match="HTTP 429"):
        client(llm_settings, llm_reply_s=5).chat(ASK, purpose="plan 1")
    assert len(fake_llm.log()) == 1


def test_on_text_raising_stop_reading_ends_the_stream_and_the_call_says_why(
        fake_llm, llm_settings, r):
    fake_llm.load([{"content": "x" * 400}])
    llm, seen = client(llm_settings, r), []

    def stop_at_the_third(text: str) -> None:
        seen.append(text)
        if len(seen) == 3:
            raise StopReading("the query is already failed")

    with pytest.raises(LLMReplyStopped) as caught:
        llm.chat_stream(ASK, purpose="plan 1", on_text=stop_at_the_third)
    assert caught.value.partial == "x" * 12
    assert caught.value.call.error == "stopped: the query is already failed"
    assert in_flight(llm.limit) == 0

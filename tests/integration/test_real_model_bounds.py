"""The reply schema against the real local model (SmolLM2-135M on llama-cpp-python's
server, the `local_llm` fixture): asked how many influenza cases Calder County recorded
in week 48, the model writes its answer template on as prose (`Question: … Plan: …`),
which without a bound runs to the 1,024-token cap (`finish_reason: length`) on every
attempt; under the reply schema the string is bounded and the reply closes. Skipped,
saying why, without `chordal[local-llm]`."""

from __future__ import annotations

import pytest

from shared.config import Settings
from shared.errors import PlanError
from shared.llm.client import LLMClient
from shared.planners.llm import llm_plan
from shared.journey.planning import candidate_documents
from shared.search import open_backend
from shared.ingest import load_jsonl

from ..conftest import DATA

pytestmark = pytest.mark.integration
LOOPING = "How many laboratory-confirmed influenza cases did Calder County record in week 48 of 2023?"


def test_a_reply_the_model_would_loop_in_closes_under_the_reply_schema(local_llm, tmp_path):
    backend = open_backend(Settings(search_db=tmp_path / "search.db"))
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    client = LLMClient(local_llm.client_settings(Settings(
        llm_timeout_s=300, llm_reply_s=600, llm_max_retries=0, llm_max_tokens=1024)))
    calls = []
    try:
        llm_plan(LOOPING, client, attempts=1, on_call=calls.append,
                 documents=candidate_documents(LOOPING, backend))
    except PlanError:
        pass  # the tiny model's plan may fail its checks: its reply ended, which is the point
    (call,) = calls
    assert (call.status, call.json_form, call.finish_reason) == (
        "ok", "json_object_schema", "stop")
    assert call.completion_tokens < 1024

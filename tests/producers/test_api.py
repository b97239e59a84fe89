"""The HTTP API over real HTTP: `chordal api` as a uvicorn subprocess in front of the
`pipeline` stack (real Redis, real planner/executor/finalizer/react workers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.stores.batches import BatchStore
from shared.models import Query
from shared.naming import run_key

from .conftest import TOKEN, ApiServer
from ..conftest import free_port
from ..integration.conftest import fake_llm, llm_pipeline  # noqa: F401 - fixtures, reused

pytestmark = pytest.mark.integration
PLANS = Path(__file__).resolve().parents[2] / "shared" / "data" / "plans"
TESLA = json.loads((PLANS / "tesla_yield.json").read_text())


def wait_done(api: ApiServer, query_id: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status, _, record = api.request("GET", f"/queries/{query_id}")
        assert status == 200, record
        if record["status"] in ("done", "failed") or time.monotonic() > deadline:
            return record
        time.sleep(0.2)


def test_a_query_submitted_over_http_is_answered_with_its_evidence(api):
    status, headers, reply = api.request("POST", "/queries", {
        "question": "What was Tesla's battery yield rate in Q3 2023?", "plan": TESLA})
    assert status == 202, reply
    (submitted,) = reply["queries"]
    assert submitted["submitted"] is True
    assert headers["location"] == f"/queries/{submitted['id']}"
    record = wait_done(api, submitted["id"])
    assert record["status"] == "done", record
    assert record["answer"]["text"].startswith("Battery yield was ")
    assert record["answer"]["footnotes"][0]["evidence"]["title"]
    assert [s["action_id"] for s in record["steps"]] == [
        f"{submitted['id']}:{n}" for n in ("E1", "E2", "E3")]


def test_a_text_plan_in_rewoo_syntax_runs_like_a_json_one(api):
    rewoo = (PLANS / "two_branch.rewoo.txt").read_text()
    status, _, reply = api.request("POST", "/queries", {"question": "revenue gap",
                                                        "plan": rewoo})
    assert status == 202, reply
    record = wait_done(api, reply["queries"][0]["id"])
    assert record["status"] == "done", record
    assert "Northwind Motors" in record["answer"]["text"]
    assert [s["step_id"] for s in record["steps"]] == ["E1", "E2", "E3", "E4", "E5"]


def test_a_list_is_submitted_in_order_and_a_repeated_id_is_not_enqueued_again(api):
    first = {"id": "api-repeat-1", "question": "How much revenue did Northwind Motors "
                                               "report for Q3 2023?"}
    status, _, reply = api.request("POST", "/queries", [first, {"question": "another one"}])
    assert status == 202, reply
    assert [q["submitted"] for q in reply["queries"]] == [True, True]
    assert reply["queries"][0]["id"] == "api-repeat-1"
    status, _, again = api.request("POST", "/queries", {**first, "question": "changed"})
    assert status == 202
    assert again["queries"] == [{"id": "api-repeat-1", "submitted": False}]
    assert wait_done(api, "api-repeat-1")["question"] == first["question"]


@pytest.mark.parametrize("method, path", [("POST", "/queries"), ("GET", "/queries/x"),
                                          ("GET", "/queries/x/events"), ("GET", "/batches/x"),
                                          ("DELETE", "/queries/x"), ("DELETE", "/batches/x")])
def test_requests_without_the_right_bearer_token_are_refused_with_401(api, method, path):
    body = {"question": "q"} if method == "POST" else None
    status, headers, reply = api.request(method, path, body, auth=False)
    assert status == 401
    assert "CHORDAL_API_TOKEN" in reply["detail"] and headers["www-authenticate"].startswith("Bearer")
    status, _, reply = api.request(method, path, body, token=TOKEN + "-wrong")
    assert status == 401 and reply["detail"].startswith("wrong bearer token")


def test_a_bad_body_gets_422_with_a_message_naming_each_field(api):
    status, _, reply = api.request("POST", "/queries", {"mode": "fast", "colour": "red"})
    assert status == 422
    message = reply["message"]
    assert "field 'question' is missing" in message
    assert "field 'mode'" in message and "'rewoo', 'react' or 'auto'" in message
    assert "field 'colour' is not allowed" in message
    assert {tuple(d["loc"]) for d in reply["detail"]} == {
        ("body", "question"), ("body", "mode"), ("body", "colour")}


def test_one_bad_query_in_a_list_rejects_the_list_and_nothing_is_submitted(api):
    good = {"id": "api-never-sent", "question": "fine"}
    status, _, reply = api.request("POST", "/queries", [good, {"question": ""}])
    assert status == 422
    assert reply["message"].startswith("field '[1].question'")
    assert api.request("GET", "/queries/api-never-sent")[0] == 404


def test_a_body_that_is_not_json_gets_422_saying_so(api):
    status, _, reply = api.request("POST", "/queries", raw=b"{question: 1")
    assert status == 422 and "not valid JSON" in reply["message"]


def test_an_invalid_plan_gets_422_with_one_problem_per_step_and_runs_nothing(api):
    plan = {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"},
        {"id": "E2", "operation": "EXTRACT", "source": "$E1", "pattern": "no group here"},
        {"id": "E3", "operation": "COMPUTE", "expression": "$NOPE - 1"},
        {"id": "E4", "operation": "FETCH", "source": "x"}]}
    status, _, reply = api.request("POST", "/queries", {"id": "api-bad-plan",
                                                        "question": "q", "plan": plan})
    assert status == 422, reply
    (detail,) = reply["detail"]
    assert detail["loc"] == ["body", "plan"] and detail["type"] == "plan_invalid"
    by_step = {p["step"]: p["code"] for p in detail["problems"]}
    assert by_step == {"E2": "capture_groups", "E3": "undefined_variable",
                       "E4": "unknown_operation"}
    assert "field 'plan'" in reply["message"] and "E3" in reply["message"]
    assert api.request("GET", "/queries/api-bad-plan")[0] == 404


def test_a_plan_with_mode_react_is_refused_naming_both_fields(api):
    status, _, reply = api.request("POST", "/queries", {"question": "q", "plan": TESLA,
                                                        "mode": "react"})
    assert status == 422 and "drop 'plan'" in reply["message"]


def test_the_event_stream_reports_each_status_and_step_then_ends_with_the_answer(api):
    _, _, reply = api.request("POST", "/queries", {"question": "yield", "plan": TESLA})
    query_id = reply["queries"][0]["id"]
    events = api.events(f"/queries/{query_id}/events")
    names = [name for name, _ in events]
    assert names[-1] == "end" and names.count("end") == 1
    statuses = [data["status"] for name, data in events if name == "status"]
    assert statuses[0] == "queued" and statuses[-1] == "done"
    assert {"planning", "executing"} <= set(statuses)
    steps = [data["action_id"] for name, data in events if name == "step"]
    assert sorted(steps) == [f"{query_id}:{n}" for n in ("E1", "E2", "E3")]
    end = events[-1][1]
    record = api.request("GET", f"/queries/{query_id}")[2]
    assert end["status"] == "done" and end["answer"] == record["answer"]


def test_a_react_query_streams_each_iteration_and_its_tool_result(llm_pipeline, tmp_path):
    llm_pipeline.fake_llm.load([
        {"match": None, "content": json.dumps({"thought": "Fetch the report.", "action": {
            "tool": "get", "input": "Northwind Motors Q3 2023 Financial Report"}})},
        {"match": None, "content": json.dumps({"thought": "Found it.", "action": {
            "tool": "finish", "input": "Northwind's Q3 2023 revenue was $9.84 billion [R1]."}})},
    ])
    server = ApiServer(llm_pipeline.env(), tmp_path / "api.log").start()
    try:
        _, _, reply = server.request("POST", "/queries", {
            "question": "Northwind's Q3 2023 revenue?", "mode": "react"})
        query_id = reply["queries"][0]["id"]
        events = server.events(f"/queries/{query_id}/events")
    finally:
        server.stop()
    iterations = [data for name, data in events if name == "iteration"]
    assert [(it["n"], it["tool"]) for it in iterations] == [(1, "get"), (2, "finish")]
    assert [d["action_id"] for n, d in events if n == "step"] == [f"{query_id}:R1"]
    end = events[-1]
    assert end[0] == "end" and end[1]["status"] == "done", end
    assert "$9.84 billion" in end[1]["answer"]["text"]


def test_a_stream_opened_after_the_answer_replays_it_and_ends(api):
    _, _, reply = api.request("POST", "/queries", {"question": "yield", "plan": TESLA})
    query_id = reply["queries"][0]["id"]
    wait_done(api, query_id)
    events = api.events(f"/queries/{query_id}/events")
    assert [n for n, _ in events].count("step") == 3
    assert events[-1][0] == "end" and events[-1][1]["answer"]["text"]


def test_an_unknown_query_is_404_naming_the_id(api):
    for path in ("/queries/no-such-query", "/queries/no-such-query/events"):
        status, _, reply = api.request("GET", path)
        assert status == 404 and "'no-such-query'" in reply["detail"]


def test_a_batch_status_is_read_from_its_counters_and_an_unknown_batch_is_404(api, tmp_path):
    path = tmp_path / "api-batch.jsonl"
    path.write_text(json.dumps({"question": "What was the battery yield rate in Q3 2023?",
                                "id": "api-batch-1"}) + "\n")
    assert api.pipeline.cli("enqueue", str(path), "--batch", "api-b").returncode == 0
    wait_done(api, "api-batch-1")
    status, _, batch = api.request("GET", "/batches/api-b")
    assert status == 200 and (batch["total"], batch["counts"]["done"], batch["unfinished"]) == (1, 1, 0)
    status, _, reply = api.request("GET", "/batches/no-such-batch")
    assert status == 404 and "'no-such-batch'" in reply["detail"]


def test_delete_cancels_a_query_or_a_batch_once_and_an_unknown_one_is_404(api):
    store = api.pipeline.store
    held = [Query(id=f"api-cx-{i}", question=f"Held {i}?", created_at=time.time(),
                  deadline_s=600) for i in range(3)]  # recorded, never sent: unfinished
    assert store.create(held[0])
    BatchStore(store.r, 3600).create("api-cx", [(1, held[1]), (2, held[2])])
    assert api.request("DELETE", "/queries/api-cx-0")[::2] == (
        200, {"cancelled": 1, "finished": 0, "missing": 0})
    assert api.request("DELETE", "/queries/api-cx-0")[2]["finished"] == 1
    assert api.request("GET", "/queries/api-cx-0")[2]["status"] == "cancelled"
    assert api.request("DELETE", "/batches/api-cx")[2] == {"cancelled": 2, "finished": 0, "missing": 0}
    assert api.request("DELETE", "/batches/api-cx")[2] == {"cancelled": 0, "finished": 2, "missing": 0}
    assert api.request("GET", "/batches/api-cx")[2]["counts"]["cancelled"] == 2
    for path, name in (("/queries/api-cx-nope", "'api-cx-nope'"), ("/batches/nope", "'nope'")):
        status, _, reply = api.request("DELETE", path)
        assert status == 404 and name in reply["detail"]


def test_health_needs_no_token_and_sees_redis_and_a_worker_on_every_queue(api):
    status, _, health = api.request("GET", "/health", auth=False)
    assert status == 200, health
    assert health["status"] == "ok" and health["redis"] is True
    assert set(health["workers"]) == {"plan", "execute", "finalize", "react"}
    assert all(n >= 1 for n in health["workers"].values())


def test_the_openapi_schema_describes_the_request_and_record_models(api):
    status, _, schema = api.request("GET", "/openapi.json", auth=False)
    assert status == 200
    assert {"QueryIn", "RunRecord", "Plan", "StepResult", "SubmitReply", "Health"} <= set(
        schema["components"]["schemas"])
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert set(schema["paths"]) >= {"/queries", "/queries/{query_id}",
                                    "/queries/{query_id}/events", "/health"}


def clean_env() -> dict:
    """The test's environment without a CHORDAL_API_TOKEN of its own."""
    return {k: v for k, v in os.environ.items() if k != "CHORDAL_API_TOKEN"}


def run_api(pipeline, *args: str) -> subprocess.CompletedProcess:
    env = {**clean_env(), **pipeline.env()}
    env.pop("CHORDAL_API_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "producers", "api", "--port",
                           str(free_port()), *args], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_api_refuses_to_start_without_a_token_and_says_how_to_set_one(pipeline):
    result = run_api(pipeline)
    assert result.returncode == 2
    assert "CHORDAL_API_TOKEN is not set" in result.stderr and "--insecure" in result.stderr
    assert "secrets.token_urlsafe(32)" in result.stderr


def test_insecure_mode_is_refused_on_an_address_other_than_loopback(pipeline):
    result = run_api(pipeline, "--insecure", "--host", "0.0.0.0")
    assert result.returncode == 2
    assert "loopback address only" in result.stderr and "'0.0.0.0'" in result.stderr


def test_insecure_mode_on_loopback_serves_without_a_token(pipeline, tmp_path):
    server = ApiServer(pipeline.env(), tmp_path / "api.log", token=None,
                       args=("--insecure",)).start()
    try:
        status, _, reply = server.request("POST", "/queries", {"question": "open door"})
        assert status == 202 and reply["queries"][0]["submitted"]
    finally:
        assert server.stop() == 0


def test_a_run_store_that_does_not_answer_gets_503_naming_it_without_its_password(tmp_path):
    env = {**clean_env(), "CHORDAL_REDIS_URL": f"redis://:hunter2@127.0.0.1:{free_port()}/0"}
    server = ApiServer(env, tmp_path / "api.log").start()
    try:
        status, _, reply = server.request("POST", "/queries", {"question": "q"})
        assert status == 503 and "redis://:***@127.0.0.1" in reply["detail"]
        assert "hunter2" not in json.dumps(reply)
        status, _, health = server.request("GET", "/health", auth=False)
        assert status == 503 and health["status"] == "down" and health["redis"] is False
    finally:
        server.stop()


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400"])
def test_a_deadline_that_is_not_a_finite_number_gets_422_naming_the_field(api, number):
    qid = f"api-deadline-{number.replace('-', 'minus-')}"
    raw = f'{{"id": "{qid}", "question": "q", "deadline_s": {number}}}'.encode()
    status, _, reply = api.request("POST", "/queries", raw=raw)
    assert status == 422, reply
    assert reply["message"].startswith("field 'deadline_s'") and "finite" in reply["message"]
    assert api.request("GET", f"/queries/{qid}")[0] == 404


def test_a_non_finite_number_in_a_plan_gets_422_naming_its_step(api):
    raw = ('{"question": "q", "plan": {"steps": [{"id": "E1", "operation": "COMPUTE", '
           '"expression": "1"}, {"id": "E2", "operation": "VALIDATE", "value": "$E1", '
           '"min": -Infinity}]}}').encode()
    status, _, reply = api.request("POST", "/queries", raw=raw)
    assert status == 422, reply
    (problem,) = reply["detail"][0]["problems"]
    assert problem["step"] == "E2" and "'min'" in problem["message"]


def test_a_record_stored_with_a_null_deadline_still_reads_back(api):
    store = api.pipeline.store
    query = Query(id="api-null-deadline", question="stored by an earlier version")
    assert store.create(query)
    store.r.hset(run_key(query.id), "query",
                 query.model_dump_json().replace('"deadline_s":60.0', '"deadline_s":null'))
    store.fail(query.id, "finalizer failed: ValidationError")
    status, _, record = api.request("GET", f"/queries/{query.id}")
    assert status == 200, record
    assert (record["status"], record["question"]) == ("failed", "stored by an earlier version")


def test_a_list_with_one_unencodable_plan_is_refused_whole_and_nothing_is_enqueued(api):
    good = {"id": "api-before-surrogate", "question": "fine"}
    bad = {"question": "q", "plan": {**TESLA, "answer": "yield \ud800 {{ Y }}"}}
    status, _, reply = api.request("POST", "/queries", [good, bad])
    assert status == 422, reply
    assert reply["message"].startswith("field '[1].plan'") and "surrogate" in reply["message"]
    assert api.request("GET", "/queries/api-before-surrogate")[0] == 404


DEEP = "[" * 950 + "]" * 950
BIG = "x" * 7_000_000
"""Under CHORDAL_API_MAX_BODY_BYTES (8 MiB): a larger body is 413 (test_api_limits.py)."""


@pytest.mark.parametrize("raw, field", [
    (json.dumps({"question": "q \ud800"}), "field 'question'"),
    (json.dumps({"question": "q", "\ud800": 1}), "a field name in the request body holds a lone"),
    ('{"question": "q", "mode": NaN}', "field 'mode'"),
    ('{"question": ' + DEEP + '}', "nested more than"),
    ('{"question": "' + BIG + '"}', "field 'question'"),
], ids=["surrogate", "surrogate-key", "nan", "950-deep", "7-MB"])
def test_the_422_names_the_field_without_echoing_the_input(api, raw, field):
    status, headers, reply = api.request("POST", "/queries", raw=raw.encode(), timeout=60)
    assert status == 422, reply
    assert field in reply["message"]
    assert int(headers["content-length"]) < 4000
    assert all("input" not in d for d in reply["detail"])


@pytest.mark.parametrize("raw, says", [
    (b'{"question": "caf\xe9"}', "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
    (b'{"question": "q", "deadline_s": 1' + b"0" * 5000 + b"}", "more than 4300 digits"),
], ids=["latin-1", "100k-deep", "5000-digits"])
def test_a_body_python_cannot_read_gets_422_saying_why(api, raw, says):
    status, _, reply = api.request("POST", "/queries", raw=raw)
    assert status == 422, reply
    assert "not valid JSON" in reply["message"] and says in reply["message"]


def test_the_openapi_schema_documents_400_401_and_422(api):
    _, _, schema = api.request("GET", "/openapi.json", auth=False)
    post = schema["paths"]["/queries"]["post"]["responses"]
    assert {"202", "400", "401", "422"} <= set(post)
    assert post["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/Unprocessable")
    for path in ("/queries/{query_id}", "/queries/{query_id}/events"):
        assert "401" in schema["paths"][path]["get"]["responses"]

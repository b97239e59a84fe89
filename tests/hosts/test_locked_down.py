"""Locked-down links across test hosts: Redis speaks TLS only, with client certificates,
and lets in only its ACL users, one per role (shared/access/acl.py); the workers, the
producers (the CLI and the HTTP API) and the monitoring (Flower, `chordal status`) each
run on their own host and log in as their role. A question crosses every link; each
role is refused what it must not do; the API and Flower answer across hosts only with
their credentials and only on the address they were given; and no password appears in
any host's logs or in anything a command printed."""

from __future__ import annotations

import base64
import json
import os
import sys
import urllib.error
import urllib.request

import pytest
import redis

from shared.config import Settings
from shared.errors import ConfigError
from shared.access.acl import USERS
from shared.access.auth_dir import AuthDir
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.stack.process import ChildProcess, answers_http
from shared.stack.redis_server import find_redis_server
from shared.access.tls import make_auth_dir
from shared.stack.workers import WorkerProcess

from ..conftest import DATA, free_port
from .cluster import Cluster, HostRedis, probe
from .test_partitions import plan

TOKEN = "api-token-for-the-cluster-test-6e2f9b"
FLOWER_AUTH = "ops:flower-pass-for-the-cluster-test"


def http(url: str, *, token: str | None = None, basic: str | None = None,
         body: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode() if body else None,
                                     method="POST" if body else "GET",
                                     headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if basic:
        request.add_header("Authorization", "Basic " + base64.b64encode(basic.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture
def tls_binary() -> str:
    if why := probe():
        pytest.skip(why)
    try:
        return find_redis_server(tls=True)
    except ConfigError as exc:
        if os.environ.get("CI"):
            raise  # .ci/run installs Debian's redis-server: CI must run this test
        pytest.skip(str(exc))


def test_tls_and_an_acl_user_per_role_across_the_hosts(tmp_path, tls_binary):
    cluster = Cluster(tmp_path / "cluster")
    outputs: list[str] = []
    try:
        redis_host, control, executor, producer, monitor = (
            cluster.add_host(n) for n in ("redis", "control", "exec1", "producer", "monitor"))
        auth = make_auth_dir(AuthDir(cluster.home / "auth"), hosts=[redis_host.address])
        port = free_port()
        server = HostRedis(redis_host, port, cluster.home / "redis",
                           lines=tuple(auth.server_config(port)), binary=tls_binary,
                           check_url=auth.url(redis_host.address, port, "owner"))
        server.start_on_host()
        plain_url = f"rediss://{redis_host.address}:{port}/0"  # each process adds its user
        search_db = cluster.home / "search.db"
        base = Settings(home=cluster.home / "root", redis_url=plain_url,
                        redis_auth_dir=auth.path, search_db=search_db)
        backend = open_backend(base)
        backend.add(load_jsonl(DATA / "corpus.jsonl"))
        backend.close()
        monitoring_url = auth.url(redis_host.address, port, "monitoring")

        for host, role in ((control, "planner"), (control, "finalizer"), (executor, "executor")):
            worker = WorkerProcess(role, base.model_copy(update={
                "home": cluster.home / host.name, "redis_role": "workers"}))
            host.start(worker)
            worker.wait_ready(60, broker=monitoring_url)  # a ping as the monitoring user

        env = {**os.environ, "CHORDAL_REDIS_URL": plain_url,
               "CHORDAL_REDIS_AUTH_DIR": str(auth.path), "CHORDAL_SEARCH_DB": str(search_db)}

        def cli(host, *args: str, role: str = "producers") -> str:
            done = __import__("subprocess").run(
                host.wrap([sys.executable, "-m", "producers", *args]),
                env={**env, "CHORDAL_HOME": str(cluster.home / host.name),
                     "CHORDAL_REDIS_ROLE": role},
                capture_output=True, text=True, timeout=120)
            outputs.append(done.stdout + done.stderr)
            assert done.returncode == 0, done.stdout + done.stderr
            return done.stdout

        plan_file = tmp_path / "plan.json"
        plan_file.write_text(json.dumps(plan()))
        record = json.loads(cli(producer, "ask", "What was Tesla's battery yield in Q3 2023?",
                                "--plan", str(plan_file), "--json", "--timeout", "60"))
        assert record["status"] == "done", record
        assert record["answer"]["text"].startswith("Battery yield was 91.7")
        lines = tmp_path / "batch.jsonl"
        lines.write_text("".join(json.dumps({"question": f"Tesla yield Q3 2023 ({i})?",
                                             "plan": plan()}) + "\n" for i in range(3)))
        cli(producer, "enqueue", str(lines), "--batch", "locked")
        cli(producer, "wait", "--batch", "locked", "--timeout", "60")
        status = cli(monitor, "status", "--batch", "locked", role="monitoring")
        assert "3 queries: done 3" in status, status
        assert "workers alive, by queue consumed: execute 1, finalize 1, plan 1" in status, status

        api_port, flower_port = free_port(), free_port()
        api = ChildProcess([sys.executable, "-m", "producers", "api", "--host",
                            producer.address, "--port", str(api_port)],
                           cluster.home / "producer" / "api.log", what="chordal api",
                           env={**env, "CHORDAL_HOME": str(cluster.home / "producer"),
                                "CHORDAL_API_TOKEN": TOKEN})
        flower = ChildProcess([sys.executable, "-m", "producers", "flower", "--address",
                               monitor.address, "--port", str(flower_port)],
                              cluster.home / "monitor" / "flower.log", what="chordal flower",
                              env={**env, "CHORDAL_HOME": str(cluster.home / "monitor"),
                                   "CHORDAL_FLOWER_AUTH": FLOWER_AUTH})
        producer.start(api)
        monitor.start(flower)
        api_url, flower_url = (f"http://{producer.address}:{api_port}",
                               f"http://{monitor.address}:{flower_port}")
        api.wait_until(lambda: answers_http(api_url + "/openapi.json"), 30)
        flower.wait_until(lambda: answers_http(flower_url + "/healthcheck"), 30)
        assert http(api_url + "/queries/none")[0] == 401  # from another host, no token
        code, body = http(api_url + "/queries", token=TOKEN,
                          body={"question": "What was Tesla's battery yield in Q3 2023?",
                                "plan": plan()})
        assert code == 202, body
        assert http(flower_url + "/api/workers")[0] == 401
        code, body = http(flower_url + "/api/workers?refresh=1", basic=FLOWER_AUTH)
        assert code == 200 and len(json.loads(body)) == 3, body  # found as `monitoring`
        # bound to the address given: not on the host's loopback
        assert not answers_http(f"http://127.0.0.1:{api_port}/openapi.json")

        for role, refused in (
                ("producers", [("FLUSHALL",), ("CONFIG", "GET", "*"), ("KEYS", "*"),
                               ("BRPOP", "execute", "1"), ("HGETALL", "unacked"),
                               ("PUBLISH", "/0.celery.pidbox", "shutdown")]),
                ("monitoring", [("FLUSHALL",), ("LPUSH", "plan", "x"),
                                ("HSET", "chordal:run:x", "status", "done")]),
                ("workers", [("FLUSHALL",), ("CONFIG", "SET", "save", ""), ("KEYS", "*"),
                             ("SET", "elsewhere", "1")])):
            with redis.Redis.from_url(auth.url(redis_host.address, port, role)) as client:
                assert client.ping()
                for command in refused:
                    with pytest.raises(redis.exceptions.NoPermissionError):
                        client.execute_command(*command)
        with redis.Redis.from_url(auth.url(redis_host.address, port, "owner")) as owner:
            log = owner.execute_command("ACL", "LOG")
        # nothing Chordal itself does was refused: every entry is one of the probes above,
        # sent from this process (the bridge's address), none from a Chordal host
        bridge = f"addr={cluster.prefix}.254:".encode()
        ours = [e for e in log if bridge not in (_field(e, "client-info") or b"")]
        assert ours == [], ours
    finally:
        cluster.close()
    secrets = [auth.password(user) for user in USERS] + [TOKEN, FLOWER_AUTH.split(":")[1]]
    leaks = [str(path) for path in cluster.logs() if any(s in path.read_text(errors="replace")
                                                         for s in secrets)]
    leaks += [out[:200] for out in outputs if any(s in out for s in secrets)]
    assert leaks == [], leaks


def _field(entry, name: str):
    items = dict(zip(entry[::2], entry[1::2])) if isinstance(entry, list) else entry
    value = items.get(name.encode(), items.get(name))
    return value.encode() if isinstance(value, str) else value

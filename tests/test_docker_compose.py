"""docker/compose.yaml: validated by the Compose CLI itself (no Docker engine needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

COMPOSE_FILE = Path(__file__).resolve().parent.parent / "docker" / "compose.yaml"
PROFILES = ["--profile", "search", "--profile", "cli"]


def compose_command() -> list[str] | None:
    """`docker compose` (v2 plugin) if it works, else `docker-compose` (v1), else None."""
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


COMPOSE = compose_command()
pytestmark = pytest.mark.skipif(
    COMPOSE is None, reason="neither the `docker compose` plugin nor `docker-compose` is on PATH"
)


def compose(*args: str, flower_auth: str | None = "admin:secret") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHORDAL_", "COMPOSE_"))}
    if flower_auth is not None:
        env["CHORDAL_FLOWER_AUTH"] = flower_auth
    return subprocess.run([*COMPOSE, "-f", str(COMPOSE_FILE), *PROFILES, *args],
                          env=env, capture_output=True, text=True, timeout=120)


def test_compose_defines_redis_flower_search_and_one_service_per_worker_role():
    result = compose("config", "--services")
    assert result.returncode == 0, result.stderr
    services = set(result.stdout.split())
    assert {"redis", "elasticsearch", "flower", "planner", "executor", "finalizer"} <= services


def test_compose_refuses_to_run_flower_without_basic_auth():
    result = compose("config", "--services", flower_auth=None)
    assert result.returncode != 0
    assert "CHORDAL_FLOWER_AUTH" in result.stderr


def test_executors_can_be_scaled_and_every_worker_reaches_redis_and_sends_events():
    if COMPOSE[-1].endswith("docker-compose"):
        pytest.skip("docker-compose 1.x cannot print the resolved config as JSON")
    result = compose("config", "--format", "json")
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    executor = services["executor"]
    assert "container_name" not in executor and not executor.get("ports")
    for role in ("planner", "executor", "finalizer"):
        assert services[role]["environment"]["CHORDAL_REDIS_URL"] == "redis://redis:6379/0"
        assert "-E" in services[role]["command"]
    assert services["flower"]["environment"]["FLOWER_BASIC_AUTH"] == "admin:secret"

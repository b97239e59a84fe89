"""The HTTP API against a hostile client, through a real `chordal api` process over the
`pipeline` stack: the token it starts with."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from producers.api import create_app
from shared.config import Settings
from shared.errors import ConfigError

from ..conftest import free_port


# -- the token -----------------------------------------------------------------------

def run_api(pipeline, token: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in pipeline.env().items() if k != "CHORDAL_API_TOKEN"}
    if token is not None:
        env["CHORDAL_API_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "producers", "api", "--port",
                           str(free_port()), *args], env=env, capture_output=True,
                          text=True, timeout=60)


SHORT = "s3cret-but-only-31-characters.."


@pytest.mark.integration  # starts `chordal api`
@pytest.mark.parametrize("token, args, says", [
    ("", (), "CHORDAL_API_TOKEN is empty"),
    ("", ("--insecure",), "CHORDAL_API_TOKEN is empty"),
    ("x", (), "CHORDAL_API_TOKEN is 1 character long"),
    (SHORT, (), "CHORDAL_API_TOKEN is 31 characters long"),
], ids=["empty", "empty-insecure", "one-character", "31-characters"])
def test_an_empty_or_short_token_stops_the_api_at_start_saying_how_to_make_one(
        pipeline, token, args, says):
    result = run_api(pipeline, token, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert says in result.stderr and "at least 32 characters" in result.stderr
    assert "secrets.token_urlsafe(32)" in result.stderr
    assert "Traceback" not in result.stderr and SHORT not in result.stdout + result.stderr


@pytest.mark.parametrize("token", ["", "x", SHORT])
def test_the_app_is_not_built_with_an_empty_or_short_token(token):
    settings = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", api_token=token)
    with pytest.raises(ConfigError, match="CHORDAL_API_TOKEN is .* at least 32 characters"):
        create_app(settings, sweep_s=None)
    with pytest.raises(ConfigError, match="CHORDAL_API_TOKEN is "):
        create_app(settings, insecure=True, sweep_s=None)


@pytest.mark.integration  # starts `chordal ask`
def test_commands_other_than_the_api_run_with_a_short_api_token(pipeline):
    result = subprocess.run([sys.executable, "-m", "producers", "ask", "How much revenue did "
                             "Northwind Motors report for Q3 2023?", "--json"],
                            env={**pipeline.env(), "CHORDAL_API_TOKEN": "x"},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "done"

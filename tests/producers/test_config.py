"""`chordal config`: every effective setting, from the environment and `.env`, with
secrets masked; run as a real subprocess in a scratch working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shared.config import Settings

SECRETS = {"CHORDAL_API_TOKEN": "tok-3f9a", "OPENAI_API_KEY": "sk-live-77c1",
           "CHORDAL_FLOWER_AUTH": "admin:flower-pw-5e",
           "CHORDAL_REDIS_URL": "redis://:redis-pw-91@cache.internal:6379/0",
           "CHORDAL_ES_URL": "https://elastic:es-pw-2b@search.internal:9200"}
PASSWORDS = ("tok-3f9a", "sk-live-77c1", "flower-pw-5e", "redis-pw-91", "es-pw-2b")


def clean_env(**extra: str) -> dict:
    """The test's environment without any Chordal setting, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith("CHORDAL_") and k.upper() != "OPENAI_API_KEY"}
    return {**env, **extra}


def chordal_config(cwd, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "producers", "config", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.integration  # starts a process
def test_config_prints_every_setting_with_secrets_and_url_passwords_masked(tmp_path):
    env = clean_env(**SECRETS)
    table = chordal_config(tmp_path, env)
    as_json = chordal_config(tmp_path, env, "--json")
    assert table.returncode == as_json.returncode == 0, table.stderr + as_json.stderr
    for out in (table.stdout, as_json.stdout):
        assert not [p for p in PASSWORDS if p in out]
    shown = json.loads(as_json.stdout)
    assert shown["CHORDAL_REDIS_URL"] == {"value": "redis://:***@cache.internal:6379/0",
                                          "source": "env", "effective": None}
    assert shown["CHORDAL_ES_URL"]["value"] == "https://elastic:***@search.internal:9200"
    assert {shown[k]["value"] for k in ("CHORDAL_API_TOKEN", "OPENAI_API_KEY",
                                        "CHORDAL_FLOWER_AUTH")} == {"**********"}
    assert len(shown) == len(Settings.model_fields)
    assert "cache.internal" in table.stdout and "CHORDAL_MAX_STEPS" in table.stdout


@pytest.mark.integration  # starts a process
def test_config_masks_a_password_given_in_the_query_of_the_redis_url(tmp_path):
    url = "redis://cache.internal:6379/0?password=redis-pw-91&socket_timeout=5"
    result = chordal_config(tmp_path, clean_env(CHORDAL_REDIS_URL=url), "--json")
    assert result.returncode == 0, result.stderr
    assert "redis-pw-91" not in result.stdout
    assert json.loads(result.stdout)["CHORDAL_REDIS_URL"]["value"] == \
        "redis://cache.internal:6379/0?password=***&socket_timeout=5"


@pytest.mark.integration  # starts a process
def test_unset_settings_show_their_default_and_what_they_amount_to(tmp_path):
    result = chordal_config(tmp_path, clean_env(CHORDAL_HOME=str(tmp_path / "h")), "--json")
    shown = json.loads(result.stdout)
    assert shown["CHORDAL_REDIS_URL"] == {"value": None, "source": "default",
                                          "effective": "embedded: redis://127.0.0.1:6399/0"}
    assert shown["CHORDAL_SEARCH_DB"]["effective"] == str(tmp_path / "h" / "search.db")
    assert shown["CHORDAL_LOCAL_LLM_GGUF"]["effective"] == \
        "bundled: SmolLM2-135M-Instruct.Q4_1.gguf (chordal[local-llm])"
    assert shown["CHORDAL_LOCAL_LLM_THREADS"]["effective"] == max(1, (os.cpu_count() or 1) // 2)
    assert shown["CHORDAL_MAX_STEPS"] == {"value": 20, "source": "default", "effective": None}


@pytest.mark.integration  # starts a process
def test_a_dotenv_file_in_the_working_directory_is_honoured_and_the_environment_wins(tmp_path):
    (tmp_path / ".env").write_text("CHORDAL_MAX_STEPS=7\nCHORDAL_QUERY_TIMEOUT_S=9\n"
                                   "CHORDAL_API_TOKEN=dotenv-secret-c4\n")
    result = chordal_config(tmp_path, clean_env(CHORDAL_QUERY_TIMEOUT_S="11"), "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["CHORDAL_MAX_STEPS"] == {"value": 7, "source": ".env", "effective": None}
    assert shown["CHORDAL_QUERY_TIMEOUT_S"]["value"] == 11 and \
        shown["CHORDAL_QUERY_TIMEOUT_S"]["source"] == "env"
    assert shown["CHORDAL_API_TOKEN"] == {"value": "**********", "source": ".env",
                                          "effective": None}
    assert "dotenv-secret-c4" not in result.stdout


def test_settings_built_in_a_directory_with_a_dotenv_file_read_it(tmp_path, monkeypatch):
    for key in ("CHORDAL_MAX_STEPS", "CHORDAL_API_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / ".env").write_text("CHORDAL_MAX_STEPS=7\nCHORDAL_API_TOKEN=from-dotenv\n")
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.max_steps == 7
    assert settings.api_token.get_secret_value() == "from-dotenv"


@pytest.mark.integration  # starts a process
def test_an_invalid_setting_is_named_by_its_variable_without_echoing_its_value(tmp_path):
    result = chordal_config(tmp_path, clean_env(CHORDAL_MAX_STEPS="lots-of-them"))
    assert result.returncode == 1
    assert "CHORDAL_MAX_STEPS" in result.stderr and "lots-of-them" not in result.stderr


@pytest.mark.integration  # starts a process
def test_the_help_lists_the_api_and_config_commands(tmp_path):
    result = subprocess.run([sys.executable, "-m", "producers", "--help"], cwd=tmp_path,
                            env=clean_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert " api " in result.stdout and " config " in result.stdout

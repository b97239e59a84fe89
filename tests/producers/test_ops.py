"""`chordal flower`'s settings: the credentials it accepts and the metrics it asks for."""

from __future__ import annotations

import pytest

from producers.cli.flower import basic_auth, flower_argv, flower_env
from shared.config import Settings
from shared.errors import ConfigError


def test_flower_credentials_need_a_user_and_a_password_in_every_entry():
    assert basic_auth(Settings(flower_auth="ops:pw,viewer:pw2")) == "ops:pw,viewer:pw2"
    with pytest.raises(ConfigError, match="no password"):
        basic_auth(Settings(flower_auth="ops:pw,viewer"))
    with pytest.raises(ConfigError, match="CHORDAL_FLOWER_AUTH is not set"):
        basic_auth(Settings(flower_auth=None))


def test_flower_gets_the_credentials_in_its_environment_and_no_other_flower_option(monkeypatch):
    monkeypatch.setenv("FLOWER_UNAUTHENTICATED_API", "true")
    settings = Settings(flower_auth="ops:pw", redis_url="redis://10.0.0.5:6379/0")
    env = flower_env(settings)
    assert env["FLOWER_BASIC_AUTH"] == "ops:pw"
    assert "FLOWER_UNAUTHENTICATED_API" not in env
    assert not any("ops:pw" in arg for arg in flower_argv(settings, 5555, "127.0.0.1", 1000, 60))


def test_the_runtime_histogram_ends_at_the_task_time_limit():
    argv = flower_argv(Settings(task_time_limit_s=45), 5555, "127.0.0.1", 1000, 60)
    (buckets,) = [a.split("=", 1)[1] for a in argv if a.startswith("--task_runtime_metric_buckets=")]
    assert buckets.split(",")[-3:] == ["10", "30", "45"]


def test_flower_binds_only_the_address_given_and_logs_in_to_redis_as_monitoring(tmp_path):
    (tmp_path / "monitoring.password").write_text("pw-of-monitoring\n")
    settings = Settings(flower_auth="ops:pw", redis_url="rediss://10.0.0.5:6379/0",
                        redis_auth_dir=tmp_path)
    assert "--address=10.0.0.7" in flower_argv(settings, 5555, "10.0.0.7", 1000, 60)
    env = flower_env(settings)
    assert env["CHORDAL_REDIS_ROLE"] == "monitoring"
    assert env["CHORDAL_REDIS_URL"].startswith("rediss://monitoring:pw-of-monitoring@10.0.0.5")

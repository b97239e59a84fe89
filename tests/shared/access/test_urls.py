"""Passwords in URLs: masked wherever a message names the URL, and moved from the query
into the userinfo before a Redis URL reaches Celery (whose kombu cannot read the query
form) and redis-py, which then connect with it."""

from __future__ import annotations

import pytest
from kombu import Connection

from shared.config import Settings
from shared.access.urls import mask_url, password_in_userinfo


@pytest.mark.parametrize("url, shown", [
    ("rediss://user:s3cret@redis.example:6380/1", "rediss://user:***@redis.example:6380/1"),
    ("redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
    ("redis://h:6379/0?password=s3cret", "redis://h:6379/0?password=***"),
    ("redis://h:6379/0?ssl_cert_reqs=none&password=s3cret&db=2",
     "redis://h:6379/0?ssl_cert_reqs=none&password=***&db=2"),
    ("http://llm.internal/v1?api_key=s3cret&x=1", "http://llm.internal/v1?api_key=***&x=1"),
    ("redis://:s3/cr@et@h:6379/0", "redis://:***@h:6379/0"),
], ids=["userinfo", "no-user", "query", "query-among-options", "api-key", "unescaped"])
def test_only_the_password_of_a_url_is_masked(url, shown):
    assert mask_url(url) == shown


@pytest.mark.parametrize("text", ["redis://redis.example:6379/0", "http://user@host/v1",
                                  "not a url, has @ sign", "embedded: redis://127.0.0.1:6399/0"])
def test_text_without_a_password_is_unchanged(text):
    assert mask_url(text) == text


def test_every_url_in_a_message_is_masked_and_the_rest_kept():
    message = ("no batch 'b' in the run store at redis://:s3cret@h:1/0 (known: none); "
               "Elasticsearch https://elastic:pw2@es:9200 index 'docs'")
    assert mask_url(message) == ("no batch 'b' in the run store at redis://:***@h:1/0 "
                                 "(known: none); Elasticsearch https://elastic:***@es:9200 "
                                 "index 'docs'")


@pytest.mark.parametrize("url, moved", [
    ("redis://h:6379/0?password=s3cret", "redis://:s3cret@h:6379/0"),
    ("redis://h:6379/0?username=bob&password=s%40c&socket_timeout=5",
     "redis://bob:s%40c@h:6379/0?socket_timeout=5"),
    ("redis://:first@h:6379/0?password=second", "redis://:first@h:6379/0"),
    ("redis://h:6379/0", "redis://h:6379/0"),
    ("unix:///run/redis.sock?password=s3cret", "unix:///run/redis.sock?password=s3cret"),
], ids=["query", "user-and-options", "userinfo-wins", "none", "not-redis"])
def test_a_redis_password_in_the_query_moves_into_the_userinfo(url, moved):
    assert password_in_userinfo(url) == moved


def test_celery_reads_and_masks_the_redis_url_settings_hand_it():
    settings = Settings(redis_url="redis://h:6379/0?password=s3cret")
    # kombu 5.x raises TypeError on the query form itself: hence the move.
    connection = Connection(settings.effective_redis_url)
    assert connection.password == "s3cret"
    assert connection.as_uri() == "redis://:**@h:6379/0"
    assert settings.masked_redis_url == "redis://:***@h:6379/0"

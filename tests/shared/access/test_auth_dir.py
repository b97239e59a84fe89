"""A `rediss://` URL completed from an auth directory (shared/access/auth_dir.py): the role's
user, password and certificates, what the URL gives itself kept, and errors that name
the file and the fix. The files are written by hand here; tests that make them with
openssl are in tests/shared/access/test_tls.py."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from kombu.utils.url import parse_url

from shared.config import Settings
from shared.errors import ConfigError
from shared.access.auth_dir import AuthDir
from shared.access.urls import mask_url


@pytest.fixture
def auth(tmp_path) -> AuthDir:
    for user in ("workers", "producers"):
        (tmp_path / f"{user}.password").write_text(f"pw-of-{user}\n")
    return AuthDir(tmp_path)


def test_a_url_naming_only_the_host_gets_the_roles_user_password_and_certificates(auth):
    url = auth.login("rediss://redis-host:6379/0", "workers")
    parts = urlsplit(url)
    assert (parts.username, parts.password, parts.hostname) == ("workers", "pw-of-workers",
                                                                "redis-host")
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert query == {"ssl_cert_reqs": "required", "ssl_ca_certs": str(auth.ca),
                     "ssl_certfile": str(auth.cert("workers")),
                     "ssl_keyfile": str(auth.key("workers"))}
    # kombu (Celery's broker) reads the same user and TLS files from it
    kombu = parse_url(url)
    assert kombu["userid"] == "workers" and kombu["ssl"]["ssl_certfile"] == str(auth.cert("workers"))


def test_what_the_url_gives_itself_wins_over_the_directory(auth):
    url = auth.login("rediss://producers:own-pw@h:1/0?ssl_ca_certs=/etc/ca.pem", "workers")
    parts = urlsplit(url)
    assert (parts.username, parts.password) == ("producers", "own-pw")
    query = parse_qs(parts.query)
    assert query["ssl_ca_certs"] == ["/etc/ca.pem"]
    assert query["ssl_certfile"] == [str(auth.cert("producers"))]


def test_a_missing_password_file_is_named_with_where_to_get_it(auth):
    with pytest.raises(ConfigError, match="monitoring.password is missing") as caught:
        auth.login("rediss://h:1/0", "monitoring")
    assert "chordal redis-auth" in str(caught.value)


def test_a_plain_text_url_with_an_auth_directory_is_refused_naming_rediss(tmp_path):
    with pytest.raises(ValueError, match="must start with rediss://"):
        Settings(redis_url="redis://h:6379/0", redis_auth_dir=tmp_path)
    with pytest.raises(ValueError, match="CHORDAL_REDIS_TLS=true"):
        Settings(redis_auth_dir=tmp_path, redis_url=None)


def test_settings_log_in_as_the_role_and_the_masked_url_keeps_the_paths_not_the_password(auth):
    settings = Settings(redis_url="rediss://redis-host:6379/0", redis_auth_dir=auth.path)
    assert urlsplit(settings.effective_redis_url).username == "producers"
    workers = settings.as_role("workers")
    assert urlsplit(workers.effective_redis_url).password == "pw-of-workers"
    shown = workers.masked_redis_url
    assert "pw-of-workers" not in shown and shown.startswith("rediss://workers:***@redis-host")
    assert f"ssl_keyfile={auth.key('workers')}" in shown


def test_the_embedded_tls_redis_keeps_its_files_under_home(tmp_path):
    settings = Settings(home=tmp_path, redis_tls=True, redis_url=None, redis_port=6400)
    assert settings.embedded_redis_url == "rediss://127.0.0.1:6400/0"
    assert settings.redis_auth.path == tmp_path.resolve() / "tls"
    assert Settings(home=tmp_path, redis_url=None).redis_auth is None


def test_mask_url_hides_the_password_of_a_rediss_url_with_tls_options():
    url = ("rediss://workers:s3cr3t@10.0.0.2:6379/0?ssl_cert_reqs=required"
           "&ssl_ca_certs=/tls/ca.crt&ssl_certfile=/tls/workers.crt&ssl_keyfile=/tls/workers.key")
    assert mask_url(url) == url.replace("s3cr3t", "***")

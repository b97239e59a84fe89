"""Certificates made with the openssl command (shared/access/tls.py) and the auth directory
they go into (shared/access/auth_dir.py): a chain both sides verify, the hosts in the server's
certificate, private keys and passwords only their owner reads, and nothing made again
that is still good. Without openssl the error says how to get it."""

from __future__ import annotations

import shutil
import ssl
import stat
import subprocess

import pytest

from shared.errors import ConfigError
from shared.access.acl import USERS
from shared.access.auth_dir import AuthDir
from shared.access import tls


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.integration  # runs openssl
def test_an_auth_directory_holds_a_verifiable_chain_and_private_files(tmp_path):
    auth = tls.make_auth_dir(AuthDir(tmp_path / "tls"), hosts=("10.231.0.2", "redis"))
    names = subprocess.run(["openssl", "x509", "-in", str(auth.cert("redis")), "-noout",
                            "-ext", "subjectAltName"], capture_output=True, text=True).stdout
    assert "IP Address:10.231.0.2" in names and "DNS:redis" in names
    for user in USERS:
        verified = subprocess.run(["openssl", "verify", "-CAfile", str(auth.ca),
                                   str(auth.cert(user))], capture_output=True, text=True)
        assert verified.returncode == 0, verified.stderr
        assert mode(auth.key(user)) == mode(auth.password_path(user)) == 0o600
    assert mode(auth.path) == 0o700 and mode(auth.path / "ca.key") == 0o600
    # Python's ssl, as redis-py uses it, takes the CA and a client's key pair
    context = ssl.create_default_context(cafile=str(auth.ca))
    context.load_cert_chain(auth.cert("workers"), auth.key("workers"))


@pytest.mark.integration  # runs openssl
def test_making_it_again_keeps_passwords_and_good_certificates_and_adds_new_hosts(tmp_path):
    auth = tls.make_auth_dir(AuthDir(tmp_path), hosts=("127.0.0.1",))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    tls.make_auth_dir(auth, hosts=("127.0.0.1",))
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before
    tls.make_auth_dir(auth, hosts=("127.0.0.1", "10.231.0.9"))
    assert auth.cert("redis").read_bytes() != before["redis.crt"]
    assert auth.password("workers") == before["workers.password"].decode().strip()
    assert auth.ca.read_bytes() == before["ca.crt"]


def test_without_openssl_the_error_says_how_to_install_it(monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "openssl" else real_which(name))
    with pytest.raises(ConfigError, match="apt-get install openssl") as caught:
        tls.openssl()
    assert "CHORDAL_REDIS_AUTH_DIR" in str(caught.value)

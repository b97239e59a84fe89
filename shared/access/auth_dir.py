"""A directory that locks Redis down: TLS certificates, one ACL user and password per
role, and the ACL file of the server.

Consumes a directory path; produces the URL each role connects with, and the redis.conf
lines of the server. `make_auth_dir` (shared/access/tls.py, which has the `openssl` it
needs) makes one for the host names or addresses clients reach Redis by. The layout, as
`chordal redis-auth DIR` and `chordal up --tls` (under `CHORDAL_HOME/tls`) write it:

    ca.crt                       the CA both sides check each other's certificate against
    redis.crt, redis.key         the server's certificate (and the CA key, ca.key: keep
    users.acl                    it on the machine that makes certificates); the ACL
                                 file, passwords hashed (shared/access/acl.py)
    ROLE.crt, ROLE.key           a client certificate per user (workers, producers,
    ROLE.password                monitoring, owner) and its password (mode 0600)

A host needs only `ca.crt` and its role's three files. TLS is mutual
(`tls-auth-clients yes`): a client without a certificate from this CA is dropped before
it can try a password, so a leaked password alone does not open Redis to the network,
and guessing passwords needs a certificate first.

`login(url, role)` completes a `rediss://` URL from the directory: the role's user and
password unless the URL names a user (a URL's own password wins), and `ssl_cert_reqs`,
`ssl_ca_certs`, `ssl_certfile`, `ssl_keyfile` unless the URL gives them. kombu (Celery's
broker), Celery's result backend and redis-py all read these from the URL; Flower's
broker view needs them as `broker_use_ssl` too (shared/broker/app.py).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from shared.errors import ConfigError

DEFAULT_HOSTS = ("127.0.0.1", "localhost")


class AuthDir:
    """The files of one locked-down Redis (stack/tls.py `make_auth_dir` writes what is
    missing). `required` False (the embedded stack's own directory, made when it first
    starts): a URL is completed with what is there, so a client finds no stack instead
    of an error."""

    def __init__(self, path: Path | str, required: bool = True):
        self.path = Path(path)
        self.required = required

    @property
    def ca(self) -> Path:
        return self.path / "ca.crt"

    @property
    def acl_path(self) -> Path:
        return self.path / "users.acl"

    def cert(self, user: str) -> Path:
        return self.path / f"{user}.crt"

    def key(self, user: str) -> Path:
        return self.path / f"{user}.key"

    def password_path(self, user: str) -> Path:
        return self.path / f"{user}.password"

    def password(self, user: str) -> str:
        """The password of `user`; ConfigError naming the file when it is missing."""
        path = self.password_path(user)
        try:
            return path.read_text().strip()
        except OSError:
            raise ConfigError(
                f"no password for the Redis user {user!r}: {path} is missing. Copy it (with "
                f"ca.crt, {user}.crt and {user}.key) from the directory `chordal redis-auth` "
                "made, or point CHORDAL_REDIS_AUTH_DIR at that directory") from None

    def server_config(self, port: int) -> list[str]:
        """redis.conf lines: TLS only on `port` (no plain-text listener), client
        certificates required, the ACL file."""
        return [
            "port 0",
            f"tls-port {port}",
            f'tls-cert-file "{self.cert("redis")}"',
            f'tls-key-file "{self.key("redis")}"',
            f'tls-ca-cert-file "{self.ca}"',
            "tls-auth-clients yes",
            'tls-protocols "TLSv1.2 TLSv1.3"',
            f'aclfile "{self.acl_path}"',
        ]

    def url(self, host: str, port: int, user: str) -> str:
        """The full `rediss://` URL `user` connects to `host:port` with."""
        return self.login(f"rediss://{host}:{port}/0", user)

    def login(self, url: str, role: str) -> str:
        """`url` completed with the user, password and certificates (see above)."""
        parts = urlsplit(url)
        if parts.scheme != "rediss":
            raise ConfigError(
                f"CHORDAL_REDIS_AUTH_DIR ({self.path}) holds TLS certificates, so "
                "CHORDAL_REDIS_URL must start with rediss:// (TLS), not "
                f"{parts.scheme}://")
        userinfo, at, hostport = parts.netloc.rpartition("@")
        user, _, secret = userinfo.partition(":") if at else ("", "", "")  # secret: as quoted
        user = unquote(user) or role
        if not secret and (self.required or self.password_path(user).is_file()):
            secret = quote(self.password(user), safe="")
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        for name, value in (("ssl_cert_reqs", "required"), ("ssl_ca_certs", self.ca),
                            ("ssl_certfile", self.cert(user)),
                            ("ssl_keyfile", self.key(user))):
            query.setdefault(name, str(value))
        netloc = f"{quote(user, safe='')}{':' + secret if secret else ''}@{hostport}"
        return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/")))

"""Certificates for Redis over TLS, made with the `openssl` command.

Consumes a directory and the names clients reach the server by; produces, in it, PEM
files (keys mode 0600; a new directory 0700):

    ca.crt, ca.key           the certificate authority every party trusts (10 years)
    redis.crt, redis.key     the server's certificate, for the hosts given (IP addresses
                             and DNS names in its subjectAltName; 825 days)
    NAME.crt, NAME.key       one client certificate per name (a role: workers, ...)

Each `ensure_*` keeps what is there and still fits: a certificate is made again only
when it is missing, expires within `RENEW_DAYS`, was signed by another CA, or (the
server's) does not name every host asked for. EC P-256 keys: quick to make on a slow
machine, and every TLS library in the path (OpenSSL under redis-server, Python's ssl)
takes them.

`make_auth_dir` fills a redis_auth.AuthDir: these certificates, one per ACL user, a
password per user and the server's ACL file.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from shared.errors import ConfigError, StackError
from shared.access.acl import USERS, acl_file
from shared.access.auth_dir import DEFAULT_HOSTS, AuthDir

CA_DAYS = 3650
LEAF_DAYS = 825
RENEW_DAYS = 30
SERVER = "redis"
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def openssl() -> str:
    """Path of the `openssl` command; ConfigError naming the fix when there is none."""
    found = shutil.which("openssl")
    if found is None:
        raise ConfigError(
            "the `openssl` command is not installed, and Chordal makes its TLS certificates "
            "with it: install it (`apt-get install openssl`), or make the CA and "
            "certificates yourself and point CHORDAL_REDIS_AUTH_DIR at them")
    return found


def _run(*args: str) -> str:
    result = subprocess.run([openssl(), *args], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise StackError(f"openssl {args[0]} failed: {result.stderr.strip()[-500:]}")
    return result.stdout


def _private(path: Path) -> None:
    """Make `path` an empty file only its owner reads, before openssl writes a key into
    it (openssl keeps the mode of a file it overwrites): no moment it is readable."""
    path.touch(mode=0o600)
    path.chmod(0o600)


def _fits(cert: Path, ca: Path) -> bool:
    """`cert` exists, is signed by `ca` and is valid beyond RENEW_DAYS."""
    if not cert.is_file() or not ca.is_file():
        return False
    probe = subprocess.run(
        [openssl(), "verify", "-CAfile", str(ca), str(cert)], capture_output=True, timeout=60)
    alive = subprocess.run(
        [openssl(), "x509", "-in", str(cert), "-noout", "-checkend", str(RENEW_DAYS * 86400)],
        capture_output=True, timeout=60)
    return probe.returncode == 0 and alive.returncode == 0


def subject_alt_names(hosts: Iterable[str]) -> str:
    """`IP:127.0.0.1,DNS:redis`: each host as an IP address or a DNS name."""
    names = []
    for host in dict.fromkeys(h.strip() for h in hosts if h.strip()):
        try:
            names.append(f"IP:{ipaddress.ip_address(host.strip('[]'))}")
        except ValueError:
            names.append(f"DNS:{host}")
    if not names:
        raise ConfigError("a Redis server certificate needs at least one host name or "
                          "address its clients connect to (--host)")
    return ",".join(names)


def ensure_ca(directory: Path) -> Path:
    """`directory/ca.crt` (and its key), made unless it is there and valid; its path."""
    directory = _directory(directory)
    ca, key = directory / "ca.crt", directory / "ca.key"
    alive = ca.is_file() and key.is_file() and subprocess.run(
        [openssl(), "x509", "-in", str(ca), "-noout", "-checkend", str(RENEW_DAYS * 86400)],
        capture_output=True, timeout=60).returncode == 0
    if not alive:
        _private(key)
        _run("req", "-x509", *_KEY, "-keyout", str(key), "-out", str(ca),
             "-days", str(CA_DAYS), "-subj", "/CN=Chordal Redis CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return ca


def ensure_server(directory: Path, hosts: Iterable[str]) -> Path:
    """`directory/redis.crt` for `hosts`, signed by the CA; its path."""
    directory = _directory(directory)
    sans = subject_alt_names(hosts)
    cert, record = directory / f"{SERVER}.crt", directory / f"{SERVER}.hosts"
    wanted = set(sans.split(","))
    have = set(record.read_text().split(",")) if record.is_file() else set()
    if not (wanted <= have and _fits(cert, directory / "ca.crt")):
        _sign(directory, SERVER, "serverAuth", sans)
        record.write_text(sans)
    return cert


def ensure_client(directory: Path, name: str) -> Path:
    """`directory/NAME.crt` (CN=chordal-NAME), signed by the CA; its path."""
    directory = _directory(directory)
    cert = directory / f"{name}.crt"
    if not _fits(cert, directory / "ca.crt"):
        _sign(directory, name, "clientAuth", None)
    return cert


def _sign(directory: Path, name: str, usage: str, sans: str | None) -> None:
    key, csr, cert = (directory / f"{name}{ext}" for ext in (".key", ".csr", ".crt"))
    ext = directory / f"{name}.ext"
    lines = ["basicConstraints=critical,CA:FALSE",
             "keyUsage=critical,digitalSignature",
             f"extendedKeyUsage={usage}"]
    if sans:
        lines.append(f"subjectAltName={sans}")
    ext.write_text("\n".join(lines) + "\n")
    try:
        _private(key)
        _run("req", "-new", *_KEY, "-keyout", str(key), "-out", str(csr),
             "-subj", f"/CN=chordal-{name}")
        _run("x509", "-req", "-in", str(csr), "-CA", str(directory / "ca.crt"),
             "-CAkey", str(directory / "ca.key"), "-set_serial", f"0x{secrets.token_hex(16)}",
             "-days", str(LEAF_DAYS), "-extfile", str(ext), "-out", str(cert))
    finally:
        csr.unlink(missing_ok=True)
        ext.unlink(missing_ok=True)


def _directory(directory: Path) -> Path:
    """The directory, made private (0700) if it is new; an existing one keeps its mode
    (a deployment may open it to the user a container runs as)."""
    directory = Path(directory)
    if not directory.is_dir():
        directory.mkdir(parents=True, mode=0o700)
    return directory


def make_auth_dir(auth: AuthDir, hosts: Iterable[str] = DEFAULT_HOSTS) -> AuthDir:
    """Write what is missing in `auth`: the CA, the server's certificate for `hosts`, a
    certificate and a password per user, and the ACL file (always rewritten, so it
    follows shared/access/acl.py). Existing passwords and valid certificates stay."""
    auth.path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(auth.path / ".lock", "w") as lock:  # two `chordal up`s make one CA
        fcntl.flock(lock, fcntl.LOCK_EX)
        ensure_ca(auth.path)
        ensure_server(auth.path, hosts)
        passwords = {}
        for user in USERS:
            ensure_client(auth.path, user)
            passwords[user] = _ensure_password(auth, user)
        tmp = auth.acl_path.with_suffix(".tmp")
        tmp.write_text(acl_file(passwords))
        tmp.replace(auth.acl_path)
    return auth


def _ensure_password(auth: AuthDir, user: str) -> str:
    path = auth.password_path(user)
    try:  # O_EXCL: two processes making the directory at once agree on one password
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return auth.password(user)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    return auth.password(user)

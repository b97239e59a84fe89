"""`chordal redis-auth DIR --host HOST`: what a Redis shared by several machines needs to
speak TLS only and let in only Chordal's ACL users, one per role.

Consumes a directory and the names or addresses clients reach Redis by; produces, in
the directory (shared/access/auth_dir.py: kept when run again, so passwords and valid
certificates stay), the CA, the server's certificate and key, a certificate, key and
password per user, and the ACL file `users.acl` (passwords hashed); prints how to start
the server and which files each machine needs. No password is printed: each is in its
`ROLE.password` file (mode 0600).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from shared.access.acl import OWNER, ROLE_NAMES
from shared.access.auth_dir import AuthDir
from shared.access import tls

out = Console(soft_wrap=True, highlight=False)


def server_argv(auth: AuthDir, port: int) -> list[str]:
    """The server's redis.conf lines as `redis-server` arguments (`--port`, `0`, ...)."""
    argv = []
    for line in auth.server_config(port):
        name, _, value = line.partition(" ")
        argv += [f"--{name}", value.strip('"')]
    return argv


def redis_auth(directory: Path = typer.Argument(..., help="Where to write (made 0700 if new)."),
               hosts: list[str] = typer.Option(..., "--host", help="A name or address clients "
                                               "reach Redis by (the server's certificate "
                                               "names each); repeat for several."),
               port: int = typer.Option(6379, "--port", help="The TLS port Redis listens on.")):
    """Make the CA, certificates, ACL users and passwords of a locked-down Redis."""
    auth = tls.make_auth_dir(AuthDir(directory.resolve()), hosts=hosts)
    d = escape(str(auth.path))
    out.print(f"wrote {d}: ca.crt (+ ca.key: keep it here), redis.crt/.key for "
              f"{', '.join(hosts)}, users.acl, and ROLE.crt/.key/.password for "
              f"{', '.join((*ROLE_NAMES, OWNER))}")
    out.print("\nOn the Redis host (with these files at the same path):")
    flags = escape(shlex.join(server_argv(auth, port)))
    out.print(f"  redis-server --appendonly yes --maxmemory-policy noeviction --bind 0.0.0.0 "
              f"{flags}")
    out.print("\nOn each Chordal machine: copy ca.crt and the three ROLE files of its role "
              "(workers: `chordal worker`; producers: the API, `ask`, `enqueue`, ...; "
              "monitoring: `chordal flower`) into one directory, then")
    out.print(f"  export CHORDAL_REDIS_URL=rediss://{escape(hosts[0])}:{port}/0 "
              "CHORDAL_REDIS_AUTH_DIR=/path/to/that/directory")
    out.print("Each command logs in as its role's user; the passwords stay in the "
              "ROLE.password files.")

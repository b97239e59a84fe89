"""A plan's answer template renders in a child process bounded in time and memory.

The template is user input. The sandbox (sandbox.py) refuses Python internals and the
obvious bombs, but nothing inside one process can stop every loop (`{% for a in 'x' *
100000 %}` never touches `range`) or every allocation (`'x'|center(10**9)`, `~` doubling,
`'%0999999999d'|format(1)`), and Celery cannot stop a thread. So a finalizer hands the
template and its values to a render process of its own (shared/isolation.py: a `render`
child) and waits at most the render budget (plus `GRACE_S`):

- the child runs under an address-space limit (`CHORDAL_RENDER_MEMORY_MB` beyond what it
  uses at rest): an allocation past it is a `MemoryError` the child reports, and it then
  exits, so the next render gets a fresh one;
- a child that has not answered when the budget is up is killed (SIGKILL, by its PID)
  and reaped; the finalizer thread is free at once and the next render starts another;
- the answer text is at most `MAX_ANSWER_CHARS`;
- should the worker die mid-render, the child ends itself (SIGALRM) shortly after the
  budget, and at its next read once the socket is closed.

Each failure is a `TemplateError`: the plan's template counts as failed, the answer says
why and falls back to the domain template. Children are kept between renders (one per
render at a time: a finalizer with two threads has at most two) and stopped by their
PIDs when the worker exits. Jobs and replies cross as JSON (never pickle: the child runs
user input); cost per answer: one round trip, about 0.4 ms (docs/plans.md), and the
template's compilation unless the child compiled it for an earlier answer (it keeps the
last `COMPILED_KEPT`). `handle` is what the render child runs for each job.
"""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass
from decimal import Decimal
from types import CodeType

from jinja2 import TemplateError

from shared.isolation import GRACE_S, STARTUP_S, ChildFailed, Pool

from .cited import CitedDecimal, CitedList, CitedStr
from .environment import environment
from .redact import mask_identifiers
from .sandbox import RENDER_BUDGET_S

__all__ = ["GRACE_S", "MAX_ANSWER_CHARS", "RENDER_MEMORY_MB", "Job", "RenderFailed",
           "Renderer", "handle", "renderer"]

RENDER_MEMORY_MB = 256
"""Default megabytes a render may allocate (`CHORDAL_RENDER_MEMORY_MB`)."""
MAX_ANSWER_CHARS = 1_000_000
"""Longest answer text a plan's template may produce."""
COMPILED_KEPT = 32
"""Templates a render child keeps compiled: a template asked again (the plan of a
batch, a plan given as a file) is compiled once per child, not once per answer."""


class RenderFailed(TemplateError):
    """The plan's template could not render in its process: too long, too much memory,
    or the process died."""


@dataclass(frozen=True)
class Job:
    template: str
    values: dict
    medical: bool
    budget_s: float
    kind = "render"

    def wire(self) -> bytes:
        return json.dumps({"kind": self.kind, "template": self.template,
                           "values": _encode(self.values), "medical": self.medical,
                           "budget_s": self.budget_s}).encode()

    @classmethod
    def read(cls, d: dict) -> Job:
        return cls(d["template"], _decode(d["values"]), d["medical"], d["budget_s"])


def _encode(v: object) -> object:
    """A template value as JSON: cited values tagged with their footnotes (nothing is
    pickled across the process boundary: the child runs user input)."""
    if isinstance(v, CitedStr):
        return {"$": "str", "v": str(v), "f": list(v.footnotes), "q": v.quoted}
    if isinstance(v, CitedDecimal):
        return {"$": "dec", "v": str(v), "f": list(v.footnotes), "s": v.shown}
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
    if tag == "dec":
        value.shown = v.get("s")
    return value


@functools.lru_cache(maxsize=COMPILED_KEPT)
def _compiled(template: str, medical: bool) -> CodeType:
    """The Python code Jinja compiles `template` to in a render's environment (the same
    for every budget); a TemplateSyntaxError when it does not parse."""
    return environment(mask_identifiers if medical else None).compile(template)


def _render(job: Job) -> str:
    # each render builds its own environment (its budget starts with it); the template's
    # code is compiled once per child while kept
    env = environment(mask_identifiers if job.medical else None, budget_s=job.budget_s)
    code = _compiled(job.template, job.medical)
    return env.template_class.from_code(env, code, env.make_globals(None)).render(**job.values)


def handle(wired: dict) -> tuple[bool, str]:
    """The render child's work on one job: (True, the answer text) or (False, why not)."""
    try:
        text = _render(Job.read(wired))
    except TemplateError as exc:
        return False, str(exc)
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
        # user input: a template that divides by zero or recurses forever is its fault
        return False, f"{type(exc).__name__}: {exc}"
    if len(text) > MAX_ANSWER_CHARS:
        return False, f"the answer is {len(text):,} characters; at most {MAX_ANSWER_CHARS:,}"
    return True, text


class Renderer(Pool):
    """Render processes for one worker: `render` takes an idle one (or starts one), and
    kills it when the template overruns."""

    def __init__(self, memory_mb: int = RENDER_MEMORY_MB):
        super().__init__("render", memory_mb)

    def render(self, template: str, values: dict, medical: bool = False,
               budget_s: float = RENDER_BUDGET_S) -> str:
        """`template` rendered with `values`; RenderFailed (a TemplateError) when it fails."""
        try:
            reply = self.ask(Job(template, values, medical, budget_s))
        except ChildFailed as e:
            raise RenderFailed(
                f"the template ran past its {budget_s:g}s render budget "
                "(CHORDAL_RENDER_BUDGET_S); its render process was stopped"
                if e.how == "overran" else
                f"the render process did not start within {STARTUP_S:g}s" if e.how == "no_start"
                else f"the render process ended (exit code {e.exit_code})") from None
        if reply.get("memory"):
            raise RenderFailed(f"the template needed more than its {self.memory_mb} MB "
                               "(CHORDAL_RENDER_MEMORY_MB)")
        if not reply["ok"]:
            raise RenderFailed(reply["value"])
        return reply["value"]


_shared: dict[int, Renderer] = {}
_shared_lock = threading.Lock()


def renderer(memory_mb: int = RENDER_MEMORY_MB) -> Renderer:
    """This process's Renderer for `memory_mb` (one per setting, made on first use)."""
    with _shared_lock:
        if memory_mb not in _shared:
            _shared[memory_mb] = Renderer(memory_mb)
        return _shared[memory_mb]

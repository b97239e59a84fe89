"""Compile a plan's step DAG for dependency-driven dispatch (used by the workers).

How a plan runs, fan-out and join (workers/canvas.py sends, shared/dispatch.py claims):

    planner ── sends every root step (those that read no variable)
      └─ each step task, once its StepResult is stored, sends every dependent step whose
         inputs are now all stored; the task that stores the plan's last result sends
         the finalizer

So a step starts as soon as the steps it reads have finished, whatever the shape of the
DAG: independent branches of different lengths never wait for each other, and a join
(a COMPUTE over two EXTRACTs, or a join in the middle of the plan followed by more
steps) starts the moment its last input is stored. Of two inputs finishing together,
both may see the join ready: a claim in the run store lets one dispatch it. The
finalizer is sent once every step of the plan has a stored result, which the run store
counts per step (first write wins), so a step that ran twice (redelivered after a crash)
is counted once; a claim lets one task send it.

Why not Celery's chord: its counter lives beside the run store and is advanced by each
run of a part; a Redis restarted from its AOF mid-batch, with acknowledgements lost and
tasks run again, left chords that never called their finalizer.

Plans are checked before they are compiled (acyclic, every reference bound).
"""

from __future__ import annotations

from shared.models import Plan
from shared.plan import graph


def dependencies(plan: Plan) -> dict[str, set[str]]:
    """step id -> ids of the steps whose outputs it reads (the graph of plan/graph.py,
    by id: a checked plan has unique ids)."""
    ids = [s.id for s in plan.steps]
    return {ids[i]: {ids[d] for d in deps} for i, deps in enumerate(graph.dependencies(plan))}


def dependents(plan: Plan) -> dict[str, list[str]]:
    """step id -> ids of the steps that read its output, in plan order."""
    out: dict[str, list[str]] = {s.id: [] for s in plan.steps}
    for step_id, deps in dependencies(plan).items():
        for d in deps:
            out[d].append(step_id)
    order = {s.id: i for i, s in enumerate(plan.steps)}
    return {k: sorted(v, key=order.__getitem__) for k, v in out.items()}


def roots(plan: Plan) -> list[str]:
    """Steps that read no variable: what the planner sends."""
    return [step_id for step_id, deps in dependencies(plan).items() if not deps]


def ready_after(plan: Plan, finished: str, stored: set[str]) -> list[str]:
    """Dependents of `finished` whose inputs are all in `stored` (step ids with results)."""
    deps = dependencies(plan)
    return [d for d in dependents(plan)[finished] if deps[d] <= stored]

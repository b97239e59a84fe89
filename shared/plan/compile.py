"""Compile a plan's step DAG for dependency-driven dispatch (used by the workers).

How a plan becomes one Celery canvas:

    chord( group(root steps) , finalize )       root steps: those that read no variable
      └─ each step task, once its StepResult is stored, adds every dependent step whose
         inputs are now all stored to the same chord (`Task.add_to_chord`)

So a step starts as soon as the steps it reads have finished, whatever the shape of the
DAG: independent branches of different lengths never wait for each other, and a join
(a COMPUTE over two EXTRACTs, or a join in the middle of the plan followed by more
steps) starts the moment its last input is stored. `add_to_chord` grows the chord's
expected size before the adding task reports, so the chord cannot complete early; the
finalizer runs once, when every step of the plan has reported. Of two inputs finishing
together, both may see the join ready: a claim in the run store lets one dispatch it.

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
    """Steps that read no variable: the chord's header."""
    return [step_id for step_id, deps in dependencies(plan).items() if not deps]


def ready_after(plan: Plan, finished: str, stored: set[str]) -> list[str]:
    """Dependents of `finished` whose inputs are all in `stored` (step ids with results)."""
    deps = dependencies(plan)
    return [d for d in dependents(plan)[finished] if deps[d] <= stored]

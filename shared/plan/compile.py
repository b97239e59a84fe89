"""Compile a plan's step DAG into stages of branches (consumed by workers/planner.py).

A *branch* is a list of step ids run one after another (a Celery chain); a *stage* is
a list of branches run in parallel (a group). The planner turns one stage into
`chord(group(chains), finalizer)`; several stages into chords nested one in another.

A step joins the branch of its inputs when they all come from one branch of the
latest stage they occur in; a step whose inputs come from several branches of that
stage (a join) starts the next stage. So independent GET→EXTRACT branches run side by
side, and a COMPUTE over both runs once both have finished.

Plans are checked before they are compiled (every reference points at an earlier step).
"""

from __future__ import annotations

from shared.models import Plan

Schedule = list[list[list[str]]]
"""stages → branches → step ids"""


def dependencies(plan: Plan) -> dict[str, set[str]]:
    """step id -> ids of the steps whose outputs it reads."""
    producers = plan.producers()
    return {s.id: {producers[v] for v in s.references() if v in producers} for s in plan.steps}


def compile_plan(plan: Plan) -> Schedule:
    deps = dependencies(plan)
    stages: Schedule = []
    where: dict[str, tuple[int, int]] = {}  # step id -> (stage, branch)
    for step in plan.steps:
        inputs = deps[step.id]
        if not inputs:
            stage = 0
            branch = None
        else:
            stage = max(where[d][0] for d in inputs)
            branches = {where[d][1] for d in inputs if where[d][0] == stage}
            branch = branches.pop() if len(branches) == 1 else None
            if branch is None:
                stage += 1
        while len(stages) <= stage:
            stages.append([])
        if branch is None:
            stages[stage].append([])
            branch = len(stages[stage]) - 1
        stages[stage][branch].append(step.id)
        where[step.id] = (stage, branch)
    return [s for s in stages if s]

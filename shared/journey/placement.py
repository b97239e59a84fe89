"""Place a planner reply's steps on a query's dispatch graph: steps of a `Plan` in (one
at a time while the reply streams, or all of the final plan), `GraphStep`s out for the
steps nothing in the graph computes yet, and the graph id each step runs as.

A step's *key* is what it computes whatever its names (`step_key`): its operation and
arguments, each variable it reads replaced by the key of the step that binds it. A step
whose key is already in the graph (written by an earlier reply of this planner, or by a
planner that was killed mid-stream) runs as that graph step: its result is reused and
nothing is sent twice. A new step keeps its id unless the graph already has a step of
that id (an earlier reply's E2 that asked for something else); it then becomes `E2_2`.
A renamed step keeps the variable it binds, so the plan's references and answer
template still read it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from shared.models import GraphStep, Plan, Step, StepTask
from shared.models.plan import VAR_RE


def step_key(step: Step, keys: Mapping[str, str]) -> str:
    """The key of `step`; `keys`: variable -> key of the step that binds it."""
    def resolved(value: object) -> object:
        if isinstance(value, str):
            return VAR_RE.sub(lambda m: "$" + keys.get(m[1], m[1]), value)
        if isinstance(value, list):
            return [resolved(v) for v in value]
        return value
    fields = step.model_dump(mode="json", exclude={"id", "output_var"})
    canonical = json.dumps({k: resolved(v) for k, v in fields.items()}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class Placement:
    """One reply's steps, in plan order, mapped onto a graph (`graph`: its steps so far)."""

    def __init__(self, query_id: str, graph: Mapping[str, GraphStep], attempt: int = 1,
                 reply_started_at: float | None = None):
        self.query_id, self.attempt, self.reply_started_at = query_id, attempt, reply_started_at
        self.graph = dict(graph)
        self._by_key: dict[str, list[str]] = {}
        for graph_id, step in graph.items():
            self._by_key.setdefault(step.key, []).append(graph_id)
        self._ids: dict[str, str] = {}   # this reply's variable -> graph id
        self._keys: dict[str, str] = {}  # this reply's variable -> key
        self._used: set[str] = set()

    def place(self, step: Step) -> tuple[str, GraphStep | None]:
        """The graph id `step` runs as, and the GraphStep to add (None: the graph has a
        step computing the same). Every variable `step` reads must be placed already."""
        key = step_key(step, self._keys)
        graph_id = next((g for g in self._by_key.get(key, ()) if g not in self._used), None)
        added = None
        if graph_id is None:
            graph_id = self._free_id(step.id)
            task = StepTask(query_id=self.query_id, step=_renamed(step, graph_id),
                            inputs={v: self._ids[v] for v in step.references() if v in self._ids})
            added = GraphStep(task=task, key=key, attempt=self.attempt,
                              reply_started_at=self.reply_started_at)
            self.graph[graph_id] = added
            self._by_key.setdefault(key, []).append(graph_id)
        self._used.add(graph_id)
        self._ids[step.var], self._keys[step.var] = graph_id, key
        return graph_id, added

    def place_plan(self, plan: Plan) -> tuple[Plan, list[GraphStep]]:
        """A checked plan (every step reads earlier ones) with its step ids renamed to the
        graph ids they run as, and the GraphSteps to add."""
        steps, added = [], []
        for step in plan.steps:
            graph_id, new = self.place(step)
            steps.append(step if graph_id == step.id else _renamed(step, graph_id))
            added += [new] if new else []
        return plan.model_copy(update={"steps": steps}), added

    def _free_id(self, step_id: str) -> str:
        if step_id not in self.graph:
            return step_id
        n = 2
        while f"{step_id[:28]}_{n}" in self.graph:
            n += 1
        return f"{step_id[:28]}_{n}"


def _renamed(step: Step, graph_id: str) -> Step:
    """`step` as graph step `graph_id`, still binding its own variable."""
    return step.model_copy(update={"id": graph_id, "output_var": f"${step.var}"})

"""The plan drawn as a graph: consumes a `Plan` and each step's status; produces boxes
and edges placed for an SVG (producers/api/pages/html/query_live.html draws them).

A step sits in the column of its depth (a step reading nothing is in column 0, one
reading a column-n step in column n+1), in plan order down the column; each edge runs
from the step that binds a variable to each step that reads it. Text is placed by the
template and escaped there; this module only computes numbers and ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.models import Plan
from shared.plan.graph import dependencies, topological_order

NODE_W, NODE_H = 200, 62
GAP_X, GAP_Y, PAD = 56, 18, 8
ACTION_CHARS = 28
"""Characters of an action_id a box shows (the whole id is its tooltip)."""


@dataclass
class Node:
    step_id: str
    operation: str
    action_id: str
    status: str
    x: int
    y: int

    @property
    def short_action_id(self) -> str:
        a = self.action_id
        return a if len(a) <= ACTION_CHARS else "…" + a[-(ACTION_CHARS - 1):]


@dataclass
class Edge:
    source: str
    target: str
    path: str
    """SVG path data: a curve from the right side of one box to the left of the other."""


@dataclass
class Graph:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int
    node_w: int = NODE_W
    node_h: int = NODE_H


def _columns(plan: Plan, deps: list[list[int]]) -> list[int]:
    """Each step's column (by position): 0 without inputs, else one more than its deepest
    input's. `deps` is `dependencies(plan)`; in a plan whose steps read each other in a
    cycle (never a checked one) the steps go in written order and a read of a step not
    placed yet is left out."""
    order = topological_order(plan) or range(len(plan.steps))
    column: dict[int, int] = {}
    for index in order:
        column[index] = 1 + max((column[d] for d in deps[index] if d in column), default=-1)
    return [column[index] for index in range(len(plan.steps))]


def depths(plan: Plan) -> dict[str, int]:
    """Step id -> its column (see `_columns`)."""
    return {s.id: c for s, c in zip(plan.steps, _columns(plan, dependencies(plan)))}


def plan_graph(plan: Plan, statuses: dict[str, str], action_ids: dict[str, str]) -> Graph:
    """Boxes and edges of `plan`; `statuses` and `action_ids` by step id."""
    deps = dependencies(plan)
    columns, rows, nodes = _columns(plan, deps), {}, {}
    for s, column in zip(plan.steps, columns):
        row = rows.get(column, 0)
        rows[column] = row + 1
        nodes[s.id] = Node(s.id, s.operation, action_ids.get(s.id, s.id),
                           statuses.get(s.id, "waiting"),
                           PAD + column * (NODE_W + GAP_X), PAD + row * (NODE_H + GAP_Y))
    edges = []
    for step, sources in zip(plan.steps, deps):
        for source, target in ((plan.steps[d].id, step.id) for d in sources):
            if source == target:
                continue
            a, b = nodes[source], nodes[target]
            x1, y1, x2, y2 = a.x + NODE_W, a.y + NODE_H // 2, b.x, b.y + NODE_H // 2
            mid = (x1 + x2) // 2
            edges.append(Edge(source, target, f"M{x1} {y1} C{mid} {y1} {mid} {y2} {x2 - 6} {y2}"))
    width = PAD * 2 + (max(columns, default=0) + 1) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + max(rows.values(), default=1) * (NODE_H + GAP_Y) - GAP_Y
    return Graph(list(nodes.values()), edges, width, height)

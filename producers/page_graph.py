"""The plan drawn as a graph: consumes a `Plan` and each step's status; produces boxes
and edges placed for an SVG (producers/templates/query_live.html draws them).

A step sits in the column of its depth (a step reading nothing is in column 0, one
reading a column-n step in column n+1), in plan order down the column; each edge runs
from the step that binds a variable to each step that reads it. Text is placed by the
template and escaped there; this module only computes numbers and ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.models import Plan

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


def reads(plan: Plan) -> dict[str, list[str]]:
    """Step id -> the ids of the steps whose variables it reads."""
    producers = plan.producers()
    return {s.id: list(dict.fromkeys(producers[v] for v in s.references()
                                     if v in producers and producers[v] != s.id))
            for s in plan.steps}


def depths(plan: Plan) -> dict[str, int]:
    """Step id -> its column: 0 without inputs, else one more than its deepest input's."""
    inputs, depth = reads(plan), {}

    def of(step_id: str, seen: frozenset[str]) -> int:
        if step_id not in depth:
            parents = [p for p in inputs.get(step_id, []) if p not in seen]
            depth[step_id] = 1 + max((of(p, seen | {p}) for p in parents), default=-1)
        return depth[step_id]

    for s in plan.steps:
        of(s.id, frozenset({s.id}))
    return depth


def plan_graph(plan: Plan, statuses: dict[str, str], action_ids: dict[str, str]) -> Graph:
    """Boxes and edges of `plan`; `statuses` and `action_ids` by step id."""
    depth, rows, nodes = depths(plan), {}, {}
    for s in plan.steps:
        column = depth[s.id]
        row = rows.get(column, 0)
        rows[column] = row + 1
        nodes[s.id] = Node(s.id, s.operation, action_ids.get(s.id, s.id),
                           statuses.get(s.id, "waiting"),
                           PAD + column * (NODE_W + GAP_X), PAD + row * (NODE_H + GAP_Y))
    edges = []
    for target, sources in reads(plan).items():
        for source in sources:
            a, b = nodes[source], nodes[target]
            x1, y1, x2, y2 = a.x + NODE_W, a.y + NODE_H // 2, b.x, b.y + NODE_H // 2
            mid = (x1 + x2) // 2
            edges.append(Edge(source, target, f"M{x1} {y1} C{mid} {y1} {mid} {y2} {x2 - 6} {y2}"))
    width = PAD * 2 + (max(depth.values(), default=0) + 1) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + max(rows.values(), default=1) * (NODE_H + GAP_Y) - GAP_Y
    return Graph(list(nodes.values()), edges, width, height)

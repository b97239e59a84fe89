"""The step dependency graph of a plan: consumes a `Plan` (checked or not), produces which
steps read which, the cycles among them, and an order that runs every step after the
steps it reads.

Steps are named by their position in `plan.steps`, so that a plan with duplicate ids
still has a graph. A variable bound by several steps (a duplicate_variable) belongs to
the first; a variable no step binds adds no edge. Nothing here recurses, so a plan of
any length is safe.
"""

from __future__ import annotations

import heapq

from shared.models import Plan


def binders(plan: Plan) -> dict[str, int]:
    """Bare variable name -> position of the first step that binds it."""
    found: dict[str, int] = {}
    for index, step in enumerate(plan.steps):
        found.setdefault(step.var, index)
    return found


def dependencies(plan: Plan) -> list[list[int]]:
    """For each step (by position), the positions of the steps whose outputs it reads."""
    bound = binders(plan)
    return [list(dict.fromkeys(bound[v] for v in step.references() if v in bound))
            for step in plan.steps]


def topological_order(plan: Plan) -> list[int] | None:
    """Positions in an order where each step follows those it reads, as close to the
    written order as possible (the written order itself when it already is one); None
    when steps read each other in a cycle."""
    order, _ = _kahn(dependencies(plan))
    return order if len(order) == len(plan.steps) else None


def find_cycles(plan: Plan) -> list[list[int]]:
    """Each cycle once, as positions where every step reads the next and the last reads
    the first (a step reading its own output is a cycle of one)."""
    deps = dependencies(plan)
    _, left = _kahn(deps)  # steps in a cycle, or downstream of one
    cycles: list[list[int]] = []
    settled: set[int] = set()
    for start in sorted(left):
        path: list[int] = []
        seen: dict[int, int] = {}
        node = start
        while node not in settled and node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = next(d for d in deps[node] if d in left)
        if node in seen:
            cycles.append(path[seen[node]:])
        settled.update(path)
    return cycles


def _kahn(deps: list[list[int]]) -> tuple[list[int], set[int]]:
    waiting = [len(d) for d in deps]
    readers: list[list[int]] = [[] for _ in deps]
    for index, ds in enumerate(deps):
        for d in ds:
            readers[d].append(index)
    order: list[int] = []
    ready = [i for i, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    done: set[int] = set()
    while ready:
        index = heapq.heappop(ready)  # the earliest written step that can run: stable order
        order.append(index)
        done.add(index)
        for reader in readers[index]:
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heapq.heappush(ready, reader)
    return order, set(range(len(deps))) - done

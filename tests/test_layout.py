"""The house's shape holds: no folder of the project imports a folder that imports it
back, and `shared/` imports neither `workers/` nor `producers/` (docs/development.md,
"Layout"). Read from the code's own imports (ast), so a move that brings a loop back
fails here, naming the imports that close it."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "workers", "producers")


def room(module: str) -> str | None:
    """The folder a module lives in, one level below a top package (`shared.stores`);
    a loose module is a room of its own (`shared.config`); None outside the project."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    if len(parts) == 1:
        return parts[0]
    return ".".join(parts[:2])


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def exists(module: str) -> bool:
    base = ROOT.joinpath(*module.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports() -> dict[tuple[str, str], list[str]]:
    """(room, room) -> the imports that draw that arrow, as `file -> module`."""
    arrows: dict[tuple[str, str], list[str]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = room(module_of(path))
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    named = [f"{node.module}.{a.name}" for a in node.names]
                    targets = [m for m in named if exists(m)] or [node.module]
                elif isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                else:
                    continue
                for target in targets:
                    if (to := room(target)) and to != source and exists(target):
                        arrows[(source, to)].append(f"{path.relative_to(ROOT)} -> {target}")
    return arrows


def loops(arrows: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one room (Tarjan)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for a, b in arrows:
        edges[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def test_no_folder_imports_a_folder_that_imports_it_back():
    arrows = imports()
    described = [
        " <-> ".join(group) + "".join(
            f"\n  {a} -> {b}: {'; '.join(arrows[(a, b)][:3])}"
            for a in group for b in group if (a, b) in arrows)
        for group in loops(arrows)]
    assert not described, "import loops between folders:\n" + "\n".join(described)


def test_shared_imports_neither_the_workers_nor_the_producers():
    upward = [why for (a, b), whys in imports().items() for why in whys
              if a.startswith("shared") and b.split(".")[0] in ("workers", "producers")]
    assert not upward, "shared/ imports what stands above it:\n" + "\n".join(upward)


def test_the_loop_finder_finds_a_loop():
    arrows = {("shared.a", "shared.b"): ["x"], ("shared.b", "shared.c"): ["y"],
              ("shared.c", "shared.a"): ["z"], ("shared.c", "shared.d"): ["w"]}
    assert loops(arrows) == [["shared.a", "shared.b", "shared.c"]]

"""No import cycle between modules of migrate/, function-level imports included (issue 41): the grimp graph
import-linter builds, its strongly connected components by Tarjan's algorithm.  ``python
tests/test_import_cycles.py`` prints them."""

from __future__ import annotations

import sys

import pytest

grimp = pytest.importorskip("grimp") if __name__ != "__main__" else __import__("grimp")


def import_cycles(package: str = "migrate") -> tuple[int, int, list[list[str]]]:
    """(modules, import edges, every cycle: a strongly connected component of more than one module)."""
    graph = grimp.build_graph(package, include_external_packages=False)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in edges:  # iterative Tarjan: (module, its next edge) frames
        if root in index:
            continue
        frames = [(root, 0)]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while frames:
            v, k = frames.pop()
            if k < len(edges[v]):
                frames.append((v, k + 1))
                w = edges[v][k]
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    frames.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if frames:
                parent = frames[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return len(edges), sum(map(len, edges.values())), cycles


def test_no_import_cycle_between_modules():
    _, _, cycles = import_cycles()
    assert cycles == [], "\n".join(", ".join(c) for c in cycles)


if __name__ == "__main__":
    modules, n_edges, found = import_cycles()
    print(f"{modules} modules, {n_edges} import edges")
    for c in found:
        print(f"cycle ({len(c)} modules): " + ", ".join(c))
    print(f"{len(found)} import cycles")
    sys.exit(1 if found else 0)

"""Graph-cache inventory: every host function that looks up or creates a cached MPSGraph
(rules/graph_cache.yaml), with the operator overloads whose MPS route reaches it through
same-tree calls; and how the inventory changed between two trees."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from migrate.tables import load_table


@dataclass(frozen=True)
class Site:
    function: str
    where: str  # path:line
    overloads: tuple[str, ...]


def inventory(ix) -> list[Site]:
    calls = frozenset(load_table("graph_cache.yaml")["sites"])
    sites = {
        name: fs[0] for name, fs in ix.functions.items() if name not in calls and any(f.identifiers & calls for f in fs)
    }  # not the cache's own implementation
    reached: dict[str, set[str]] = defaultdict(set)
    neutral = ix.markers.get("neutral", frozenset())
    for overload, route in ix.routes.items():
        starts = [route.kernel] if route.kernel else []
        if route.kernel and route.impl != "undefined" and route.kernel not in ix.functions:
            starts = [r.function for s in ix.stubs_of_shared_kernel(route.kernel) for r in ix.registrations.get(s, ())]
        seen, todo = set(), [s for s in starts if s]
        while todo:
            name = todo.pop()
            if name in seen or name not in ix.functions or name in neutral:
                continue
            seen.add(name)
            if name in sites:
                reached[name].add(overload)
            for f in ix.functions[name]:
                todo.extend(c for c in f.calls if c not in seen)
    out = [Site(name, f"{f.path}:{f.span.line}", tuple(sorted(reached.get(name, ())))) for name, f in sites.items()]
    return sorted(out, key=lambda s: (-len(s.overloads), s.where))


def to_json(sites: list[Site]) -> list[dict]:
    return [{"function": s.function, "where": s.where, "overloads": list(s.overloads)} for s in sites]


def render(sites: list[Site], fmt: str = "text") -> str:
    n_ops = len({o for s in sites for o in s.overloads})
    if fmt == "markdown":
        rows = ["| site | where | overloads | examples |", "|---|---|---:|---|"]
        rows += [f"| `{s.function}` | `{s.where}` | {len(s.overloads)} | {', '.join(s.overloads[:4])} |" for s in sites]
        return "\n".join(rows) + f"\n\n{len(sites)} graph-cache sites, reached by {n_ops} overloads.\n"
    lines = [f"{len(s.overloads):5d}  {s.function}  {s.where}  {', '.join(s.overloads[:4])}" for s in sites]
    return "\n".join(lines) + f"\n{len(sites)} graph-cache sites, reached by {n_ops} overloads\n"


def render_change(before: list[Site], after: list[Site]) -> str:
    old = {s.function: s for s in before}
    new = {s.function: s for s in after}
    lines = [f"graph-cache sites: {len(old)} -> {len(new)}"]
    lines += [
        f"  removed  {n}  ({old[n].where}, {len(old[n].overloads)} overloads)" for n in sorted(set(old) - set(new))
    ]
    lines += [
        f"  added    {n}  ({new[n].where}, {len(new[n].overloads)} overloads)" for n in sorted(set(new) - set(old))
    ]
    for n in sorted(set(old) & set(new)):
        gone = sorted(set(old[n].overloads) - set(new[n].overloads))
        came = sorted(set(new[n].overloads) - set(old[n].overloads))
        if gone or came:
            lines.append(
                f"  changed  {n}: {len(old[n].overloads)} -> {len(new[n].overloads)} overloads"
                + (f"; left: {', '.join(gone[:6])}" if gone else "")
                + (f"; new: {', '.join(came[:6])}" if came else "")
            )
    return "\n".join(lines) + "\n"

"""MPS001: some overloads of a family use native Metal, others still MPSGraph."""
from migrate.index import is_shared

GRAPH = ("mpsgraph", "mixed")


def check(ix, rule):
    for family, entries in ix.families.items():
        routes = [(e, ix.routes[e.overload_name]) for e in entries]
        migrated = [e.overload_name for e, r in routes if r.impl == "metal"]
        if not migrated:
            continue
        for e, r in routes:
            line = ix.mps_line(e)
            if r.via != "explicit" or r.impl not in GRAPH or line is None or is_shared(line):
                continue
            yield rule.finding(line.span, overload=e.overload_name, kernel=r.kernel,
                               migrated=", ".join(migrated), family=family,
                               fix=ix.fixes.route_to_shared(e, line))

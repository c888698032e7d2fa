"""MPS002: the migration inventory -- overloads routed to MPSGraph code."""
from migrate.index import is_shared


def check(ix, rule):
    for e in ix.tree.yaml.entries:
        r = ix.routes[e.overload_name]
        line = ix.mps_line(e)
        if r.via == "explicit" and r.impl in ("mpsgraph", "mixed") and line is not None:
            impl = "MPSGraph" if r.impl == "mpsgraph" else "mixed MPSGraph/Metal"
            fix = None if is_shared(line) else ix.fixes.route_to_shared(e, line)
            yield rule.finding(line.span, overload=e.overload_name, kernel=r.kernel, impl=impl, fix=fix)

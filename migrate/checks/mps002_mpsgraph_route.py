"""MPS002: the migration inventory -- overloads routed to MPSGraph code."""


def check(ix, rule):
    for e in ix.tree.yaml.entries:
        r = ix.routes[e.overload_name]
        line = ix.mps_line(e)
        if r.via == "explicit" and r.impl in ("mpsgraph", "mixed") and line is not None:
            impl = "MPSGraph" if r.impl == "mpsgraph" else "mixed MPSGraph/Metal"
            yield rule.finding(line.span, overload=e.overload_name, kernel=r.kernel, impl=impl)

"""MPS001: a family whose overloads run both native Metal and MPSGraph implementations."""

GRAPH = ("mpsgraph", "mixed")


def check(ix, rule):
    for family, entries in ix.families.items():
        routes = [(e, ix.routes[e.overload_name]) for e in entries]
        migrated = [e.overload_name for e, r in routes if r.impl == "metal"]
        if not migrated:
            continue
        for e, r in routes:
            line = ix.mps_line(e)
            if r.via != "explicit" or r.impl not in GRAPH or line is None:
                continue
            # an MPS-only line may join the shared line (None for a shared one: its stub needs a port)
            fix = ix.fixes.route_to_shared(e, line)
            command = f"mps-migrate {'fix' if fix else 'port'} {family}"
            yield rule.finding(line.span, overload=e.overload_name, kernel=r.kernel, runs=_runs(ix, r),
                               migrated=", ".join(migrated), family=family, command=command, fix=fix)


def _runs(ix, route) -> str:
    """What the overload runs: its MPSGraph kernel, or the MPSGraph body a shared stub registers."""
    for stub in ix.stubs_of_shared_kernel(route.kernel) if route.kernel not in ix.functions else ():
        for reg in ix.registrations.get(stub, ()):
            return f"{reg.function} (the MPS side of {stub})"
    return route.kernel

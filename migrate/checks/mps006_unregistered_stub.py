"""MPS006: a shared line includes MPS but the stub has no MPS registration."""
from migrate.index import is_shared


def check(ix, rule):
    for e in ix.tree.yaml.entries:
        line = ix.mps_line(e)
        if line is None or not is_shared(line) or line.kernel_name in ix.functions:
            continue
        stubs = ix.stubs_of_shared_kernel(line.kernel_name)
        known = [s for s in stubs if s in ix.tree.declared_stubs or s in ix.tree.cpu_stub_calls.get(line.kernel_name, ())]
        if known and not any(s in ix.registrations or ix.hidden_in("host", s) for s in stubs):
            yield rule.finding(line.span, overload=e.overload_name, kernel=line.kernel_name, stub=known[0])

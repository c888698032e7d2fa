"""MPS003: an MPS-only dispatch line names a kernel defined nowhere."""
from migrate.index import is_shared


def check(ix, rule):
    if not ix.tree.hosts:  # a tree without MPS host files cannot tell
        return
    for e in ix.tree.yaml.entries:
        line = ix.mps_line(e)
        if line is None or is_shared(line):
            continue
        k = line.kernel_name
        if k in ix.functions or k in ix.host_identifiers or ix.used_by_other_backend(k):
            continue  # defined in MPS code, or a backend-agnostic kernel other backends use too
        if ix.hidden_in("host", k):
            continue  # may be defined in a host file that could not be read (its MPS900 says so)
        yield rule.finding(line.kernel_span, overload=e.overload_name, kernel=k)

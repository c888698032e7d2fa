"""MPS010: *_mps kernel on a shared line, or an MPS-only kernel without mps in its name."""
from migrate.index import MPS, is_shared, looks_mps_only


def check(ix, rule):
    for e in ix.tree.yaml.entries:
        for line in e.dispatch:
            if MPS not in line.keys:
                continue
            k = line.kernel_name
            if is_shared(line) and looks_mps_only(k):
                yield rule.finding(line.span, overload=e.overload_name, kernel=k,
                                   detail=f"shared dispatch line names MPS-only kernel {k}")
            elif line.keys == (MPS,) and not looks_mps_only(k):
                yield rule.finding(line.span, overload=e.overload_name, kernel=k,
                                   detail=f"MPS-only dispatch line names {k}, which lacks mps in its name",
                                   fix=ix.fixes.merge_mps_line(e, line))

"""MPS005: #include <ATen/ops/X_native.h> that no live code needs."""


def check(ix, rule):
    for path, hf in ix.tree.hosts.items():
        if not path.endswith(".mm"):
            continue
        used = ix.live_names(path)
        for inc in hf.includes:
            declared = ix.root_kernels.get(inc.op)
            if not declared or declared & used:
                continue
            yield rule.finding(inc.span, op=inc.op, family=inc.op, fix=ix.fixes.remove_line(inc.span, f"remove stale include of {inc.header}"))

"""MPS005: #include <ATen/ops/X_native.h> that no live code needs."""

from migrate.model import Severity
from migrate.rulebook import Doc, FixSafety, Rule


def check(ix):
    for path, hf in ix.tree.hosts.items():
        if not path.endswith(".mm"):
            continue
        used = ix.live_names(path)
        for inc in hf.includes:
            declared = ix.root_kernels(inc.op)
            if not declared or declared & used:
                continue
            yield RULE.finding(
                inc.span,
                message(inc.op),
                family=inc.op,
                fix=ix.fixes.remove_include(inc.span, f"remove stale include of {inc.header}"),
            )


def message(op: str) -> str:
    return f"#include <ATen/ops/{op}_native.h> is needed by no remaining code in this file"


RULE = Rule(
    code="MPS005",
    name="stale-native-include",
    severity=Severity.WARNING,
    reads=("yaml", "host"),
    message=message,
    check=check,
    doc=Doc(
        summary="""\
Finds `#include <ATen/ops/X_native.h>` lines in host files where no live
code of the file defines or uses a native function declared by that header.
""",
        why="""\
Stale per-operator includes slow the build and hide the fact that the op
moved elsewhere.
""",
        example="""\
#include <ATen/ops/atan2_native.h>   // MPS005 once atan2_out_mps is gone
""",
        fix="""\
Delete the include line; when it is the only line of an `#ifdef` ...
`#endif` block (the last per-operator header under
`AT_PER_OPERATOR_HEADERS`), delete the block with it.
""",
        fix_safety=FixSafety.SAFE,
    ),
)

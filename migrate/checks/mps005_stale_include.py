"""MPS005 stale-native-include: #include <ATen/ops/X_native.h> that no live code needs.

Severity: warning. Reads: yaml, host. Fix safety: safe.

## What it does
Finds `#include <ATen/ops/X_native.h>` lines in host files where no live
code of the file defines or uses a native function declared by that header.

## Why it matters
Stale per-operator includes slow the build and hide the fact that the op
moved elsewhere.

## Example
#include <ATen/ops/atan2_native.h>   // MPS005 once atan2_out_mps is gone

## Fix
Delete the include line; when it is the only line of an `#ifdef` ...
`#endif` block (the last per-operator header under
`AT_PER_OPERATOR_HEADERS`), delete the block with it.
"""

from migrate.rulebook import Rule


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


RULE = Rule.documented(__name__, message, check)

"""MPS003 undefined-kernel: an MPS-only dispatch line names a kernel defined nowhere.

Severity: error. Reads: yaml, host. Fix safety: none.

## What it does
Finds MPS-only dispatch lines whose kernel has no definition (function,
TORCH_IMPL_FUNC, or macro-generated function) in the tree's MPS host files.

## Why it matters
The build fails at link time, or, after a rename, the yaml keeps pointing at
a function that was deleted by the migration.

## Example
dispatch:
  MPS: erfinv_out_mps     # MPS003 when no TORCH_IMPL_FUNC(erfinv_out_mps) exists

## Fix
None automatic: either restore the kernel or route the overload to the
shared stub.
"""

from migrate.rulebook import Rule
from migrate.index import is_shared


def check(ix):
    if not ix.tree.hosts:  # a tree without MPS host files cannot tell
        return
    for e, line in ix.mps_entries:
        if is_shared(line):
            continue
        k = line.kernel_name
        if k in ix.functions or k in ix.host_identifiers or ix.used_by_other_backend(k):
            continue  # defined in MPS code, or a backend-agnostic kernel other backends use too
        if ix.hidden_in("host", k):
            continue  # may be defined in a host file that could not be read (its MPS900 says so)
        yield RULE.finding(line.kernel_span, message(e.overload_name, k), overload=e.overload_name, kernel=k)


def message(overload: str, kernel: str) -> str:
    return f"{overload} names MPS kernel {kernel}, which is defined nowhere in the tree"


RULE = Rule.documented(__name__, message, check)

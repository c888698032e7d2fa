"""MPS006 unregistered-stub: a shared line includes MPS but the stub has no MPS registration.

Severity: error. Reads: yaml, host. Fix safety: none.

## What it does
Finds shared dispatch lines that include MPS (`CPU, CUDA, MPS: foo_out`)
whose stub (`foo_stub`) has no `REGISTER_DISPATCH` in any MPS host file.

## Why it matters
At run time the stub has no MPS entry and the op fails with "no kernel
registered for MPS" although the yaml claims MPS support.

## Example
dispatch:
  CPU, CUDA, MPS: fmax_out    # MPS006 without REGISTER_DISPATCH(fmax_stub, ...) in a .mm

## Fix
None automatic: add the host stub (`mps-migrate port` does).
"""

from migrate.rulebook import Rule
from migrate.index import is_shared


def check(ix):
    for e, line in ix.mps_entries:
        if not is_shared(line) or line.kernel_name in ix.functions:
            continue
        stubs = ix.stubs_of_shared_kernel(line.kernel_name)
        known = [
            s for s in stubs if s in ix.tree.declared_stubs or s in ix.tree.cpu_stub_calls.get(line.kernel_name, ())
        ]
        if known and not any(s in ix.registrations or ix.hidden_in("host", s) for s in stubs):
            yield RULE.finding(
                line.span,
                message(e.overload_name, line.kernel_name, known[0]),
                overload=e.overload_name,
                kernel=line.kernel_name,
            )


def message(overload: str, kernel: str, stub: str) -> str:
    return f"{overload} shares kernel {kernel} with MPS, but no .mm registers the MPS side of {stub}"


RULE = Rule.documented(__name__, message, check)

"""MPS010 kernel-naming: *_mps kernel on a shared line, or an MPS-only kernel without mps in its name.

Severity: warning. Reads: yaml. Fix safety: safe.

## What it does
Checks the naming convention: `MPS: foo_mps` is an MPS-only kernel,
`CPU, CUDA, MPS: foo` a shared stub. Reports `*_mps` kernels on shared lines
and MPS-only lines whose kernel lacks `mps` in its name.

## Why it matters
Names are how maintainers (and this tool) tell MPSGraph-era kernels from
shared stubs; a mismatch hides a half-done migration.

## Example
CPU, CUDA, MPS: hardtanh_mps     # MPS010: *_mps kernel on a shared line
MPS: softplus_out                # MPS010: MPS-only line, name without mps

## Fix
When the MPS-only kernel name is the kernel of the CPU/CUDA line too, MPS
joins that line.
"""

from migrate.model import DispatchLine, Fix, NativeEntry
from migrate.rulebook import Rule
from migrate.index import MPS, is_shared, looks_mps_only


def check(ix):
    for e, _ in ix.mps_entries:  # an entry without an MPS line has no line to judge
        for line in e.dispatch:
            if MPS not in line.keys:
                continue
            k = line.kernel_name
            if is_shared(line) and looks_mps_only(k):
                yield RULE.finding(
                    line.span,
                    message(f"shared dispatch line names MPS-only kernel {k}"),
                    overload=e.overload_name,
                    kernel=k,
                )
            elif line.keys == (MPS,) and not looks_mps_only(k):
                yield RULE.finding(
                    line.span,
                    message(f"MPS-only dispatch line names {k}, which lacks mps in its name"),
                    overload=e.overload_name,
                    kernel=k,
                    fix=merge_mps_line(ix, e, line),
                )


def merge_mps_line(ix, entry: NativeEntry, line: DispatchLine) -> Fix | None:
    """``MPS: k`` beside ``CPU, CUDA: k`` -> ``CPU, CUDA, MPS: k`` (same kernel only)."""
    target = next((d for d in entry.dispatch if d is not line and d.kernel == line.kernel), None)
    if target is None:
        return None
    return ix.fixes.join_shared_line(entry, line, target)


def message(detail: str) -> str:
    return f"{detail}"


RULE = Rule.documented(__name__, message, check)

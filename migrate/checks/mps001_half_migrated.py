"""MPS001 half-migrated-family: a family whose overloads run both native Metal and MPSGraph implementations.

Severity: error. Reads: yaml, host. Fix safety: mixed.

## What it does
Finds operator families whose overloads run both native Metal and MPSGraph
implementations: an MPSGraph `*_mps` kernel, or a shared stub whose MPS
registration has an MPSGraph body. The message names the next command.

## Why it matters
Every overload has its own dispatch block. A forgotten `MPS: foo_scalar_mps`
keeps that overload on the old MPSGraph code, silently bypassing the native
kernel's broadcasting, bounds checks and type promotion, and the migration
looks finished when it is not.

## Example
- func: copysign.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU, CUDA, MPS: copysign_out          # migrated
- func: copysign.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA: copysign_scalar_out
    MPS: copysign_scalar_out_mps          # MPS001: still MPSGraph

## Fix
Where the shared kernel of that overload serves CPU and CUDA and the MPS side
of its stub is registered, MPS joins the shared line; otherwise port the
overload first (no automatic fix for a shared line). Safe when the stub's MPS
function names its Metal kernels and each is registered; unsafe when it names
none that can be checked (the kernel it launches is then unknown).
"""

import dataclasses

from migrate.index import MPS, is_shared
from migrate.model import DispatchLine, Fix, Impl, NativeEntry, Via
from migrate.rulebook import Rule

GRAPH = (Impl.MPSGRAPH, Impl.MIXED)


def check(ix):
    reach = ix.kernel_families
    for family, entries in ix.families.items():
        if family not in reach:
            continue  # no overload reaches a kernel through MPS: none runs native Metal
        if not any(_still_graph(ix, e) for e in entries):
            continue  # nothing to report: the routes of the other overloads need not be worked out
        if not any(_runs_metal(ix, e) for e in entries if e.structured_delegate or ix.mps_line(e) is not None):
            continue  # nothing migrated (a composite route, or none, runs no kernel)
        routes = [(e, ix.routes[e.overload_name]) for e in entries]
        migrated = [e.overload_name for e, r in routes if r.impl is Impl.METAL]  # not empty: one runs Metal
        for e, r in routes:
            if not _still_graph(ix, e):
                continue
            line = ix.mps_line(e)
            # an MPS-only line may join the shared line (None for a shared one: its stub needs a port)
            fix = route_to_shared(ix, e, line)
            command = f"mps-migrate {'fix' if fix or _stale_line_fix(ix, e, line) else 'port'} {family}"
            yield RULE.finding(
                line.span,
                message(e.overload_name, _runs(ix, r), ", ".join(migrated), family, command),
                overload=e.overload_name,
                kernel=r.kernel,
                family=family,
                fix=fix,
            )


def _stale_line_fix(ix, entry: NativeEntry, mps_line: DispatchLine) -> Fix | None:
    """MPS022's fix when ``mps_line`` is an old MPS-only line overriding a shared line that names MPS already
    (``mps-migrate fix`` applies it: the overload then runs the shared kernel)."""
    shared = next((d for d in entry.dispatch if d is not mps_line and MPS in d.keys), None)
    return None if shared is None else stale_mps_line(ix, entry, shared, mps_line)


def _still_graph(ix, entry: NativeEntry) -> bool:
    """Does ``entry``'s own MPS line route it to an MPSGraph (or mixed) implementation?"""
    if ix.mps_line(entry) is None:
        return False
    r = ix.routes[entry.overload_name]
    return r.via is Via.EXPLICIT and r.impl in GRAPH


def _runs_metal(ix, entry: NativeEntry) -> bool:
    return ix.routes[entry.overload_name].impl is Impl.METAL


def route_to_shared(ix, entry: NativeEntry, mps_line: DispatchLine) -> Fix | None:
    """``CPU, CUDA: k`` + ``MPS: k_mps`` -> ``CPU, CUDA, MPS: k`` when provably legal.

    Legal when the entry is not a structured_delegate (those carry no keys at all), a line
    of the same entry gives CPU and CUDA the shared kernel ``k``, ``k``'s stub has an MPS
    registration, and every Metal kernel that registration's host function names is
    registered (safe); if the host function names no kernel we can check, the fix is unsafe.
    """
    if entry.structured_delegate or entry.manual_kernel_registration:
        return None
    target = next(
        (d for d in entry.dispatch if d is not mps_line and "MPS" not in d.keys and {"CPU", "CUDA"} <= set(d.keys)),
        None,
    )
    if target is None:
        return None
    proven = native_metal_proof(ix, target.kernel_name)
    if proven is None:
        return None
    fix = ix.fixes.join_shared_line(entry, mps_line, target)
    return Fix(fix.description, fix.edits, safe=proven)


def native_metal_proof(ix, shared_kernel: str) -> bool | None:
    """Would MPS run native Metal through ``shared_kernel``?  None: no (its stub has no MPS registration, or a
    Metal kernel the registration names is missing, MPS007); True: each kernel the registered host function
    launches is named and registered; False: it names none that can be checked."""
    regs = [r for s in ix.stubs_of_shared_kernel(shared_kernel) for r in ix.registrations.get(s, ())]
    if not regs:
        return None
    calls = [c for hf in ix.tree.hosts.values() for c in hf.kernel_calls if c.function in {r.function for r in regs}]
    if any(c.name and not ix.metal_kernel_exists(c.name) for c in calls):
        return None  # the native kernel itself is broken (MPS007): do not route to it
    return bool(calls) and all(c.name for c in calls)


def stale_mps_line(ix, entry: NativeEntry, line: DispatchLine, later: DispatchLine) -> Fix | None:
    """The fix of a migration left half done: MPS joined the shared ``line`` (``CPU, CUDA, MPS: k``) while the
    old MPS-only ``later`` line of an MPSGraph kernel still overrides it.  The old line goes: safe when MPS then
    provably runs native Metal through ``k`` (MPS001's proof), unsafe when that is unproven.  None for other
    lines, or when MPS would not run native Metal through ``k`` (then the later line may be the right one)."""
    if later.keys != (MPS,) or not is_shared(line):
        return None
    if ix.routes[entry.overload_name].impl not in GRAPH:  # the route of ``later``, the line MPS takes
        return None
    proven = native_metal_proof(ix, line.kernel_name)
    if proven is None:
        return None
    description = (
        f"remove {entry.overload_name}'s line {later.line} (MPSGraph kernel {later.kernel_name}): MPS runs the shared"
        f" line {line.line}'s {line.kernel_name}"
    )
    return dataclasses.replace(ix.fixes.remove_line(later.span, description), safe=proven)


def _runs(ix, route) -> str:
    """What the overload runs: its MPSGraph kernel, or the MPSGraph body a shared stub registers."""
    for stub in ix.stubs_of_shared_kernel(route.kernel) if route.kernel not in ix.functions else ():
        for reg in ix.registrations.get(stub, ()):
            return f"{reg.function} (the MPS side of {stub})"
    return route.kernel


def message(overload: str, runs: str, migrated: str, family: str, command: str) -> str:
    return f"{overload} still runs MPSGraph kernel {runs}, while {migrated} of the {family} family run native Metal; next: {command}"


RULE = Rule.documented(__name__, message, check)

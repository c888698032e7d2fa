"""MPS002 mpsgraph-route: the migration inventory -- overloads routed to MPSGraph code.

Severity: advice. Reads: yaml, host. Fix safety: mixed.

## What it does
Lists every overload whose MPS dispatch line names a kernel that builds an
MPSGraph (or mixes MPSGraph and Metal): the migration inventory.

## Why it matters
MPSGraph paths keep per-shape graph caches that grow without bound, cost
dispatch overhead on small tensors and carry known stride bugs; each one is
a candidate for `mps-migrate port`.

## Example
- func: hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    MPS: hypot_out_mps        # MPS002: TORCH_IMPL_FUNC(hypot_out_mps) builds an MPSGraph

## Fix
When the native side already exists (the shared kernel's stub is registered
by a `.mm` and the Metal functors it names are registered), MPS joins the
CPU/CUDA line. Otherwise `mps-migrate port FAMILY` writes the native Metal
replacement. Safe and unsafe as MPS001's fix (the same edit): unsafe when the
stub's MPS function names no Metal kernel that can be checked.
"""

from migrate.checks.mps001_half_migrated import GRAPH, route_to_shared
from migrate.model import Impl, Via
from migrate.rulebook import Rule
from migrate.index import is_shared


def check(ix):
    for e, line in ix.mps_entries:
        r = ix.routes[e.overload_name]
        if r.via is Via.EXPLICIT and r.impl in GRAPH:
            impl = "MPSGraph" if r.impl is Impl.MPSGRAPH else "mixed MPSGraph/Metal"
            fix = None if is_shared(line) else route_to_shared(ix, e, line)
            yield RULE.finding(
                line.span, message(e.overload_name, impl, r.kernel), overload=e.overload_name, kernel=r.kernel, fix=fix
            )


def message(overload: str, impl: str, kernel: str) -> str:
    return f"{overload} routes to {impl} implementation {kernel}"


RULE = Rule.documented(__name__, message, check)

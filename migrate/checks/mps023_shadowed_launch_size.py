"""MPS023 shadowed-launch-size: host sites of kind "shadowed_launch": a launch size redeclared in an inner scope, which the
later dispatch never sees (the host reader's launch_shadow finds them).

Severity: error. Reads: host. Fix safety: none.

## What it does
Finds a variable declared again in an inner block (an `if`, a loop body) of a
host function, where a dispatch after that block (`dispatchThreads:`,
`dispatchThreadgroups:`, `mtl_dispatch1DJob`: launch_conventions.yaml's
`hand_written.dispatch`) reads the outer variable, directly or through values
computed from it (`n_threads = M * threadgroup_size`). Not reported when a
dispatch inside the block reads the inner variable, or when the block assigns
the outer variable instead of declaring a new one.

## Why it matters
The size computed in the block is dropped at its closing brace and the kernel
is launched with the outer value: idle threads at best, a threadgroup larger
than the kernel's reduction expects at worst. The compiler says nothing
without `-Wshadow`. Upstream's RMSNorm launch had this until pytorch#180173.

## Example
size_t tg = maxThreads;
if (N <= LIMIT) {
  size_t tg = SIMD * simds_needed;   // MPS023
}
[enc dispatchThreads:MTLSizeMake(M * tg, 1, 1) threadsPerThreadgroup:MTLSizeMake(tg, 1, 1)];

## Fix
None automatic: drop the type (`tg = SIMD * simds_needed;`) so the block
assigns the outer variable, or rename it if the inner value is meant to stay
local.
"""

from migrate.rulebook import Rule


def check(ix):
    for site in ix.sites("shadowed_launch"):
        name, outer_line, dispatch_line = site.detail.rsplit(":", 2)
        yield RULE.finding(site.span, message(name, int(outer_line), int(dispatch_line)), kernel=site.function)


def message(name: str, outer_line: int, dispatch_line: int) -> str:
    return (
        f"{name} declared again in an inner scope: the dispatch on line {dispatch_line} reads the {name} "
        f"of line {outer_line}, so the value computed here never reaches the launch"
    )


RULE = Rule.documented(__name__, message, check)

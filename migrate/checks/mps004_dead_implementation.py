"""MPS004 dead-implementation: an MPS implementation nothing references any more.

Severity: warning. Reads: yaml, host. Fix safety: safe.

## What it does
Finds `TORCH_IMPL_FUNC(foo_out_mps)`, `foo_mps(...)` definitions and
macro invocations generating them in `.mm` files that no dispatch line,
stub registration or other code refers to any more.

## Why it matters
After a migration the old MPSGraph implementation stays compiled, keeps its
includes alive and misleads the next reader into thinking it is used.

## Example
// native_functions.yaml now says `CPU, CUDA, MPS: atan2_out`
TORCH_IMPL_FUNC(atan2_out_mps)(const Tensor& self, const Tensor& other, const Tensor& output) {
  ...  // MPS004: dead
}

## Fix
Delete the definition (or the one macro invocation generating it) with its
leading comment; helpers that something still uses stay.
"""

from migrate.rulebook import Rule


def check(ix):
    for f in ix.dead_functions:
        if any(p != f.path for p in ix.hidden_in("host", f.name)):
            continue  # another host file that could not be read may use it
        span = f.invocation or f.span
        yield RULE.finding(span, message(f.name), kernel=f.name, fix=ix.fixes.remove_function(f))


def message(kernel: str) -> str:
    return f"MPS implementation {kernel} is referenced by nothing (dispatch, registration or call)"


RULE = Rule.documented(__name__, message, check)

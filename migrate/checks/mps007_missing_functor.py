"""MPS007 missing-functor: exec_*_kernel(iter, "name") without a registered Metal functor.

Severity: error. Reads: host, metal. Fix safety: none.

## What it does
Finds host stubs calling `lib.exec_unary_kernel(iter, "name")` (binary,
ternary alike), or a tree's own launch helper such as 2.7's
`binary_mps_impl(iter, "name")` (the helpers of rules/launch_conventions.yaml),
where no `.metal` file registers a functor or exports a kernel family named `name`.

## Why it matters
The pipeline lookup fails at run time with a missing-function error.

## Example
lib.exec_binary_kernel(iter, "nextafter");   // MPS007 without REGISTER_*_OP(nextafter, ...)

## Fix
None automatic: register the functor (or fix the name).
"""

from migrate.rulebook import Rule


def check(ix):
    for hf in ix.tree.hosts.values():
        for call in hf.kernel_calls:
            if not call.shared_library or not call.name or ix.metal_kernel_exists(call.name):
                continue
            if ix.hidden_in("metal", call.name) or ix.hidden_in("host", call.name):
                continue  # may be registered in a file that could not be read
            yield RULE.finding(call.span, message(call.helper, call.name), kernel=call.name)


def message(helper: str, kernel: str) -> str:
    if helper.startswith("exec_"):
        return f'{helper}(iter, "{kernel}") has no registered Metal functor "{kernel}"'
    return f'{helper}(iter, "{kernel}"): no .metal file exports a kernel "{kernel}_*" for it to launch'


RULE = Rule.documented(__name__, message, check)

"""MPS009 stale-expected-failure: common_mps.py expects failure for an op that is native Metal now.

Severity: warning. Reads: common_mps, yaml, host. Fix safety: unsafe.

## What it does
Finds entries of the xfail tables in `torch/testing/_internal/common_mps.py`
for operators whose overloads all route to native Metal kernels.

## Why it matters
A stale expected failure keeps `test_output_match` disabled for the op, so
the new kernel is never compared with CPU in CI (and an unexpected success
turns the suite red later).

## Example
UNIMPLEMENTED_XFAILLIST = {
    "atan2": None,   # MPS009 once atan2 is native Metal
}

## Fix
Remove the entry (libcst keeps the surrounding formatting valid).
"""

from migrate.rulebook import Rule

XFAIL_SUFFIX = "XFAILLIST"


def check(ix):
    cm = ix.tree.common_mps
    if cm is None:
        return
    for entry in cm.entries:
        if not entry.table.endswith(XFAIL_SUFFIX):
            continue
        family = ix.family_of_opinfo(entry.key)
        if family is None or not ix.family_is_native_metal(family):
            continue
        yield RULE.finding(
            entry.span, message(entry.table, entry.key, family), family=family, fix=ix.fixes.remove_xfail(entry)
        )


def message(table: str, key: str, family: str) -> str:
    return f"{table} still expects {key} to fail, but every MPS overload of {family} routes to native Metal"


RULE = Rule.documented(__name__, message, check)

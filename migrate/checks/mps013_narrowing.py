"""MPS013 unchecked-numel-narrowing: host sites of kind "narrow_numel" recorded by the host reader.

Severity: warning. Reads: host. Fix safety: none.

## What it does
Finds `uint32_t n = t.numel()`, `static_cast<uint32_t>(t.numel())` and
similar narrowing of element counts.

## Why it matters
Above 2^32 elements the count wraps silently and the kernel touches only a
prefix (seen upstream: pytorch#156100, #187788).

## Example
uint32_t length = output.numel();   // MPS013

## Fix
None automatic: `c10::checked_convert<uint32_t>(output.numel(), "uint32_t")`.
"""

from migrate.rulebook import Rule


def message(detail: str) -> str:
    return f"{detail} narrows a numel to 32 bits without c10::checked_convert"


RULE = Rule.documented(__name__, message, sites="narrow_numel")

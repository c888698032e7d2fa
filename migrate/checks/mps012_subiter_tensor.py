"""MPS012 subiterator-whole-tensor: host sites of kind "subiter_tensor" recorded by the host reader.

Severity: error. Reads: host. Fix safety: none.

## What it does
Inside `for (auto&& sub : iter.with_32bit_indexing())`, finds bindings of
`sub.tensor(N)` and dispatch sizes from `sub.tensor(N).numel()`.

## Why it matters
`tensor(N)` of a sub-iterator is the WHOLE tensor: every sub-iterator then
overwrites the same prefix. Use `bind_iter_tensors(encoder, sub, n)` and
dispatch `sub.numel()`.

## Example
for (auto&& sub : iter.with_32bit_indexing()) {
  mtl_setArgs(encoder, sub.tensor(0), sub.tensor(1));   // MPS012
}

## Fix
None automatic.
"""

from migrate.rulebook import Rule


def message(detail: str) -> str:
    return f"{detail} inside a with_32bit_indexing() loop addresses the whole tensor, not the sub-iterator"


RULE = Rule.documented(__name__, message, sites="subiter_tensor")

"""MPS014 setbytes-chain: host sites of kind "setbytes_chain" recorded by the host reader.

Severity: advice. Reads: host. Fix safety: none.

## What it does
Finds two or more consecutive `mtl_setBytes(encoder, x, N)` statements.

## Why it matters
`mtl_setArgs<N>(encoder, a, b, c)` binds arguments in order in one call and
cannot get an index wrong.

## Example
mtl_setBytes(encoder, sizes, 2);
mtl_setBytes(encoder, strides, 3);   // MPS014

## Fix
None automatic.
"""

from migrate.rulebook import Rule


def message(detail: str) -> str:
    return f"{detail}: a chain of mtl_setBytes calls that one mtl_setArgs call does"


RULE = Rule.documented(__name__, message, sites="setbytes_chain")

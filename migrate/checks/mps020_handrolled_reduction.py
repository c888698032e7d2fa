"""MPS020 hand-rolled-threadgroup-reduction: a threadgroup reduction written by hand where the tree's c10/metal has the helper.

A loop whose stride variable halves each step (``s >>= 1``, ``s /= 2``, ``s = s >> 1``,
``s = s / 2``), with a ``threadgroup_barrier`` in its body and a threadgroup array
indexed with the stride.  Reported only when c10/metal/reduction_utils.h of the tree
defines threadgroup_* helpers.

Severity: advice. Reads: . Fix safety: none.

## What it does
Finds loops whose stride halves every step (`s >>= 1`, `s /= 2`), with a
`threadgroup_barrier` in the body and a `threadgroup` array indexed with the
stride: a hand-written tree reduction. Reported only where the tree's
`c10/metal/reduction_utils.h` defines the `threadgroup_*` helpers (read from
the header, not assumed).

## Why it matters
Every hand-written reduction repeats the barrier placement, the odd-size
tail and the NaN handling of max/min that the shared helpers get right once
(and will move to `simd_*` shuffles once, for every caller).

## Example
for (uint s = tg_size / 2; s > 0; s >>= 1) {   // MPS020
  if (lid < s) shared[lid] += shared[lid + s];
  threadgroup_barrier(mem_flags::mem_threadgroup);
}

## Fix
None automatic: `c10::metal::threadgroup_sum(shared, tg_size)`.
"""

from migrate.rulebook import Rule
from migrate.read.metal_body import calls
from migrate.read.metal_flow import tree_helpers, units

HEADER = "c10/metal/reduction_utils.h"


def check(ix):
    helpers = tree_helpers(ix.tree.root).get(HEADER)
    if not helpers:
        return
    for unit in units(ix):
        toks = unit.toks
        for flow in unit.flows:
            fn = flow.fn
            arrays = {p.name for p in fn.params if p.space == "threadgroup" and p.pointer}
            arrays |= {a.var for _, a, _ in flow.assigns if a.decl and "threadgroup" in a.decl}
            if not arrays:
                continue
            loops = {c for st in fn.stmts for c in st.conds if c.kind in ("for", "while")}
            for loop in sorted(loops, key=lambda c: c.keyword):
                body = [st for st in fn.stmts if loop in st.conds]
                stride = next((v for st in body if (v := _halved(toks, st.lo, st.hi))), None)
                if stride is None:
                    continue
                if not any(c.name == "threadgroup_barrier" for st in body for c in calls(toks, st.lo, st.hi)):
                    continue
                array = next((a for st in body if (a := _indexed_with(toks, st.lo, st.hi, arrays, stride))), None)
                if array is None:
                    continue
                yield RULE.finding(
                    unit.tok_span(loop.keyword, loop.keyword + 1),
                    message(fn.name, array, stride, HEADER, ", ".join(sorted(helpers))),
                    kernel=fn.name,
                )


def _halved(toks, lo, hi):
    for k in range(lo, hi - 1):
        t, n = toks[k], toks[k + 1]
        if t.kind != "id":
            continue
        if n.text == ">>=" and k + 2 < hi and toks[k + 2].text == "1":
            return t.text
        if n.text == "/" and k + 3 < hi and toks[k + 2].text == "=" and toks[k + 3].text == "2":
            return t.text
        if (
            n.text == "="
            and k + 4 < hi
            and toks[k + 2].text == t.text
            and toks[k + 3].text in (">>", "/")
            and toks[k + 4].text == ("1" if toks[k + 3].text == ">>" else "2")
        ):
            return t.text
    return None


def _indexed_with(toks, lo, hi, arrays, stride):
    for k in range(lo, hi - 1):
        if toks[k].kind == "id" and toks[k].text in arrays and toks[k + 1].text == "[":
            depth, q = 0, k + 1
            while q < hi:
                depth += toks[q].text == "["
                depth -= toks[q].text == "]"
                if toks[q].text == stride and toks[q].kind == "id":
                    return toks[k].text
                if depth == 0:
                    break
                q += 1
    return None


def message(kernel: str, array: str, stride: str, header: str, helpers: str) -> str:
    return f"{kernel} reduces threadgroup array {array} by hand (stride {stride} halves each step); {header} of this tree provides {helpers}"


RULE = Rule.documented(__name__, message, check)

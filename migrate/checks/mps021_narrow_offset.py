"""MPS021 narrow-kernel-offset: a 32-bit element offset in a kernel: ``uint off = pos * stride`` used to index a buffer.

A local declared with a 32-bit integer type (rules/metal_review.yaml ``narrow_int``) whose
initialiser multiplies a grid-wide position (``grid`` tag: thread/threadgroup position in
the grid, or a value derived from one) by a size or stride parameter (``size`` tag), with no
64-bit cast in it, and which then indexes a data buffer (``buf[off ...]``, ``buf[(off + i)]``, ``buf + off``,
``buf += off``).  Kernels templated on the index type are not affected: a template
parameter is never a 32-bit type here.

Severity: warning. Reads: . Fix safety: none.

## What it does
Finds locals of a kernel declared `uint`, `int`, `uint32_t`, `int32_t` or
`unsigned` whose initialiser multiplies a grid-wide position (a
`[[thread_position_in_grid]]` or `[[threadgroup_position_in_grid]]`
parameter, or a value derived from one) by two sizes or by an element of a
size/stride array (one scalar size may be a block size: `j * NB` is a row
index and is not reported), with
no 64-bit cast (`long`, `size_t`, `int64_t`, ...), and which then index a
tensor buffer. The kernel-side twin of MPS013. Templates over the index type
(a 64-bit path) are not reported.

## Why it matters
Above 2^32 elements the offset wraps silently and the kernel reads or writes
the wrong elements; upstream kernels that index large tensors carry a 64-bit
variant selected by the host.

## Example
uint offset = gid * stride;   // MPS021
out[offset] = in[offset];

## Fix
None automatic: compute the offset in `long` (`long offset = long(gid) * stride;`)
or give the kernel a 64-bit index variant.
"""

from migrate.rulebook import Rule
from migrate.read.metal_body import match_close, text_of
from migrate.read.metal_flow import table, units

OPERAND_END = {")", "]"}


def check(ix):
    narrow, wide = set(table()["narrow_int"]), set(table()["wide_int"])
    for unit in units(ix):
        toks = unit.toks
        for flow in unit.flows:
            buffers = {v for v, t in flow.types.items() if "*" in t and "data" in flow.any_tags(v)}
            if not buffers:
                continue
            for st, a, _ in flow.assigns:
                if not a.decl or not set(a.decl) & narrow or set(a.decl) & {"*", "&", "threadgroup", "constexpr"}:
                    continue
                lo, hi = a.rhs
                if lo >= hi or {t.text for t in toks[lo:hi]} & wide:
                    continue
                product = _product(flow, toks, lo, hi)
                if product is None:
                    continue
                used = _indexes(toks, flow.fn, a.var, buffers)
                if used is None:
                    continue
                line = unit.line_col(toks[used].start)[0]
                yield RULE.finding(
                    unit.tok_span(a.lhs[0], hi),
                    message(text_of(toks, a.lhs[0], hi, unit.text), a.var, flow.fn.name, product, line),
                    kernel=flow.fn.name,
                )


def _product(flow, toks, lo, hi):
    """The first product in ``[lo, hi)`` (outside subscripts) of a grid position and either two sizes
    or an element of a size array (``strides[i]``): an element offset, not a row or block index."""
    depth, k = 0, lo
    while k < hi - 1:
        depth += toks[k].text == "["
        depth -= toks[k].text == "]"
        if (
            k == lo
            or depth
            or toks[k].text != "*"
            or not (toks[k - 1].kind in ("id", "num") or toks[k - 1].text in OPERAND_END)
        ):
            k += 1
            continue
        factors = [_left(toks, lo, k)]
        while k < hi and toks[k].text == "*":
            factors.append(_right(toks, k + 1, hi))
            k = factors[-1][1]
        tags = [flow.expr_tags(toks, *f) for f in factors]
        sizes = [f for f, t in zip(factors, tags) if "size" in t and "grid" not in t]
        if any("grid" in t for t in tags) and (len(sizes) > 1 or any(toks[f[1] - 1].text == "]" for f in sizes)):
            return (
                " ".join(t.text for t in toks[factors[0][0] : factors[-1][1]])
                .replace(" . ", ".")
                .replace(" [ ", "[")
                .replace(" ]", "]")
            )
    return None


def _left(toks, lo, k):
    q = k - 1
    while q >= lo:
        t = toks[q].text
        if t in (")", "]"):
            depth = 0
            while q >= lo:
                depth += toks[q].text in (")", "]")
                depth -= toks[q].text in ("(", "[")
                if depth == 0:
                    break
                q -= 1
            q -= 1
            continue
        if toks[q].kind in ("id", "num") or t in (".", "->"):
            q -= 1
            continue
        break
    return max(q + 1, lo), k  # brackets unbalanced as written (a macro opens one): not before ``lo``


def _right(toks, k, hi):
    q = k
    while q < hi:
        t = toks[q].text
        if t in ("(", "["):
            depth = 0
            while q < hi:
                depth += toks[q].text in ("(", "[")
                depth -= toks[q].text in (")", "]")
                if depth == 0:
                    break
                q += 1
            q += 1
            continue
        if toks[q].kind in ("id", "num") or t in (".", "->"):
            q += 1
            continue
        break
    return k, q


def _additive(toks, lo, hi, var) -> bool:
    """``var`` is a term of the subscript ``[lo, hi)``: not multiplied, divided or an argument; a parenthesised
    group that is a term itself (``(var)``, ``(pos.x + var)``, a cast's operand) is looked into."""
    depth, q = 0, lo
    while q < hi:
        t = toks[q].text
        if depth == 0 and (toks[q].kind == "id" and t == var or t == "("):
            end = min(match_close(toks, q), hi) + 1 if t == "(" else q + 1  # past the operand
            if _term_at(toks, q, end, hi):
                if t == var or _additive(toks, q + 1, end - 1, var):
                    return True
                q = end
                continue
        depth += t in ("(", "[")
        depth -= t in (")", "]")
        q += 1
    return False


def _term_at(toks, q, end, hi) -> bool:
    """The operand ``toks[q:end]`` (a name, or a parenthesised group) is neither scaled nor a member or a call's
    argument list, nor, for a name, called."""
    if toks[q - 1].text in (".", "->", "*", "/", "%") or (toks[q].text == "(" and toks[q - 1].kind == "id"):
        return False
    return end >= hi or toks[end].text not in ("*", "/", "%", "(")


def _indexes(toks, fn, var, buffers):
    """Token index where ``var`` is a term of a buffer offset: ``buf[var + ...]``, ``buf + var``, ``buf += var``."""
    lo, hi = fn.body
    for k in range(lo, hi - 1):
        t = toks[k]
        if t.kind != "id" or t.text not in buffers:
            continue
        if toks[k + 1].text == "[":
            q = min(match_close(toks, k + 1), hi)
            if _additive(toks, k + 2, q, var):
                return k
        elif toks[k + 1].text == "+":
            q = k + 2
            while q < hi and toks[q].text not in (";", ",", ")"):
                if toks[q].kind == "id" and toks[q].text == var:
                    return k
                q += 1
    return None


def message(detail: str, var: str, kernel: str, product: str, line: int) -> str:
    return f"{detail}: 32-bit element offset {var} in {kernel} ({product}) indexes a buffer at line {line}; it wraps past 2^32 elements"


RULE = Rule.documented(__name__, message, check)

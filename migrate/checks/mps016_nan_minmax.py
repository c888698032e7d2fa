"""MPS016 nan-dropping-minmax: bare min/max/fmin/fmax on floating-point tensor data in Metal code.

Judged per call: an argument must hold tensor data (metal_flow's ``data`` tag) of a
floating type (declared float/half/bfloat, or a template parameter the function may
be instantiated with as one).  ``fmax`` inside the fmax functor/kernel is the op itself.
The unsafe fix names ``c10::metal::min``/``max`` when the tree's c10/metal/utils.h defines them.

Severity: warning. Reads: . Fix safety: unsafe.

## What it does
Finds `min`, `max`, `fmin` and `fmax` calls, unqualified or `metal::`,
whose arguments hold floating-point tensor data (a device buffer element,
a functor's argument; found by data flow from the parameters, with the
element type declared floating or a template the file instantiates with
float, half or bfloat, or a functor registered for them). `fmax`/`fmin`
inside the `fmax`/`fmin` functor or kernel are the operator itself.

## Why it matters
`metal::min`/`max` return the other operand when one is NaN; CPU (and
`torch.minimum`/`maximum`, `clamp`, the reductions) propagate it.
`c10::metal::min`/`max` (c10/metal/utils.h) propagate NaN for floating
types; a migration of minimum/maximum had to switch its functors afterwards.

## Example
struct maximum_functor {
  template <typename T>
  T operator()(const T a, const T b) {
    return max(a, b);   // MPS016
  }
};

## Fix
Replace the call's name by `c10::metal::min`/`max`, offered only when the
tree's c10/metal/utils.h defines them and the file includes it (unsafe:
NaN results change, which is the point, and integer overloads must exist).
"""

from migrate.rulebook import Rule
from migrate.model import Edit, Fix
from migrate.read.metal_body import text_of
from migrate.read.metal_reader import INCLUDE_RE
from migrate.source.macros import directive
from migrate.read.metal_flow import floating_vars, stmt_calls, table, template_may_be_float, tree_helpers, units

METAL_QUALIFIERS = ("", "::", "metal::", "::metal::")
UTILS = "c10/metal/utils.h"
_NOT_YET = object()


def check(ix):
    names = set(table()["nan_dropping"])
    helpers = tree_helpers(ix.tree.root).get(UTILS, frozenset())
    dtypes = _dtypes(ix)
    fixable = {"min", "max"} <= helpers
    for unit in units(ix):
        include = _NOT_YET  # the unit's include edit (None: not needed), worked out at its first fix
        for flow in unit.flows:
            fn = flow.fn
            if fn.name in names:
                continue
            floats = None
            for st in fn.stmts:
                for c in stmt_calls(unit, st):
                    if c.name not in names or c.qualifier not in METAL_QUALIFIERS or len(c.args) != 2:
                        continue  # metal's min/max/fmin/fmax take two: another count calls the source's own function
                    if fn.struct == f"{c.name}_functor":
                        continue  # fmax_functor computing fmax
                    if floats is None:
                        floats = floating_vars(unit, flow, template_may_be_float(unit, flow, dtypes))
                    if not any(
                        name in floats and "data" in tags
                        for lo, hi in c.args
                        for name, _, tags in flow.tags_at(unit.toks, lo, hi)
                    ):
                        continue
                    first = c.at - (2 * c.qualifier.count("::") - (1 if c.qualifier.startswith("::") else 0))
                    end = c.args[-1][1] + 1
                    call_text = text_of(unit.toks, first, end, unit.text)
                    fix = None
                    if fixable:
                        good = "c10::metal::" + c.name.lstrip("f")
                        span = unit.tok_span(first, c.at + 1)
                        if include is _NOT_YET:
                            include = None if _includes_utils(unit, ix.tree.root) else _include_edit(unit)
                        edits = (Edit(unit.path, span.start, span.end, good),) + ((include,) if include else ())
                        fix = Fix(f"use {good}", edits, safe=False)
                    advice = (
                        f"use c10::metal::{c.name.lstrip('f')}"
                        if fixable
                        else "this tree has no c10::metal::min/max to use"
                    )
                    yield RULE.finding(
                        unit.tok_span(first, end), message(call_text, _where(fn), advice), kernel=_where(fn), fix=fix
                    )


def _where(fn) -> str:
    return f"{fn.struct}::{fn.name}" if fn.struct else fn.name


def _dtypes(ix) -> dict[str, list[str]]:
    return {op: [d for r in regs for d in r.dtypes] for op, regs in ix.functor_registrations.items()}


def _include_edit(unit) -> Edit:
    """Insert ``#include <c10/metal/utils.h>`` before the source's first #include (or at its start)."""
    first = next((t for t in unit.toks if _header(t) is not None), None)
    at = first.start if first else (unit.toks[0].start if unit.toks else 0)
    return Edit(unit.path, at, at, f"#include <{UTILS}>\n")


def _header(t) -> str | None:
    """The header an ``#include`` token names (``<h>`` or ``"h"``); None for any other token."""
    if t.kind != "dir":
        return None
    name, rest = directive(t.text)
    m = INCLUDE_RE.match(rest) if name == "include" else None
    return m.group(1) if m else None


def _includes_utils(unit, root) -> bool:
    """The source includes c10/metal/utils.h, itself or through another c10/metal header."""
    for t in unit.toks:
        rel = _header(t)
        if rel is not None and rel.startswith("c10/metal/"):
            if rel == UTILS:
                return True
            try:
                if UTILS in (root / rel).read_text(encoding="latin-1"):
                    return True
            except OSError:
                continue
    return False


def message(detail: str, kernel: str, advice: str) -> str:
    return f"{detail} in {kernel} drops NaN on floating-point data ({advice})"


RULE = Rule.documented(__name__, message, check)

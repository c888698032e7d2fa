"""Which parameter of an MPS function a graph input stands for, when the graph reads a local copy.

The iterator order check (patch._check_iterator) compares the graph's inputs with the CPU iterator's by the
MPS function's parameter names.  A helper's placeholder is often fed from a local: clamp_tensor_mps's
``const Tensor low = has_low ? *low_opt : Tensor();`` (the real 2.7 tree: ``min_opt_tensor = ... *min_opt``),
reached through the call ``clamp_tensor_mps(self, min, max, ...)``.  ``parameter`` follows such a local to the
one parameter its assignments read, and a helper's parameter back through the call to the caller's.
"""

from __future__ import annotations

import re

_MAX_DEPTH = 3


def _assigned_from(body: str, name: str, params: list[str]) -> str | None:
    """The one parameter of ``params`` the assignments to ``name`` in ``body`` read (None: none or several)."""
    found: set[str] = set()
    for m in re.finditer(rf"(?<![\w.>])\b{re.escape(name)}\s*=(?!=)\s*([^;]+);", body):
        found |= {w for w in re.findall(r"\b[A-Za-z_]\w*\b", m.group(1)) if w in params and w != name}
    return found.pop() if len(found) == 1 else None


def parameter(ix, fn, name: str, depth: int = 0) -> str | None:
    """The parameter of ``fn`` (a host function) the graph input ``name`` holds, or None when not read."""
    from migrate.port.locate import function_text
    from migrate.source.params import definition_params
    from migrate.conventions.specialise import call_bindings

    text, line = function_text(ix, fn)
    params = [p.name for p in definition_params(text, line)]
    if name in params:
        return name
    got = _assigned_from(text, name, params)
    if got is not None or depth >= _MAX_DEPTH:
        return got
    for callee in sorted(fn.calls):
        for g in ix.functions.get(callee, ())[:1]:
            inner = parameter(ix, g, name, depth + 1)
            if inner is None:
                continue
            gtext, gline = function_text(ix, g)
            _, names = call_bindings(text, line, callee, definition_params(gtext, gline))
            outer = names.get(inner)
            if outer in params:
                return outer
            if outer is not None:
                got = _assigned_from(text, outer, params)
                if got is not None:
                    return got
    return None

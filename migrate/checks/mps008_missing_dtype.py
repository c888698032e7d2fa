"""MPS008 missing-dtype: a kernel family registered or exported for part of its dtype family.

Two shapes: ``REGISTER_*_OP`` functor registrations (their dtype arguments), and the kernels a
host call of a bundled-library naming convention (rules/launch_conventions.yaml: 2.7's
``exec_unary_kernel`` ``{name}_{out}_{in}``, ``binary_mps_impl`` ``{name}_{in}``) builds names
for: the dtypes read back from the host names the tree's ``.metal`` files export.

Severity: warning. Reads: host, metal. Fix safety: none.

## What it does
Finds kernels registered or exported for part of a dtype family: float without
half or bfloat, complex without half, or math functions taking some integer
inputs but not all (2.7-era `[[host_name]]` instantiations are judged by the
names their host call launches).

## Why it matters
The missing dtype falls back to an error at run time ("not implemented for
'BFloat16'", or a failed pipeline lookup of the missing name) or to a slow
path, and OpInfo tests stay expected-failure.

Host calls that build the kernel name themselves (2.7's `exec_unary_kernel`:
"{name}_{out}_{in}", "{name}_complex_{real}_{real}"; `binary_mps_impl`:
"{name}_{in}", "{name}_dense_{in}"; rules/launch_conventions.yaml) are judged by
the dtypes read back from the host names the `.metal` files export, and the
finding names the kernel the host would look up in vain. Kernels on a complex
tensor's real view (polar, complex) need no bfloat: torch has no complex bfloat.

## Example
REGISTER_BINARY_OP(xlogy, float, float);
REGISTER_BINARY_OP(xlogy, half, half);     // MPS008: bfloat missing

## Fix
None automatic: add the registration (or instantiation) for the missing dtype.
"""

from __future__ import annotations

import re
from functools import lru_cache

from migrate.rulebook import Rule
from migrate.tables import dtype_family, load_table

FLOAT_OUT = set(dtype_family("float"))


def check(ix):
    yield from _registrations(ix)
    yield from _launches(ix)


def _registrations(ix):
    floats = dtype_family("float")
    ints = dtype_family("integral")
    for op, regs in ix.functor_registrations.items():
        inputs = {r.dtypes[0] for r in regs if r.dtypes}
        last = max(regs, key=lambda r: (r.path, r.span.start))
        complex_out = any(r.dtypes and r.dtypes[-1] in dtype_family("complex") for r in regs)
        missing_float = [t for t in floats if t not in inputs]
        if inputs & set(floats) and missing_float and not complex_out:
            yield RULE.finding(last.span, message(op, ", ".join(missing_float), "float"), kernel=op, family="float")
        int2float = any(r.dtypes and r.dtypes[0] in ints and r.dtypes[-1] in FLOAT_OUT for r in regs)
        missing_int = [t for t in ints if t not in inputs]
        if int2float and missing_int:
            yield RULE.finding(
                last.span, message(op, ", ".join(missing_int), "int-to-float"), kernel=op, family="int-to-float"
            )


# ------------------------------------------------------------ named launches
def _launches(ix):
    exported = ix.host_names
    for hf in ix.tree.hosts.values():
        for call in hf.kernel_calls:
            conv = _convention(ix, call)
            if conv is None:
                continue
            complex_view = _on_complex_view(hf, call)
            for key in ("kernel", "dense_kernel", "complex_kernel"):
                if key not in conv:
                    continue
                template = conv[key]
                have = _placeholders(template, call.name, exported)
                if not have:
                    continue  # this variant is not built in this tree (2.6 has no dense kernels)
                for family, wanted in _judged(template, have, complex_view):
                    missing = [_host_name(template, call.name, fields) for fields in wanted]
                    missing = [n for n in missing if n not in exported]
                    if missing:
                        yield RULE.finding(
                            call.span,
                            message(call.name, ", ".join(missing), family, call.helper),
                            kernel=call.name,
                            family=family,
                        )


def _convention(ix, call) -> dict | None:
    """The bundled-library naming convention the call launches through, or None."""
    if not (call.shared_library and call.name) or call.name in ix.functor_registrations:
        return None
    for conv in load_table("launch_conventions.yaml")["conventions"].values():
        if conv.get("library") == "bundled" and "kernel" in conv and call.helper in conv["calls"]:
            return conv
    return None


def _on_complex_view(hf, call) -> bool:
    """The host function launches on a complex tensor's real view: its kernels exist per real type of complex."""
    return any(f.name == call.function and f.calls & set(dtype_family("complex_real_view")) for f in hf.functions)


def _judged(template: str, have: list[dict], complex_view: bool):
    """(family, [placeholder values the host asks for that the family needs]) for one name template."""
    floats, ints = dtype_family("float"), dtype_family("integral")
    if "{real}" in template:
        reals = [t for t in floats if f"{t}2" in dtype_family("complex")]
        yield "complex", [{"real": t} for t in reals]
        return
    ins = {h["in"] for h in have}
    if ins & set(floats) and not complex_view:  # a float input gives its own type ({out} where named)
        yield "float", [{"in": t, "out": t} for t in floats]
    if "out" in have[0]:
        outs = {h["out"] for h in have if h["in"] in ints}
        if outs & FLOAT_OUT and not outs & set(ints):  # out= casts of an integral result are not int-to-float
            out = sorted(outs & FLOAT_OUT)[0]
            yield "int-to-float", [{"in": t, "out": out} for t in ints]


_TYPES = "|".join(re.escape(t) for t in (*dtype_family("float"), *dtype_family("integral")))


def _placeholders(template: str, name: str, exported) -> list[dict]:
    """The placeholder values of every exported kernel name ``template`` makes for ``name``."""
    head, _, rest = template.partition("{name}")
    if head or "{name}" in rest:  # not the usual "{name}_...": a pattern for each name
        rx, names, start = _pattern(template, name), exported, 0
    else:  # one pattern for the rest, matched after the name: a compile per template, not per launch
        rx, names, start = _pattern(rest, ""), [n for n in exported if n.startswith(name)], len(name)
    return [m.groupdict() for n in names if (m := rx.fullmatch(n, start))]


@lru_cache(maxsize=None)
def _pattern(template: str, name: str) -> re.Pattern[str]:
    parts = re.split(r"(\{\w+\})", template)
    rx, seen = "", set()
    for p in parts:
        if p == "{name}":
            rx += re.escape(name)
        elif p.startswith("{"):
            key = p[1:-1]
            rx += f"(?P={key})" if key in seen else f"(?P<{key}>{_TYPES})"
            seen.add(key)
        else:
            rx += re.escape(p)
    return re.compile(rx)


def _host_name(template: str, name: str, fields: dict) -> str:
    return template.format(name=name, **fields)


def message(kernel: str, missing: str, family: str, helper: str = "") -> str:
    if helper:
        return f'{helper}(iter, "{kernel}") finds no kernel {missing} ({family} family): no .metal file exports it'
    return f"functor {kernel} is registered without {missing} ({family} family)"


RULE = Rule.documented(__name__, message, check)

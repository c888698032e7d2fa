"""The ``unary_1d_scalar`` launch (rules/launch_conventions.yaml): a file-local launcher
``NAME(iter, "name", scalar)`` that binds (output, input) and the scalar in the input's dtype.

Detected from the tree's code: a host function of the family calls the launcher, and the
launcher's definition in the tree binds exactly the convention's ``binds`` through
``mtl_setArgs`` (anything else is not this convention).  The scalar verify binds is the value
the torch CPU reference gets too: the schema default of the stub's Scalar argument where
native_functions.yaml gives one (not 0 or 1), else ``FALLBACK_SCALAR``.
"""

from __future__ import annotations

import re

from migrate.conventions.launch import Site, conventions, host_text, launcher_call, line_at

FALLBACK_SCALAR = 2.0  # an integer: integral dtypes accept it as alpha
SCALAR_CONVENTIONS = {"unary_1d_scalar": 1, "binary_offsets_scalar": 2}  # convention -> arity


def scalar_site(ix, fns) -> Site | None:
    for key, arity in SCALAR_CONVENTIONS.items():
        conv = conventions()[key]
        found = launcher_call(ix, fns, conv, rb"\s*,\s*([^()]+?)")
        if found is None:
            continue
        fn, helper, body, m = found
        marks = conventions()["binary_offsets"]["promoting_wrapper"].values()
        promotes = helper if arity == 2 and all(k.encode() in body for k in marks) else ""
        return Site(
            key,
            m.group(1).decode(),
            helper,
            arity,
            fn.path,
            line_at(host_text(ix, fn.path), fn.span.start + m.start()),
            fn.name,
            dense="dense_kernel" in conv,
            extra=m.group(2).decode().strip(),
            promotes=promotes,
        )
    return None


def scalar_value(ix, family: str, name: str) -> tuple[float, str]:
    """(value, where it comes from) for the Scalar argument ``name`` of the family's operator: its
    schema default, unless that is 0 or 1 (a value that would not show a kernel ignoring it)."""
    for e in ix.families.get(family, ()):
        m = re.search(rf"\bScalar\s+{re.escape(name)}\s*=\s*([-+\d.eE]+)", e.func)
        if m and float(m.group(1)) not in (0.0, 1.0):
            return float(m.group(1)), f"the schema default of {e.overload_name}"
        if m:
            return (
                FALLBACK_SCALAR,
                f"the schema default {m.group(1)} would not show it: verify binds {FALLBACK_SCALAR:g}",
            )
    return FALLBACK_SCALAR, f"{name} has no schema default: verify binds {FALLBACK_SCALAR:g}"


def required_flags(ix, family: str) -> tuple:
    """``bool NAME`` arguments without a default (leaky_relu_backward's self_is_result): the kernel
    computes the general case, so the reference gets False."""
    for e in ix.families.get(family, ()):
        args = e.func.split("(", 1)[-1].rsplit("->", 1)[0]
        flags = re.findall(r"\bbool\s+(\w+)\s*(?=[,)])", args)
        if flags:
            return tuple((f, False) for f in flags)
    return ()


def negated_by_cpu_kernel(ix, family: str, name: str) -> str | None:
    """The family's shared CPU kernel passes ``name`` to its stub negated (sub_out: add_stub(..., -alpha)):
    the stub's MPS kernel then sees -name, so the reference must get -value. Returns that kernel."""
    from migrate.conventions.cpu_iter import negated_scalars

    for e in ix.families.get(family, ()):
        for d in e.dispatch:
            if "CPU" not in d.keys:
                continue
            for stub in ix.stubs_of_shared_kernel(d.kernel_name):
                if name in negated_scalars(ix.tree.root, d.kernel_name, stub):
                    return f"{d.kernel_name} calls {stub} with -{name}"
    return None

"""``port --skeleton``: a hand-completion skeleton for any MPSGraph-routed family.

A functor returning a placeholder under a ``TODO(mps-migrate)`` that lists the old
graph's MPSGraph selectors in order, its float/half/bfloat registrations, and the host
stub (registered with ``REGISTER_DISPATCH`` when the family's stub takes a
TensorIterator).  No dispatch line changes and no code is removed: the family stays
routed to MPSGraph (MPS002) until the functor is written and ``port`` reroutes it.
"""

from __future__ import annotations

import textwrap

from migrate.index import Index
from migrate.model import Edit
from migrate.port.locate import family_impls
from migrate.port.host_edits import host_stub_edits, registration_lines, stub_params
from migrate.port.patch import tensor_inputs, translate_family
from migrate.port.stubs import stub_for
from migrate.conventions.target import KERNEL_FILE, KIND
from migrate.port.style import detect
from migrate.port.text_edits import line_end, struct_end
from migrate.port.write import NothingToPort, Port
from migrate.port.emit import ARG_NAMES, Plan
from migrate.port.selectors import family_selectors
from migrate.port.translate import PortBlocked

TODO = "TODO(mps-migrate)"


def plan_skeleton(ix: Index, family: str) -> Port:
    if family not in ix.families:
        raise KeyError(family)
    impls = family_impls(ix, family)
    if not impls:
        raise NothingToPort(f"{family}: nothing to port (no overload is routed to MPSGraph code)")
    reason = ""
    try:
        arity = len(translate_family(ix, family)[1].inputs)
    except PortBlocked as exc:
        reason = exc.reason
        arity = tensor_inputs(impls[0].entry)
    if arity not in KERNEL_FILE:
        raise PortBlocked(
            f"{arity} tensor inputs: skeletons are unary or binary kernels", f"{arity} inputs", impls[0].line.span.where
        )
    target = detect(ix, arity)
    if target.convention != "functor_registry":
        raise PortBlocked(
            f"{target.kpath} is written in the {target.convention} style; skeletons are c10/metal functors",
            "pre-c10/metal kernel file",
            None,
        )
    kpath, mf, hpath, hf = target.kpath, target.mf, target.hpath, target.hf
    name = family
    if name in ix.functor_registrations or any(f.name == f"{name}_functor" for f in mf.functors):
        raise PortBlocked(f"functor {name} already exists in the tree", "functor exists", None)
    sels = family_selectors(ix, [i.function for i in impls])
    origin = impls[0].function.span.where
    plan = Plan("same", None, ())
    port = Port(family, name, arity, None, plan, impls, "")  # type: ignore[arg-type]
    kdata = ix.tree.sources[kpath]
    fpos = (
        struct_end(kdata, max(f.span.start for f in mf.functors))
        if mf.functors
        else kdata.find(b"\n", kdata.rfind(b"#include")) + 1
    )
    port.edits.append(Edit(kpath, fpos, fpos, "\n" + skeleton_functor(name, arity, sels, origin, reason)))
    regs = [r for r in mf.registrations if r.path == kpath]
    rpos = line_end(kdata, max(r.span.end for r in regs) - 1) if regs else len(kdata)
    lines = registration_lines(kdata, arity, name, plan)
    port.edits.append(Edit(kpath, rpos, rpos, "".join(line + "\n" for line in lines)))
    stub, why, extra = _skeleton_stub(ix, family, impls)
    port.stub = stub or ""
    port.edits += _host_edits(ix, hpath, hf, arity, name, stub, why, extra)
    if why:
        port.notes.append(f"the host stub is not registered: {why}")
    port.notes.append(
        f"skeleton only: {family} stays routed to MPSGraph; complete {name}_functor, then run "
        f"`mps-migrate port {family}` to reroute it"
    )
    return port


def skeleton_functor(name: str, arity: int, selectors: list[tuple[str, str]], origin: str, reason: str) -> str:
    params = ", ".join(f"const T {a}" for a in ARG_NAMES[arity])
    wrap = lambda text, indent="// ": [indent + x for x in textwrap.wrap(text, 92, break_on_hyphens=False)]  # noqa: E731
    todo = wrap(f"{TODO}: compute {name} here. The MPSGraph code it replaces ({origin}) sends, in order:")
    todo += wrap(", ".join(s for s, _ in selectors) or "(no MPSGraph selector found)", "//   ")
    if reason:
        todo += wrap(f"Not ported automatically: {reason}.")
    body = [f"    {line}" for line in todo]
    return (
        "\n".join(
            [
                f"// Skeleton by mps-migrate: {name} is still computed by MPSGraph; write the kernel below.",
                f"struct {name}_functor {{",
                "  template <typename T>",
                f"  inline T operator()({params}) {{",
                *body,
                "    return T(0); // placeholder",
                "  }",
                "};",
            ]
        )
        + "\n"
    )


def _skeleton_stub(ix: Index, family: str, impls) -> tuple[str | None, str, list[str]]:
    """(stub, "", extra parameter types) when the host stub can be registered, else (stub or None, why not, [])."""
    try:
        stub = stub_for(ix, family, impls)
    except PortBlocked as exc:
        return None, exc.reason, []
    extra = stub_params(ix, stub)
    decl = ix.tree.declared_stubs.get(stub)
    if decl is not None and extra is None:
        return stub, f"{stub} at {decl.where} does not take a TensorIterator", []
    return stub, "", extra or []


def _host_edits(
    ix: Index, hpath: str, hf, arity: int, name: str, stub: str | None, why: str, extra: list[str]
) -> list[Edit]:
    helper = f"exec_{KIND[arity]}_kernel"
    if not why and not extra:
        return host_stub_edits(ix, hpath, hf, arity, name, stub)
    if not why:  # the stub passes more than the iterator: take it (unnamed), say what is ignored
        body = f'  // {TODO}: the kernel ignores {", ".join(extra)}\n  lib.{helper}(iter, "{name}");\n'
        unnamed = [
            " ".join(t.split()[:-1])
            if t.split()[-1].isidentifier() and len(t.split()) > 1 and not t.endswith(("&", "*"))
            else t
            for t in extra
        ]
        return host_stub_edits(ix, hpath, hf, arity, name, stub, body=body, extra=unnamed)
    data = ix.tree.sources[hpath]
    calls = [k for k in hf.kernel_calls if k.shared_library and k.helper == helper]
    text = data[calls[-1].span.start : calls[-1].span.end].decode() if calls else ""
    receiver = text[: text.index("." + helper)].split()[-1] if "." + helper in text else "lib"
    fns = [f for f in hf.functions if f.kind != "macro"]
    if fns:  # after the last stub function, before the REGISTER_DISPATCH block
        pos = line_end(data, max(f.span.end for f in fns) - 1)
    elif hf.registrations:
        pos = line_end(data, max(r.span.end for r in hf.registrations) - 1)
    else:
        pos = data.rfind(b"}", 0, len(data))
    note = "\n".join(
        "// " + line
        for line in textwrap.wrap(
            f"{TODO}: not registered ({why}); give it the signature of the stub and REGISTER_DISPATCH it",
            99,
            break_on_hyphens=False,
        )
    )
    return [
        Edit(
            hpath,
            pos,
            pos,
            f"\n{note}\n[[maybe_unused]] static void {name}_mps_kernel(TensorIteratorBase& iter) "
            f'{{\n  {receiver}.{helper}(iter, "{name}");\n}}\n',
        )
    ]

"""A family whose shared CPU kernel picks one of several stubs by its arguments (div.out_mode: div_true,
div_trunc or div_floor by ``rounding_mode``; clamp.out: clamp_scalar, clamp_min_scalar or clamp_max_scalar
by which bounds are given).

Each stub gets its own kernel, translated from the MPS function specialised for the argument values that
reach the stub (migrate/conventions/stub_choice.py).  A stub MPS registers already, or one that belongs to another
family (clamp_min_scalar_stub is clamp_min's), is not written here: the first needs only rerouting, the
second that family's port first.  The family reroutes once, after every part is written.
"""

from __future__ import annotations

from migrate.fixes import FixBuilder
from migrate.index import Index
from migrate.port.locate import Impl, graph_dag
from migrate.port.stubs import owner_of
from migrate.port.stubs import stub_for
from migrate.port.write import Port, reroute_dispatch, write_kernel
from migrate.conventions.stub_choice import call_kwargs
from migrate.conventions.target import KERNEL_FILE
from migrate.port.translate import PortBlocked


def _shared_kernel(im: Impl) -> str | None:
    line = im.entry.cpu_line_to_share()
    return line.kernel_name if line is not None else None


def uses(ix: Index, family: str, impls: list[Impl]):
    """{stub: [(impl, known values, StubChoice or None)]} when some overload's CPU kernel picks among
    several stubs; None otherwise (the usual one-stub port)."""
    from migrate.conventions.cpu_iter import definition
    from migrate.conventions.stub_choice import stub_choices

    several = {}
    for im in impls:
        kernel = _shared_kernel(im) if im.registration is None else None
        if kernel is None:
            continue
        stubs = {k for k in ix.stubs_of_shared_kernel(kernel) if k in ix.tree.declared_stubs}
        if len(stubs) >= 2:
            several[id(im)] = (kernel, stubs)
    out: dict[str, list] = {}
    if not several:  # overloads that call different stubs (lerp.Scalar_out, lerp.Tensor_out) are parts too
        try:
            for im in impls:
                out.setdefault(stub_for(ix, family, [im]), []).append((im, {}, None))
        except PortBlocked:
            return None
        return out if len(out) > 1 else None
    for im in impls:
        if id(im) not in several:
            out.setdefault(stub_for(ix, family, [im]), []).append((im, {}, None))
            continue
        kernel, stubs = several[id(im)]
        got = definition(ix.tree.root, kernel)
        choices = stub_choices(got[0], got[1], got[2], stubs) if got is not None else []
        if {c.stub for c in choices} != stubs:
            return None  # not read: the one-stub port says why (one_stub_each)
        for c in choices:
            out.setdefault(c.stub, []).append((im, c.values, c))
    return out


def plan_multi(ix: Index, family: str, impls: list[Impl], torch_dtypes: bool, cleanup: bool):
    """The family's Port with one part per stub it writes; None when its CPU kernels call one stub each."""
    from migrate.port.fmt import format_edits
    from migrate.port.stub_impl import replaced

    by_stub = uses(ix, family, impls)
    if by_stub is None:
        return None
    parts, notes = [], []
    for stub, users in by_stub.items():
        overloads = ", ".join(dict.fromkeys(im.entry.overload_name for im, _, _ in users))
        when = next((c.describe() for _, _, c in users if c is not None), "")
        regs = [r for r in ix.registrations.get(stub, ()) if r not in replaced(impls)]
        if regs:
            fns = ", ".join(sorted({r.function for r in regs}))
            notes.append(f"{overloads} ({when}) calls {stub}, which MPS registers already ({fns}): only rerouting")
            continue
        owner = owner_of(ix, stub)
        if owner is not None and owner != family:
            raise PortBlocked(
                f"{overloads} calls {stub} ({when}), the stub of {owner}: port {owner} first "
                f"(mps-migrate port {owner}); {family} then reroutes onto its registration",
                "another family's stub",
                users[0][0].line.span.where,
                after=owner,
            )
        dags = []
        for im, known, _ in users:
            try:
                dags.append(graph_dag(ix, im.function, known=known or None))
            except PortBlocked as exc:
                raise PortBlocked(
                    f"{stub} ({overloads}, {when}): {exc.reason}", exc.construct, exc.where, after=exc.after
                ) from None
        if len({d.structure() for d in dags}) > 1:
            raise PortBlocked(
                f"overloads {overloads} build different graphs for {stub}",
                "overloads differ",
                users[0][0].line.span.where,
            )
        if len(dags[0].inputs) not in KERNEL_FILE:
            raise PortBlocked(
                f"{stub} ({overloads}, {when}): {len(dags[0].inputs)} graph inputs (ports make unary and binary kernels)",
                f"{len(dags[0].inputs)} inputs",
                dags[0].source,
            )
        mine = list({id(im): im for im, _, _ in users}.values())
        name = stub.removesuffix("_stub")
        choice = next((c for _, _, c in users if c is not None), None)
        passed = call_kwargs(choice.values if choice else None)
        part = write_kernel(
            ix, family, name, mine, dags[0], torch_dtypes, cleanup, stub=stub, reroute=False, kwargs=passed
        )
        part.choice = choice
        part.notes.insert(0, f"{stub}: kernel {name} for {overloads}" + (f" ({when})" if when else ""))
        parts.append(part)
    if not parts:
        return None  # every stub is registered: the usual path reroutes
    first = parts[0]
    port = Port(family, first.name, first.arity, first.dag, first.plan, list(impls), first.stub, cleanup=cleanup)
    port.emitted, port.convention, port.parts = first.emitted, first.convention, parts
    port.notes = notes + [n for p in parts for n in p.notes]
    port.edits = [e for p in parts for e in p.edits]
    reroute_dispatch(ix, family, port, FixBuilder(ix))
    port.edits = format_edits(ix.tree.root, port.edits)
    return port

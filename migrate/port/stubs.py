"""Which stub a family's port writes its kernel for: the one its shared CPU kernel calls (a ufunc op's own),
refused when it is another family's or one of several chosen at run time; and the overloads that only ride
a stub MPS registers already."""

from __future__ import annotations

from migrate.index import Index, stub_candidates
from migrate.port.locate import Impl, family_impls
from migrate.port.translate import PortBlocked


def stub_for(ix: Index, family: str, impls: list[Impl], foreign: bool = False) -> str:
    """The stub the family's shared CPU kernels call; ``foreign``: also another family's stub (sub_out's
    add_stub) when that stub is registered for MPS already."""
    stubs = set()
    for im in impls:
        if im.registration is not None:  # MPS already shares the CPU line: the stub it registers for
            stubs.add(im.registration.stub)
            continue
        shared = im.entry.cpu_line_to_share()
        ufunc = ufunc_stub(ix, family, im) if shared is None else None
        if ufunc is not None:
            stubs.add(ufunc)  # the MPS function calls it itself (ufunc_body_edits)
            continue
        if shared is None:
            raise PortBlocked(
                f"{im.entry.overload_name} has no CPU kernel line for MPS to share",
                "no shared kernel",
                im.line.span.where,
            )
        known = ix.stubs_of_shared_kernel(shared.kernel_name)
        declared = [k for k in known if k in ix.tree.declared_stubs and k.endswith("_stub")]
        if len(known) > 1 and len(declared) == 1:
            known = declared  # a helper's `stub` parameter is not a stub
        if not known and f"{family}_stub" in stub_candidates(shared.kernel_name):
            known = [f"{family}_stub"]  # foo_out -> foo_stub, by PyTorch's naming convention
        if not known and shared.kernel_name.startswith(family + "_") and f"{family}_stub" in ix.tree.declared_stubs:
            known = [f"{family}_stub"]  # eq_Scalar_out: the structured overload of eq calls eq_stub
        if len(known) != 1:
            raise PortBlocked(
                f"cannot tell which stub {shared.kernel_name} calls ({', '.join(known) or 'none found'})",
                "unknown stub",
                shared.span.where,
            )
        calls = ix.operators_called(shared.kernel_name)
        if calls and known[0] not in ix.tree.declared_stubs:  # a name guessed by convention; relu calls clamp_min
            raise PortBlocked(
                f"{shared.kernel_name}, the CPU kernel MPS would share, reaches no stub ({known[0]} is "
                f"not declared): it calls {', '.join('at::' + c for c in calls)}",
                "no stub",
                shared.span.where,
            )
        stubs.add(known[0])
    if len(stubs) > 1:
        raise PortBlocked(
            f"overloads call different stubs ({', '.join(sorted(stubs))})", "several stubs", impls[0].line.span.where
        )
    stub = stubs.pop()
    owner = stub.removesuffix("_stub")
    if owner not in ix.families:  # div_floor_stub is div's (its div.out_mode picks it by rounding_mode)
        owner = owner_of(ix, stub) or owner
    kernels = owner != family and any(e.dispatch or e.structured for e in ix.families.get(owner, ()))
    if kernels and not family.startswith(owner + "_"):  # prelu (composite, no kernel of its own) calls _prelu_kernel
        # sub_out calls add_stub with -alpha: a sub kernel registered there would compute add too
        if foreign and stub in ix.registrations:
            return stub
        then = f"port {owner} first (mps-migrate port {owner}); {family} then reroutes onto its registration"
        if stub in ix.registrations:
            then = f"{family} reroutes onto its MPS registration"
        raise PortBlocked(
            f"{family}'s CPU kernel reaches {stub}, the stub of {owner}: a {family} kernel registered "
            f"for it would change {owner} too; {then}",
            "another family's stub",
            impls[0].line.span.where,
            after=owner,
        )
    return stub


def ufunc_stub(ix: Index, family: str, im: Impl) -> str | None:
    """A ufunc op's stub: codegen writes its CPU and CUDA kernels (``ufunc_add_CPU`` calls ``add_stub``), so
    there is no kernel line to share and the MPS structured kernel (a TensorIteratorBase) calls the stub."""
    e = im.entry
    stub = f"{family}_stub"
    if not (e.ufunc_inner_loop and e.structured and e.structured_inherits == "TensorIteratorBase"):
        return None
    return stub if stub in ix.tree.declared_stubs and im.function.kind == "impl_func" else None


def one_stub_each(ix: Index, impls: list[Impl]) -> None:
    """PortBlocked when an overload's shared CPU kernel picks one of several stubs at run time (clamp_out:
    clamp_scalar_stub with both bounds, clamp_min/max_scalar_stub with one): a port writes one stub's kernel."""
    from migrate.port.stub_impl import replaced

    for im in impls:
        if im.registration is not None:
            continue
        shared = im.entry.cpu_line_to_share()
        if shared is None:
            continue
        stubs = [k for k in ix.stubs_of_shared_kernel(shared.kernel_name) if k in ix.tree.declared_stubs]
        if len(stubs) < 2:
            continue
        done = [k for k in stubs if any(r not in replaced(impls) for r in ix.registrations.get(k, ()))]
        todo = [k for k in stubs if k not in done]
        if not todo:
            continue
        state = "; ".join(
            part
            for part in (
                f"{', '.join(done)} registered for MPS already" if done else "",
                f"{', '.join(todo)} not",
            )
            if part
        )
        raise PortBlocked(
            f"{im.entry.overload_name}'s CPU kernel {shared.kernel_name} calls one of {len(stubs)} stubs, chosen by "
            f"its arguments at run time ({state}); a port writes the kernel of one stub",
            "several stubs",
            im.line.span.where,
        )


def owner_of(ix: Index, stub: str) -> str | None:
    """The family a stub is named after, by the longest prefix (clamp_min_scalar_stub -> clamp_min)."""
    words = stub.removesuffix("_stub").split("_")
    for k in range(len(words), 0, -1):
        name = "_".join(words[:k])
        if name in ix.families:
            return name
    return None


def registered_arity(ix: Index, functor: str) -> int:
    """1 when the functor's registrations are unary (REGISTER_UNARY_*), else 2."""
    return 1 if any("UNARY" in r.macro for r in ix.functor_registrations.get(functor, ())) else 2


def split_riders(ix: Index, family: str) -> tuple[list[Impl], list[tuple[Impl, str]], list[str]]:
    """``_riders`` of the family's MPSGraph-routed overloads."""
    return _riders(ix, family, family_impls(ix, family))


def own_impls(ix: Index, family: str) -> list[Impl] | None:
    """The overloads the port translates: all (None) unless some ride another family's stub."""
    if family not in ix.families or not family_impls(ix, family):
        return None
    own, riders, waiting = split_riders(ix, family)
    return own if (riders or waiting) and own else None


def _riders(ix: Index, family: str, impls: list[Impl]) -> tuple[list[Impl], list[tuple[Impl, str]], list[str]]:
    """(overloads the port writes a kernel for, (overload, stub) where the overload's shared CPU kernel calls
    another family's stub on its own iterator -- clamp_min_Tensor_out's maximum_stub -- that MPS registers
    already: it only reroutes, owners of such stubs not registered yet: port those first)."""
    from migrate.conventions.cpu_iter import calls_stub_on_its_iterator
    from migrate.port.stub_impl import replaced

    own, riders, waiting = [], [], []
    for im in impls:
        try:
            stub_for(ix, family, [im])
            own.append(im)
            continue
        except PortBlocked as exc:
            owner = exc.after if exc.construct == "another family's stub" else None
        if not owner:
            own.append(im)
            continue
        stub = owner + "_stub"
        shared = im.entry.cpu_line_to_share()
        if shared is None or not calls_stub_on_its_iterator(ix.tree.root, shared.kernel_name, stub):
            own.append(im)  # reached through helpers: not the owner's computation
        elif stub in ix.registrations and not all(r in replaced(impls) for r in ix.registrations[stub]):
            riders.append((im, stub))
        else:
            waiting.append(owner)
    return own, riders, waiting

"""A family's port as text edits: functor, registrations, host stub, dispatch, cleanup."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from migrate.fixes import FixBuilder
from migrate.index import Index, stub_candidates
from migrate.model import Edit, HostFile
from migrate.port.dag import Dag
from migrate.port.emit import Plan, alpha_name, functor, plan_dtypes
from migrate.port.fmt import format_edits
from migrate.port.locate import Impl, family_impls, graph_dag
from migrate.port.selectors import blocking, family_selectors
from migrate.port.translate import PortBlocked
from migrate.source import SourceFile
from migrate.source.literal_search import closing_brace
from migrate.source.macros import expand, find_invocations, find_macros
from migrate.port.style import KERNEL_FILE, KIND, detect


class NothingToPort(Exception):
    pass


@dataclass
class Port:
    family: str
    name: str  # functor / kernel name
    arity: int
    dag: Dag
    plan: Plan
    impls: list[Impl]
    stub: str
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cleanup: bool = True  # run the fix loop for the family's dead code (off for --list: portability only)
    emitted: Dag | None = None  # the DAG the kernel computes (after rules/port_idioms.yaml)
    convention: str = ""  # the target files' style (migrate.port.style), when the port writes a kernel
    parts: list[Port] = field(default_factory=list)  # one per stub when the CPU kernel picks among several
    choice: object = None  # this part's migrate.port.stub_choice.StubChoice

    @property
    def kind(self) -> str:
        return KIND[self.arity]


# ------------------------------------------------------------- translation
def translate_family(ix: Index, family: str, impls: list[Impl] | None = None) -> tuple[list[Impl], Dag]:
    """The family's graph (``impls``: only these overloads' implementations)."""
    if family not in ix.families:
        raise KeyError(family)
    impls = family_impls(ix, family) if impls is None else impls
    if not impls:
        raise NothingToPort(f"{family}: nothing to port (no overload is routed to MPSGraph code)")
    try:
        dags = [graph_dag(ix, i.function) for i in impls]
    except PortBlocked as exc:
        if exc.construct.startswith("control flow"):
            one_stub_each(ix, impls)  # the branch is the CPU kernel's run-time choice of stub: say that
        raise _name_blockers(ix, impls, exc) from None
    if len({d.structure() for d in dags}) > 1:
        names = ", ".join(i.entry.overload_name for i in impls)
        raise PortBlocked(f"overloads {names} build different graphs", "overloads differ", impls[0].line.span.where)
    dag = dags[0]
    if len(dag.inputs) not in KERNEL_FILE:
        raise PortBlocked(
            f"{len(dag.inputs)} graph inputs (ports make unary and binary kernels)",
            f"{len(dag.inputs)} inputs",
            dag.source,
        )
    return impls, dag


def _name_blockers(ix: Index, impls: list[Impl], exc: PortBlocked) -> PortBlocked:
    """The translator's refusal, or -- when the graph code sends selectors that are not
    elementwise -- all of those, in order (the construct stays the first one, for --list)."""
    found = blocking(family_selectors(ix, [i.function for i in impls]))
    if not found and exc.construct == "unreadable code":
        return _explain_unreadable(ix, impls, exc)
    if not found:
        return exc
    names = ", ".join(f"{sel} ({why})" for sel, why, _ in found)
    verb = "selector {} is" if len(found) == 1 else "selectors {} are"
    sel, why, where = found[0]
    return PortBlocked(verb.format(names) + " not elementwise", f"{sel} ({why})", where)


_HAND_LAUNCH = re.compile(rb"\b(?:getCPLState|getPipelineStateForFunc|getPipelineStateForKernel)\s*\(")


def _explain_unreadable(ix: Index, impls: list[Impl], exc: PortBlocked) -> PortBlocked:
    """Graph code the reader cannot parse, said in terms of why it would not port anyway where that
    is visible: a factory (no tensor input), or a hand-written Metal launch beside the graph."""
    from migrate.port.skeleton import tensor_inputs

    if all(tensor_inputs(i.entry) == 0 for i in impls):
        return PortBlocked(
            f"a factory op (no tensor input; elementwise ports map inputs to outputs); {exc.reason}",
            "factory op",
            exc.where,
        )
    fns = [i.function for i in impls]
    fns += [d for f in list(fns) for c in sorted(f.calls) for d in ix.functions.get(c, ())[:1]]
    for f in fns:
        data = ix.tree.sources[f.path][f.span.start : f.span.end]
        if _HAND_LAUNCH.search(data):
            return PortBlocked(
                f"{f.name} already launches a hand-written Metal kernel beside its graph "
                f"code (finish that migration by hand); {exc.reason}",
                "hand-written launch",
                exc.where,
            )
    return PortBlocked(
        f"{exc.reason}: the port's Objective-C++ reader does not follow this statement (C arrays, "
        f"if constexpr and new-expressions are outside it)",
        exc.construct,
        exc.where,
    )


def cpu_takes(family: str, arity: int, dtype: str, scalars: int = 0, kwargs: dict | None = None) -> bool | None:
    """Does the CPU operator accept tensors of ``dtype`` ("int32", "bool")? None: no such aten operator.
    ``scalars``: its run-time Scalar arguments, passed (as 2, which integral dtypes take too) when the
    call without them fails (clamp_min(self, min)); ``kwargs``: arguments every call passes (one stub of several:
    rounding_mode="trunc").
    Needs torch (the [verify] extra): without it the port would register dtypes the operator refuses."""
    import torch

    op = getattr(torch.ops.aten, family, None)
    if op is None:
        return None
    x = torch.tensor([1, 2, 1], dtype=getattr(torch, dtype))  # no 0: integer fmod/remainder refuse a zero divisor
    for extra in dict.fromkeys([0, scalars]):
        try:
            op(*([x] * arity), *([2] * extra), **(kwargs or {}))
            return True
        except Exception:
            continue
    return False


def _ufunc_stub(ix: Index, family: str, im: Impl) -> str | None:
    """A ufunc op's stub: codegen writes its CPU and CUDA kernels (``ufunc_add_CPU`` calls ``add_stub``), so
    there is no kernel line to share and the MPS structured kernel (a TensorIteratorBase) calls the stub."""
    e = im.entry
    stub = f"{family}_stub"
    if not (e.ufunc_inner_loop and e.structured and e.structured_inherits == "TensorIteratorBase"):
        return None
    return stub if stub in ix.tree.declared_stubs and im.function.kind == "impl_func" else None


def _ufunc_body_edits(ix: Index, im: Impl, stub: str) -> list[Edit]:
    """The MPS structured kernel's body becomes the stub's call with the kernel's Scalar arguments, as
    codegen's ``ufunc_<op>_CPU`` body is (a complex branch goes with the rest: _complex_paths says so)."""
    from migrate.port.locate import _params, function_text, scalar_params

    fn = im.function
    data = ix.tree.sources[fn.path]
    code = SourceFile(data).code
    open_, close = code.find(b"{", fn.span.start), code.rfind(b"}", fn.span.start, fn.span.end)
    if not (fn.span.start <= open_ < close):
        raise PortBlocked(f"{fn.name}: no body to replace with {stub}'s call", "ufunc body", fn.span.where)
    args = ", ".join(["device_type()", "*this", *scalar_params(_params(*function_text(ix, fn)))])
    return [Edit(fn.path, open_, close + 1, f"{{\n  {stub}({args});\n}}")]


_COMPLEX = re.compile(r"\b(isComplexType|supportsComplex|complex_mul_out|legacy_complex_as_view|view_as_real)\b")


def _complex_paths(ix: Index, family: str, impls: list[Impl]) -> list[str]:
    """A behaviour change when the old implementation handles complex inputs: ports register no complex
    kernel (emit.Plan), so after the patch complex calls reach a kernel name the library lacks and raise
    (a ufunc op's MPS function keeps its early complex branch, but that one is taken only on old macOS)."""
    out = []
    for im in impls:
        fn = im.function
        data = ix.tree.sources[fn.path][fn.span.start : fn.span.end].decode("utf-8", "replace")
        m = _COMPLEX.search(data)
        if m is not None:
            line = fn.span.line + data.count("\n", 0, m.start())
            out.append(
                f"behaviour change (complex): {fn.name} handles complex inputs ({m.group(1)}, {fn.path}:{line}); "
                f"the port registers no complex kernel, so complex calls raise after this patch: add complex "
                f"kernels, or keep that branch by hand"
            )
    return list(dict.fromkeys(out))


def _check_iterator(ix: Index, impls: list[Impl], dag) -> str | None:
    """The kernel sees the operands of the iterator the shared CPU kernel (or its structured meta function)
    builds, in that iterator's order: the graph's inputs are put in that order (a note says so when it is
    not the schema's); an iterator over other operands blocks the port."""
    from migrate.port.cpu_iter import iterator_inputs, meta_of, positions
    from migrate.port.locate import _params, function_text
    from migrate.port.operands import parameter

    for im in impls:
        shared = im.entry.cpu_line_to_share()
        if shared is None or im.registration is not None:
            continue
        meta = meta_of(im.entry)
        cpu = positions(ix.tree.root, shared.kernel_name, meta)
        params = [p.name for p in _params(*function_text(ix, im.function))]
        names = [parameter(ix, im.function, n.name) for n in dag.inputs]  # a helper's local: its parameter
        mine = [params.index(n) for n in names if n in params]
        if cpu is None or len(mine) != len(dag.inputs) or cpu[: len(mine)] == mine:
            continue  # threshold's iterator is (self, self): its unary kernel reads operand 0, the graph's self
        theirs = ", ".join(iterator_inputs(ix.tree.root, shared.kernel_name, meta) or ())
        if sorted(cpu) == sorted(mine) and len(set(cpu)) == len(cpu):
            by_pos = dict(zip(mine, dag.inputs))
            dag.inputs[:] = [by_pos[p] for p in cpu]
            return (
                f"operands in the order of the iterator {shared.kernel_name} builds ({theirs}), not the "
                f"schema's: the kernel's a is {dag.inputs[0].name}"
            )
        raise PortBlocked(
            f"{shared.kernel_name} builds its iterator over ({theirs}); the graph reads "
            f"({', '.join(n.name for n in dag.inputs)}): a kernel for its stub sees other operands",
            "iterator operands",
            shared.span.where,
        )
    return None


def _stub_for(ix: Index, family: str, impls: list[Impl], foreign: bool = False) -> str:
    """The stub the family's shared CPU kernels call; ``foreign``: also another family's stub (sub_out's
    add_stub) when that stub is registered for MPS already."""
    stubs = set()
    for im in impls:
        if im.registration is not None:  # MPS already shares the CPU line: the stub it registers for
            stubs.add(im.registration.stub)
            continue
        shared = im.entry.cpu_line_to_share()
        ufunc = _ufunc_stub(ix, family, im) if shared is None else None
        if ufunc is not None:
            stubs.add(ufunc)  # the MPS function calls it itself (_ufunc_body_edits)
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
        from migrate.port.multi import owner_of

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


def _registered_arity(ix: Index, functor: str) -> int:
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
    from migrate.port.cpu_iter import calls_stub_on_its_iterator
    from migrate.port.stub_impl import replaced

    own, riders, waiting = [], [], []
    for im in impls:
        try:
            _stub_for(ix, family, [im])
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


def _onto_registered_stub(ix: Index, family: str) -> Port | None:
    """sub_out calls add_stub(..., -alpha): once add_stub has an MPS registration, sub needs no kernel of its
    own -- MPS joins sub's CPU line and runs what CPU runs, the stub with the negated scalar."""
    impls = family_impls(ix, family) if family in ix.families else []
    if not impls:
        return None
    try:
        _stub_for(ix, family, impls)
        return None  # the family's own stub: the usual port
    except PortBlocked as exc:
        if exc.construct != "another family's stub":
            return None
    stub = _stub_for(ix, family, impls, foreign=True)
    owner = stub.removesuffix("_stub")
    from migrate.port.stub_impl import replaced

    if stub not in ix.registrations or all(r in replaced(impls) for r in ix.registrations[stub]):
        return None  # registered only by the family's own MPSGraph code (where_kernel_mps): nothing to ride on
    from migrate.port.cpu_iter import calls_stub_on_its_iterator, negated_scalars

    shared = {d.kernel_name for im in impls if (d := im.entry.cpu_line_to_share()) is not None}
    if not shared or not all(calls_stub_on_its_iterator(ix.tree.root, k, stub) for k in shared):
        return None  # index_add's CPU kernel reaches add_stub through helpers: not add's computation

    port = Port(family, owner, _registered_arity(ix, owner), None, None, impls, stub)  # type: ignore[arg-type]
    fns = ", ".join(sorted({r.function for r in ix.registrations[stub]}))
    kernels = sorted(shared)
    neg = sorted({n for k in kernels for n in negated_scalars(ix.tree.root, k, stub)})
    how = f" with {', '.join('-' + n for n in neg)}" if neg else ""
    port.notes.append(
        f"{', '.join(kernels)} calls {stub}{how}, which MPS registers already ({fns}): "
        f"{family} needs no kernel of its own, only rerouting"
    )
    return port


# ------------------------------------------------------------ target files
def _target_files(ix: Index, arity: int):
    """The tree's target files and the style they are written in (migrate.port.style)."""
    return detect(ix, arity)


_line_end = FixBuilder.line_end


def _struct_end(data: bytes, start: int) -> int:
    code = SourceFile(data).code
    close = closing_brace(code, code.find(b"{", start))
    return len(data) if close is None else _line_end(data, close)


@lru_cache(maxsize=32)
def _convenience_macros(data: bytes, macro_kind: str) -> list[tuple[str, frozenset]]:
    """One-parameter #defines of the file and the (in, out) pairs they register for a NAME."""
    macros = find_macros(SourceFile(data))
    base = re.compile(rf"\bREGISTER_{macro_kind}_OP\(\s*__PORT__\s*,\s*(\w+)\s*,\s*(\w+)\s*\)")
    other = re.compile(r"\bREGISTER_(\w+)\(\s*__PORT__\b")
    out = []
    for name, m in macros.items():
        if len(m.params) != 1 or not name.startswith("REGISTER_"):
            continue
        text = expand(m, (b"__PORT__",), macros).decode("latin-1")
        pairs = frozenset(base.findall(text))
        extra = {k for k in other.findall(text) if k != f"{macro_kind}_OP" and "CASTOUT" not in k}
        if pairs and not extra:
            out.append((name, pairs))
    return sorted(out, key=lambda x: (-len(x[1]), x[0]))


def registration_lines(data: bytes, arity: int, name: str, plan: Plan, alpha: bool = False) -> list[str]:
    """The file's own convenience macros where they fit exactly, then single registrations.
    Alpha kernels: ``REGISTER_*_ALPHA_OP(name, in, alpha, out)``, alpha in the input dtype (the
    host passes it in ``iter.common_dtype()``)."""
    kind = KIND[arity].upper()
    wanted = plan.pairs()
    if alpha:
        return [f"REGISTER_{kind}_ALPHA_OP({name}, {i}, {i}, {o});" for i, o in wanted]
    left = set(wanted)
    lines = []
    for macro, pairs in _convenience_macros(data, kind):
        if pairs <= left:
            lines.append(f"{macro}({name});")
            left -= pairs
    lines += [f"REGISTER_{kind}_OP({name}, {i}, {o});" for i, o in wanted if (i, o) in left]
    return lines


def _host_stub_edits(
    ix: Index,
    hpath: str,
    hf: HostFile,
    arity: int,
    name: str,
    stub: str,
    alpha: str | None = None,
    body: str | None = None,
    extra: list[str] = (),
) -> list[Edit]:
    """The host stub: the file's one-name registration macro, else a ``static void`` calling
    ``lib.exec_*_kernel(iter, "name"[, alpha])`` plus ``REGISTER_DISPATCH`` (``body`` replaces the call)."""
    data = ix.tree.sources[hpath]
    helper = f"exec_{KIND[arity]}_kernel"
    macros = find_macros(SourceFile(data))
    ti = [
        r
        for r in hf.registrations
        if r.via_macro
        and r.via_macro in macros
        and helper in macros[r.via_macro].text
        and len(macros[r.via_macro].params) == 1
    ]
    if ti and alpha is None and body is None:
        last = max(ti, key=lambda r: r.span.end)
        pos = _line_end(data, last.span.end)
        return [Edit(hpath, pos, pos, f"{last.via_macro}({name});\n")]
    calls = [k for k in hf.kernel_calls if k.shared_library and k.helper == helper]
    # the file's first ternary stub follows its binary ones: the same library, after the last of them
    calls = calls or [k for k in hf.kernel_calls if k.shared_library and k.helper.startswith("exec_")]
    last_call = max(calls, key=lambda k: k.span.end)
    text = data[last_call.span.start : last_call.span.end].decode()
    receiver = text[: text.index("." + helper)].split()[-1] if "." + helper in text else "lib"
    receiver = receiver if receiver.isidentifier() else "lib"
    fn = next((f for f in hf.functions if f.name == last_call.function), None)
    if fn is not None and fn.kind != "macro":
        pos = _line_end(data, fn.span.end - 1)
    else:  # stubs made by a registration macro: after its last invocation
        pos = _line_end(data, max(r.span.end for r in hf.registrations) - 1)
    stub_fn = f"{name}_mps_kernel"
    from migrate.port.stub_types import scalar_param

    params = ", ".join(["TensorIteratorBase& iter"] + ([scalar_param(ix, stub, alpha)] if alpha else []) + list(extra))
    call = body or f'  {receiver}.{helper}(iter, "{name}"{", " + alpha if alpha else ""});\n'
    edits = [Edit(hpath, pos, pos, f"\nstatic void {stub_fn}({params}) {{\n{call}}}\n")]
    regs = [r for r in hf.registrations if not r.via_macro and r.macro == "REGISTER_DISPATCH"]
    if regs and max(r.span.end for r in regs) > pos:
        rpos = _line_end(data, max(r.span.end for r in regs) - 1)
        edits.append(Edit(hpath, rpos, rpos, dispatch_line(data, regs, stub, stub_fn)))
    else:
        edits[0] = Edit(hpath, pos, pos, edits[0].replacement + dispatch_line(data, regs, stub, stub_fn))
    return edits


def dispatch_line(data: bytes, regs, stub: str, fn: str) -> str:
    """``REGISTER_DISPATCH(stub, &fn)`` written the way the file's last one is (``&``, trailing ``;``)."""
    amp, semi = "&", ""
    if regs:
        last = max(regs, key=lambda r: r.span.end)
        text = data[last.span.start : _line_end(data, last.span.end - 1)].decode("utf-8", "replace")
        amp = "&" if "&" in text else ""
        semi = ";" if text.rstrip().endswith(";") else ""
    return f"REGISTER_DISPATCH({stub}, {amp}{fn}){semi}\n"


_USING = re.compile(rb"\busing\s+(\w+)\s*=\s*void\s*\(\s*\*\s*\)\s*\(([^;]*)\)\s*;")
_TYPEDEF = re.compile(rb"\btypedef\s+void\s*\(\s*\*\s*(\w+)\s*\)\s*\(([^;]*)\)\s*;")


def stub_params(ix: Index, stub: str) -> list[str] | None:
    """Parameter types of ``stub``'s function type after the iterator (None: not declared, not a
    TensorIterator stub, or a type the reader does not follow)."""
    extra = _stub_signature(ix, stub)
    return None if extra and extra[0].startswith("<not a TensorIterator") else extra


def stub_function_params(ix: Index, stub: str) -> list[str] | None:
    """Every parameter type of ``stub``'s function type, from its DECLARE_DISPATCH header (None: not
    declared in the tree, or a type the reader does not follow)."""
    decl = ix.tree.declared_stubs.get(stub)
    if decl is None:
        return None
    try:
        data = (ix.tree.root / decl.path).read_bytes()
    except OSError:
        return None
    fn_type = _declared_type(data, stub)
    if fn_type is None:
        return None
    inline = re.fullmatch(rb"void\s*\(\s*\*\s*\)\s*\((.*)\)", fn_type, re.S)
    if inline is not None:  # DECLARE_DISPATCH(void (*)(TensorIteratorBase&, std::optional<double>), stub)
        return split_params(inline.group(1))
    fn_type = fn_type.rsplit(b"::", 1)[-1]
    for rx in (_USING, _TYPEDEF):
        for u in rx.finditer(data):
            if u.group(1) == fn_type:
                return split_params(u.group(2))
    return None


def _declared_type(data: bytes, stub: str) -> bytes | None:
    """The first argument of ``DECLARE_DISPATCH(TYPE, stub)`` in ``data`` (the source layer's invocations)."""
    for inv in find_invocations(SourceFile(data), {"DECLARE_DISPATCH"}):
        if len(inv.args) >= 2 and inv.args[-1].decode() == stub:
            return b", ".join(inv.args[:-1])
    return None


def split_params(text: bytes) -> list[str]:
    """Parameter types separated by top-level commas, whitespace collapsed (the source layer's tokens)."""
    from migrate.source.macros import split_args
    from migrate.source.tokens import render, tokenize

    parts: list[str] = []
    for a in split_args(tokenize(text.decode("utf-8", "replace"))):
        part = " ".join(render(a).split())
        if parts and parts[-1].count("<") > parts[-1].count(">"):  # a comma inside std::tuple<int, int>
            parts[-1] += ", " + part
        else:
            parts.append(part)
    return [p for p in parts if p]


def _stub_signature(ix: Index, stub: str) -> list[str] | None:
    """Parameter types of ``stub``'s function type after the iterator (None: not declared in the tree,
    or a type the reader does not follow)."""
    parts = stub_function_params(ix, stub)
    if parts is None:
        return None
    if not parts or "TensorIterator" not in parts[0]:
        return ["<not a TensorIterator stub: (" + ", ".join(parts) + ")>"]
    return parts[1:]


def _check_stub_takes(ix: Index, stub: str, alpha: str | None, where: str | None) -> None:
    extra = _stub_signature(ix, stub)
    if extra is None:
        return
    if extra and extra[0].startswith("<not a TensorIterator"):
        raise PortBlocked(
            f"{stub} takes {extra[0][len('<not a TensorIterator stub: ') : -1]}, not a TensorIterator: "
            f"an elementwise kernel cannot implement it",
            "stub signature",
            where,
        )
    scalar = len(extra) == 1 and "Scalar" in extra[0].replace("&", " ").replace("::", " ").split()
    if alpha is not None and not scalar:
        raise PortBlocked(
            f"{stub} takes ({', '.join(['TensorIteratorBase&'] + extra)}), not one Scalar for "
            f"the graph's run-time scalar {alpha}",
            "stub signature",
            where,
        )
    if alpha is None and extra:
        raise PortBlocked(
            f"{stub} also takes {', '.join(extra)}, which the graph does not use", "stub signature", where
        )


# ------------------------------------------------------------------ the port
def _hand_written(ix: Index, family: str) -> Port | None:
    """A functor and an MPS stub registration already exist (e.g. a completed skeleton): a reroute
    needs no translation of the graph.  A skeleton's placeholder is refused."""
    if family not in ix.functor_registrations or family not in ix.families:
        return None
    impls = family_impls(ix, family)
    if not impls:
        return None
    try:
        stub = _stub_for(ix, family, impls)
    except PortBlocked:
        return None
    if stub not in ix.registrations:
        return None
    for f in ix.tree.metals.values():
        for fn in f.functors:
            data = ix.tree.sources[f.path]
            if fn.name == family and b"TODO(mps-migrate)" in data[fn.span.start : _struct_end(data, fn.span.start)]:
                raise PortBlocked(
                    f"{family}_functor still holds the skeleton's TODO(mps-migrate) placeholder: "
                    f"write the kernel first",
                    "skeleton placeholder",
                    fn.span.where,
                )
    return Port(family, family, _registered_arity(ix, family), None, None, impls, stub)  # type: ignore[arg-type]


def plan_port(ix: Index, family: str, torch_dtypes: bool = True, cleanup: bool = True) -> Port:
    """The port of ``family``; ``torch_dtypes=False`` registers every dtype the DAG accepts instead of
    asking torch CPU (no torch needed: enough to tell whether the family is portable)."""
    port = _plan_port(ix, family, torch_dtypes, cleanup)
    for host in dict.fromkeys(e.path for e in port.edits if "AT_DISPATCH_" in e.replacement):  # include what it uses
        text = "".join(e.replacement for e in port.edits if e.path == host)
        before = ix.tree.sources[host].decode("utf-8", "surrogateescape") if host in ix.tree.sources else ""
        for header, uses in (("ATen/Dispatch.h", r"AT_DISPATCH_(?!V2\()"), ("ATen/Dispatch_v2.h", r"AT_DISPATCH_V2\(")):
            if re.search(uses, text) and not re.search(uses, before):  # the file's own uses have their include
                port.edits = with_include(ix, port.edits, host, header)
    for stub in dict.fromkeys([port.stub, *(p.stub for p in port.parts)]):  # after Dispatch*.h, which sort first
        port.edits = with_stub_header(ix, port.edits, stub)
    return port


_NATIVE_INCLUDE = re.compile(rb"^#include <ATen/native/[^>]+>[^\n]*\n", re.M)
_ANY_INCLUDE = re.compile(rb"^#include [<\"][^>\"]+[>\"][^\n]*\n", re.M)


def with_stub_header(ix: Index, edits: list[Edit], stub: str) -> list[Edit]:
    """``edits`` plus the ``#include`` of the header declaring ``stub`` in the host file that registers it,
    when that file does not include it yet (UnaryKernel.mm includes UnaryOps.h, not Activation.h)."""
    decl = ix.tree.declared_stubs.get(stub)
    host = next((e.path for e in edits if f"REGISTER_DISPATCH({stub}," in e.replacement), None)
    if decl is None or host is None or not decl.path.startswith("aten/src/"):
        return edits
    return with_include(ix, edits, host, decl.path.removeprefix("aten/src/"))


def with_include(ix: Index, edits: list[Edit], host: str, header: str) -> list[Edit]:
    """``edits`` plus ``#include <header>`` in ``host`` (at its alphabetical place among the ATen/native includes
    for such a header, else among all includes) when the file does not include it yet."""
    line = f"#include <{header}>\n".encode()
    whole = next((e for e in edits if e.path == host and e.start == 0 and e.end == len(ix.tree.sources[host])), None)
    data = whole.replacement.encode("utf-8", "surrogateescape") if whole else ix.tree.sources[host]
    if f"<{header}>".encode() in data:
        return edits
    native = (header.startswith("ATen/native/") and list(_NATIVE_INCLUDE.finditer(data))) or list(
        _ANY_INCLUDE.finditer(data)
    )
    if not native:
        return edits
    later = next((m for m in native if m.group(0) > line), None)  # the block's alphabetical place
    pos = later.start() if later else native[-1].end()
    if whole is not None:
        text = (data[:pos] + line + data[pos:]).decode("utf-8", "surrogateescape")
        return [e if e is not whole else Edit(host, 0, whole.end, text) for e in edits]
    return edits + [Edit(host, pos, pos, line.decode())]


def _plan_port(ix: Index, family: str, torch_dtypes: bool, cleanup: bool) -> Port:
    done = _hand_written(ix, family) or _onto_registered_stub(ix, family)
    if done is not None:
        fb = FixBuilder(ix)
        done.cleanup = cleanup
        if not done.notes:
            done.notes.append(f"{family} already has a functor and {done.stub} an MPS registration: only rerouting")
        _reroute(ix, family, done, fb)
        return done
    riders: list[tuple[Impl, str]] = []
    if family in ix.families and family_impls(ix, family):
        own, riders, waiting = split_riders(ix, family)
        if own and waiting:
            names = ", ".join(im.entry.overload_name for im in family_impls(ix, family) if im not in own)
            raise PortBlocked(
                f"{names} call{'s' * (len(names.split(', ')) == 1)} {waiting[0]}_stub: port {waiting[0]} first "
                f"(mps-migrate port {waiting[0]}); {family} then reroutes {'them' if ', ' in names else 'it'} onto "
                "its registration",
                "another family's stub",
                None,
                after=waiting[0],
            )
        from migrate.port.multi import plan_multi

        multi = plan_multi(ix, family, own if riders else family_impls(ix, family), torch_dtypes, cleanup)
        if multi is not None:
            return multi
        impls, dag = translate_family(ix, family, own if riders else None)
    else:
        impls, dag = translate_family(ix, family)
    return write_kernel(ix, family, family, impls, dag, torch_dtypes, cleanup, riders)


def write_kernel(
    ix: Index,
    family: str,
    name: str,
    impls: list[Impl],
    dag: Dag,
    torch_dtypes: bool,
    cleanup: bool,
    riders=(),
    stub: str | None = None,
    reroute: bool = True,
    kwargs: dict | None = None,
) -> Port:
    """The port of ``dag`` as kernel ``name`` for ``stub`` (default: the one the family's overloads call);
    ``reroute``: also MPS's dispatch lines and the old code's cleanup (off for one stub of several)."""
    if stub is None:
        one_stub_each(ix, impls)
    _one_output(impls, dag)
    arity = len(dag.inputs)
    if family not in ix.functor_registrations:
        _target_files(ix, arity)  # the tree must be able to take the patch before anything else
    stub = stub or _stub_for(ix, family, impls)
    order_note = _check_iterator(ix, impls, dag)
    alpha = dag.alpha.name if dag.alpha is not None else None
    if dag.params:
        from migrate.port import params as struct_port

        iter_type = struct_port.check_stub(ix, stub, dag)
    else:
        _check_stub_takes(ix, stub, alpha, dag.source)
    nscalars = (dag.alpha is not None) + len(dag.params)
    ints, bools = (
        (cpu_takes(family, arity, "int32", nscalars, kwargs), cpu_takes(family, arity, "bool", nscalars, kwargs))
        if torch_dtypes
        else (None, None)
    )
    if dag.floating_only:  # the host computes the kernel's scalars for floating dtypes only (nan_to_num)
        ints = bools = False
    from migrate.port.idioms import apply as torch_faithful

    emitted, changes, idiom_notes = torch_faithful(dag, name, ix.tree.root)
    plan = plan_dtypes(emitted, ints if ints is not None else True, bools if bools is not None else True)
    port = Port(family, name, arity, dag, plan, impls, stub, emitted=emitted, cleanup=cleanup)
    for im, ridden in riders:  # they reroute with the rest (_reroute) and their old implementations go
        shared = im.entry.cpu_line_to_share().kernel_name
        fns = ", ".join(sorted({r.function for r in ix.registrations[ridden]}))
        port.notes.append(
            f"{im.entry.overload_name}: {shared} calls {ridden}, which MPS registers already ({fns}): only rerouting"
        )
        port.impls.append(im)
    port.notes += list(dag.notes) + [order_note] * bool(order_note) + changes + idiom_notes
    port.notes += _complex_paths(ix, family, impls)
    has_functor = name in ix.functor_registrations
    from migrate.port.stub_impl import replaced

    has_stub = any(r not in replaced(impls) for r in ix.registrations.get(stub, ()))
    if has_functor != has_stub:
        what = f"functor {name} is registered" if has_functor else f"{stub} is registered for MPS"
        raise PortBlocked(f"{what} but not the other half; finish that migration by hand", "half-ported", None)
    fb = FixBuilder(ix)
    if not has_functor:
        target = _target_files(ix, arity)
        port.convention = target.convention
        if emitted.params:  # several run-time scalars: a parameter struct (migrate/port/params.py)
            port.edits += struct_port.edits(ix, target, name, emitted, plan, stub, iter_type)
            return _finish(ix, family, port, fb, reroute)
        if target.convention in ("unary_1d", "binary_offsets") and alpha is not None:
            from migrate.port import scalar27

            kdata = ix.tree.sources[target.kpath]
            if arity == 1:
                port.convention = "unary_1d_scalar"
                port.edits += scalar27.unary_scalar_edits(target, kdata, name, emitted, plan)
                port.edits += scalar27.helper_edits(ix, target)
                port.edits += _host_stub_edits(
                    ix, target.hpath, target.hf, arity, name, stub, alpha, scalar27.stub_body(name, alpha)
                )
            else:
                port.convention = "binary_offsets_scalar"
                port.edits += scalar27.binary_kernel_edits(target, kdata, name, emitted, plan)
                port.edits += scalar27.binary_host_edits(ix, target, name, stub, alpha_name(emitted))
            return _finish(ix, family, port, fb, reroute)
        if target.convention == "ternary_offsets":  # 2.7: no ternary launch; the port adds one (ternary27)
            from migrate.port import ternary27

            if alpha is not None:
                raise PortBlocked(
                    f"{target.hpath}: the 2.7 ternary launch the port writes takes no run-time scalar; "
                    f"the graph reads {alpha}",
                    "run-time scalar (era)",
                    dag.source,
                )
            port.edits += ternary27.kernel_edits(target, ix.tree.sources[target.kpath], name, emitted, plan)
            port.edits += ternary27.host_edits(ix, target, name, stub)
            return _finish(ix, family, port, fb, reroute)
        if target.convention != "functor_registry":
            if alpha is not None:
                raise PortBlocked(
                    f"{target.hpath} launches {target.kind} kernels without run-time scalars "
                    f"({target.convention}); the graph reads {alpha}",
                    "run-time scalar (era)",
                    dag.source,
                )
            from migrate.port.era27 import binary_host_edits, kernel_edits

            port.edits += kernel_edits(target, ix.tree.sources[target.kpath], name, emitted, plan)
            port.edits += (
                _host_stub_edits(ix, target.hpath, target.hf, arity, name, stub)
                if arity == 1
                else binary_host_edits(ix, target, name, stub)
            )
            return _finish(ix, family, port, fb, reroute)
        kpath, mf, hpath, hf = target.kpath, target.mf, target.hpath, target.hf
        kdata = ix.tree.sources[kpath]
        fpos = _struct_end(kdata, max(f.span.start for f in mf.functors)) if mf.functors else 0
        if not mf.functors:
            fpos = kdata.find(b"\n", kdata.rfind(b"#include")) + 1
        port.edits.append(Edit(kpath, fpos, fpos, "\n" + functor(name, emitted, plan, dag.source, target.traits)))
        regs = [r for r in mf.registrations if r.path == kpath]
        rpos = _line_end(kdata, max(r.span.end for r in regs) - 1) if regs else len(kdata)
        lines = registration_lines(kdata, arity, name, plan, alpha is not None)
        port.edits.append(Edit(kpath, rpos, rpos, "".join(line + "\n" for line in lines)))
        port.edits += _host_stub_edits(ix, hpath, hf, arity, name, stub, alpha)
        port.edits = format_edits(ix.tree.root, port.edits)
    else:
        port.notes.append(f"{name} already has a functor and {stub} an MPS registration: only rerouting")
    if reroute:
        _reroute(ix, family, port, fb)
    return port


def _one_output(impls: list[Impl], dag: Dag) -> None:
    """Ports write one output per element; an operator returning several tensors (_prelu_kernel_backward's
    (grad_input, grad_weight)) has a stub whose iterator carries them all."""
    for im in impls:
        returns = im.entry.func.rsplit("->", 1)[-1]
        if len(re.findall(r"\bTensor\b", returns)) > 1:
            raise PortBlocked(
                f"{im.entry.overload_name or im.entry.name} returns {returns.strip()}: ports write kernels with one output",
                "several outputs",
                dag.source,
            )


def _finish(ix: Index, family: str, port: Port, fb: FixBuilder, reroute: bool) -> Port:
    if reroute:
        _reroute(ix, family, port, fb)
    port.edits = format_edits(ix.tree.root, port.edits)
    return port


def _reroute(ix: Index, family: str, port: Port, fb: FixBuilder) -> None:
    """Dispatch: MPS joins the shared CPU line of every overload still routed to MPSGraph; the old
    implementation, its include and the family's expected failures go."""
    from migrate.port.stub_impl import unregister_edits

    for im in port.impls:
        if im.registration is None:
            shared = im.entry.cpu_line_to_share()
            if shared is None:  # a ufunc op: its MPS line stays, the function calls the stub
                port.edits += _ufunc_body_edits(ix, im, port.stub)
                continue
            port.edits += fb.join_shared_line(im.entry, im.line, shared).edits
    port.edits += unregister_edits(ix, port.impls)
    if not port.cleanup:
        return
    port.edits = cleanup_by_fix_loop(ix, family, port.edits, {im.function.name for im in port.impls})


CLEANUP_CODES = ("MPS004", "MPS005", "MPS009")  # dead implementation, stale include, stale expected failure


def cleanup_by_fix_loop(ix: Index, family: str, edits: list[Edit], kernels: frozenset[str] = frozenset()) -> list[Edit]:
    """The family's cleanup is lint's own: the fix loop runs on the port's overlay (the tree with the
    port applied in memory) and applies the family's MPS004/005/009 fixes to a fixed point -- one
    edit applier, no second copy of those rules.  Kernel-file insertions stay as they are (a batch
    combines them); a file the cleanup changed becomes one whole-file edit.  ``kernels``: the family's old
    MPS functions, whatever family their names suggest (_prelu_kernel's is prelu_mps)."""
    from migrate.fixloop import family_of
    from migrate.config import Config
    from migrate.fixloop import fix_to_fixed_point
    from migrate.tree import load_tree

    overlay = apply_edits(ix.tree.sources, edits)
    tree = load_tree(ix.tree.root, {**ix.tree.sources, **overlay})  # ix's tree may itself be an overlay
    outcome = fix_to_fixed_point(
        ix.tree.root,
        Config(select=list(CLEANUP_CODES)),
        unsafe=True,
        tree=tree,
        keep=lambda f, index: f.code in CLEANUP_CODES and (family_of(f, index) == family or f.kernel in kernels),
    )
    if not outcome.new:
        return edits
    final = {**overlay, **outcome.new}
    helpers = _helpers_of(ix, kernels)
    final.update(_without_dead_helpers(ix.tree.root, {**ix.tree.sources, **final}, set(outcome.new), helpers))
    for p in outcome.new:
        final[p] = _without_dead_types(ix.tree.sources[p], final[p])
    keep = [e for e in edits if e.path not in outcome.new]
    whole = [
        Edit(p, 0, len(ix.tree.sources[p]), final[p].decode("utf-8", "surrogateescape")) for p in sorted(outcome.new)
    ]
    return keep + whole


def _helpers_of(ix: Index, kernels: frozenset[str]) -> set[str]:
    """Static functions the family's old MPS functions call, directly or through each other."""
    out: set[str] = set()
    todo = [f for k in kernels for f in ix.functions.get(k, ())]
    while todo:
        f = todo.pop()
        for name in f.calls:
            for g in ix.functions.get(name, ()):
                if g.is_static and g.path == f.path and name not in out:
                    out.add(name)
                    todo.append(g)
    return out


def _without_dead_helpers(root, sources: dict[str, bytes], paths: set[str], helpers: set[str]) -> dict[str, bytes]:
    """The files of ``paths`` without the ``helpers`` nothing in them calls any more (a static function is
    file-local): the shared graph helpers of the last overloads a port removed.  Repeated, for helpers of
    helpers."""
    from migrate.tree import load_tree

    changed: dict[str, bytes] = {}
    while helpers:
        ix = Index(load_tree(root, {**sources, **changed}))
        dead = []
        for p in sorted(paths & set(ix.tree.hosts)):
            data = ix.tree.sources[p]
            for f in ix.tree.hosts[p].functions:
                if f.name in helpers and f.is_static and len(ix.functions.get(f.name, ())) == 1:
                    uses = len(re.findall(rb"\b" + re.escape(f.name.encode()) + rb"\b", data))
                    own = len(re.findall(rb"\b" + re.escape(f.name.encode()) + rb"\b", data[f.span.start : f.span.end]))
                    if uses == own:
                        dead.append(f)
        fixes = [fx for f in dead if (fx := ix.fixes.remove_function(f)) is not None]
        if not fixes:
            break
        edits = [e for fx in fixes for e in fx.edits]
        changed.update(apply_edits({**sources, **changed}, edits))
        helpers = helpers - {f.name for f in dead}
    return changed


_TYPE_AT_LINE_START = re.compile(rb"^(?:struct|class)\s+(\w+)\b[^;{]*\{", re.M)
_EMPTY_NAMESPACE = re.compile(rb"^namespace\s+(\w+)\s*\{\s*\}[ \t]*(?://[^\n]*)?\n", re.M)


def _without_dead_types(old: bytes, new: bytes) -> bytes:
    """``new`` without what the port's deletions left unused: a file-scope type (the cached-graph struct of
    the removed graph code) used before and named nowhere outside its own definition now, then a namespace
    left empty."""
    changed = True
    while changed:
        changed = False
        code = SourceFile(new).code  # comments and strings blanked: a `struct` there is no type
        for m in _TYPE_AT_LINE_START.finditer(code):
            end = closing_brace(code, m.end() - 1)
            if end is None or new[end : end + 2] != b"};":
                continue
            name = re.compile(rb"\b" + re.escape(m.group(1)) + rb"\b")
            outside = len(name.findall(new)) - len(name.findall(new[m.start() : end]))
            if outside == 0 and len(name.findall(old)) > len(name.findall(new[m.start() : end])):
                stop = new.find(b"\n", end) + 1 or len(new)
                if new[stop : stop + 1] == b"\n" and (m.start() < 2 or new[m.start() - 2 : m.start()] == b"\n\n"):
                    stop += 1
                new, changed = new[: m.start()] + new[stop:], True
                break
    if not _EMPTY_NAMESPACE.search(old):
        new = _EMPTY_NAMESPACE.sub(b"", new)
    return new


def apply_edits(sources: dict[str, bytes], edits: list[Edit]) -> dict[str, bytes]:
    """New file contents; insertions at one offset keep their order; overlaps are an error."""
    by_path: dict[str, list[tuple[int, Edit]]] = {}
    for seq, e in enumerate(edits):
        by_path.setdefault(e.path, []).append((seq, e))
    out = {}
    for path, items in by_path.items():
        items.sort(key=lambda x: (x[1].start, x[1].end, x[0]))
        for (_, a), (_, b) in zip(items, items[1:]):
            if b.start < a.end:
                raise ValueError(f"overlapping edits in {path} at bytes {a.start}-{a.end} and {b.start}-{b.end}")
        data = sources[path]
        for _, e in reversed(items):
            data = data[: e.start] + e.replacement.encode() + data[e.end :]
        out[path] = data
    return out

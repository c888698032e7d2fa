"""A family's port written: its kernel in the target files' convention (migrate/conventions/target.py reads it from the
tree; ``host_name_kernels``, ``scalar_launcher``, ``ternary_launcher``, ``params``, else a functor), the host stub and
dispatch, then the reroute of MPS onto the shared CPU line and the old code's cleanup."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from migrate.fixes import FixBuilder
from migrate.index import Index
from migrate.model import Edit
from migrate.port.dag import Dag
from migrate.port.emit import Plan, alpha_name, functor, plan_dtypes
from migrate.port import params as struct_port
from migrate.port import scalar_launcher
from migrate.port import ternary_launcher
from migrate.port import two_outputs
from migrate.port.host_name_kernels import binary_host_edits, kernel_edits
from migrate.port.fmt import format_edits
from migrate.port.host_edits import (
    check_stub_takes,
    host_stub_edits,
    registration_lines,
    ufunc_body_edits,
    with_include,
)
from migrate.port.locate import Impl
from migrate.port.stubs import one_stub_each, stub_for
from migrate.conventions.target import KIND
from migrate.port.style import detect
from migrate.port.text_edits import cleanup_by_fix_loop, line_end, struct_end
from migrate.port.translate import PortBlocked


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
    convention: str = ""  # the target files' convention (migrate.conventions.target), when the port writes a kernel
    parts: list[Port] = field(default_factory=list)  # one per stub when the CPU kernel picks among several
    choice: object = None  # this part's migrate.conventions.stub_choice.StubChoice

    @property
    def kind(self) -> str:
        return KIND[self.arity]


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
    outputs = two_outputs.graph_outputs(ix, impls, dag)  # None: one output
    arity = len(dag.inputs)
    if family not in ix.functor_registrations:
        detect(ix, arity)  # the tree must be able to take the patch before anything else
    stub = stub or stub_for(ix, family, impls)
    order_note = _check_iterator(ix, impls, dag)
    alpha = dag.alpha.name if dag.alpha is not None else None
    if dag.params:
        iter_type = struct_port.check_stub(ix, stub, dag)
    else:
        check_stub_takes(ix, stub, alpha, dag.source)
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
    for im, ridden in riders:  # they reroute with the rest (reroute_dispatch) and their old implementations go
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
        target = detect(ix, arity)
        port.convention = target.convention
        if outputs is not None:  # two outputs: one functor each, the kernel writes both (two_outputs)
            port.edits += _two_output_edits(ix, port, outputs, plan)
            return _finish(ix, family, port, fb, reroute)
        if emitted.params:  # several run-time scalars: a parameter struct (migrate/port/params.py)
            port.edits += struct_port.edits(ix, target, name, emitted, plan, stub, iter_type)
            return _finish(ix, family, port, fb, reroute)
        if target.convention in ("unary_1d", "binary_offsets") and alpha is not None:
            kdata = ix.tree.sources[target.kpath]
            if arity == 1:
                port.convention = "unary_1d_scalar"
                port.edits += scalar_launcher.unary_scalar_edits(target, kdata, name, emitted, plan)
                port.edits += scalar_launcher.helper_edits(ix, target)
                port.edits += host_stub_edits(
                    ix, target.hpath, target.hf, arity, name, stub, alpha, scalar_launcher.stub_body(name, alpha)
                )
            else:
                port.convention = "binary_offsets_scalar"
                port.edits += scalar_launcher.binary_kernel_edits(target, kdata, name, emitted, plan)
                port.edits += scalar_launcher.binary_host_edits(ix, target, name, stub, alpha_name(emitted))
            return _finish(ix, family, port, fb, reroute)
        if target.convention == "ternary_offsets" and alpha is not None:  # addcmul: a one-field parameter struct
            one = dataclasses.replace(emitted, params=[emitted.alpha], alpha=None)
            iter_type = struct_port.check_stub(ix, stub, one)
            port.emitted = one
            opmath = _defines(ix, "c10/metal/utils.h", "opmath_t")  # CPU binds it in float for half and bfloat
            port.notes.append(
                f"{alpha} reaches the kernel as a one-field parameter struct (the 2.7 era has no ternary launch "
                f"with a run-time scalar), in {'opmath_t<T>, as CPU binds it' if opmath else 'T: no opmath_t here'}"
            )
            port.edits += struct_port.edits(ix, target, name, one, plan, stub, iter_type, opmath)
            port.convention = "ternary_params"  # verified through the host path only (batch_verify)
            if opmath:
                port.edits = with_include(ix, port.edits, target.hpath, "ATen/OpMathType.h")
            return _finish(ix, family, port, fb, reroute)
        if target.convention == "ternary_offsets":  # 2.7: no ternary launch; the port adds one (ternary_launcher)
            port.edits += ternary_launcher.kernel_edits(target, ix.tree.sources[target.kpath], name, emitted, plan)
            port.edits += ternary_launcher.host_edits(ix, target, name, stub)
            return _finish(ix, family, port, fb, reroute)
        if target.convention != "functor_registry":
            if alpha is not None:
                raise PortBlocked(
                    f"{target.hpath} launches {target.kind} kernels without run-time scalars "
                    f"({target.convention}); the graph reads {alpha}",
                    "run-time scalar (era)",
                    dag.source,
                )
            port.edits += kernel_edits(target, ix.tree.sources[target.kpath], name, emitted, plan)
            port.edits += (
                host_stub_edits(ix, target.hpath, target.hf, arity, name, stub)
                if arity == 1
                else binary_host_edits(ix, target, name, stub)
            )
            return _finish(ix, family, port, fb, reroute)
        kpath, mf, hpath, hf = target.kpath, target.mf, target.hpath, target.hf
        kdata = ix.tree.sources[kpath]
        fpos = struct_end(kdata, max(f.span.start for f in mf.functors)) if mf.functors else 0
        if not mf.functors:
            fpos = kdata.find(b"\n", kdata.rfind(b"#include")) + 1
        port.edits.append(Edit(kpath, fpos, fpos, "\n" + functor(name, emitted, plan, dag.source, target.traits)))
        regs = [r for r in mf.registrations if r.path == kpath]
        rpos = line_end(kdata, max(r.span.end for r in regs) - 1) if regs else len(kdata)
        lines = registration_lines(kdata, arity, name, plan, alpha is not None)
        port.edits.append(Edit(kpath, rpos, rpos, "".join(line + "\n" for line in lines)))
        port.edits += host_stub_edits(ix, hpath, hf, arity, name, stub, alpha)
        port.edits = format_edits(ix.tree.root, port.edits)
    else:
        port.notes.append(f"{name} already has a functor and {stub} an MPS registration: only rerouting")
    if reroute:
        reroute_dispatch(ix, family, port, fb)
    return port


def _defines(ix: Index, header: str, name: str) -> bool:
    try:
        return re.search(rb"\b" + name.encode() + rb"\b", (ix.tree.root / header).read_bytes()) is not None
    except OSError:
        return False


def _two_output_edits(ix: Index, port: Port, outputs: list, plan: Plan) -> list[Edit]:
    """Both outputs' functors (each made torch-faithful on its own), the kernels writing them and the launcher,
    in the 2.7 era's binary_mps_impl file (migrate/port/two_outputs.py)."""
    from migrate.port.idioms import apply as torch_faithful

    dag = port.dag
    target = detect(ix, 2)
    if target.convention != "binary_offsets":
        raise PortBlocked(
            f"{port.family} returns two tensors: the port writes two-output kernels beside binary_mps_impl "
            f"(2.7-era trees); {target.hpath} launches {target.convention}",
            "several outputs",
            dag.source,
        )
    port.convention = "two_outputs"
    emitted, plans = [], []
    for node in outputs:
        if node is dag.output:
            emitted.append(port.emitted)
            plans.append(plan)
            continue
        more, changes, notes = torch_faithful(Dag(dag.inputs, node, dag.source), port.name, ix.tree.root)
        emitted.append(more)
        plans.append(plan_dtypes(more, bool(plan.int_dtypes)))
        port.notes += changes + notes
    port.notes.append(
        f"two outputs, in the order {port.family} returns them: {port.name}_functor writes the first, "
        f"{port.name}_out1_functor the second"
    )
    data = ix.tree.sources[target.kpath]
    edits = two_outputs.kernel_edits(target, data, port.name, emitted, plans, dag.source)
    return edits + two_outputs.host_edits(ix, target, port.name, port.stub, port.arity)


def _check_iterator(ix: Index, impls: list[Impl], dag) -> str | None:
    """The kernel sees the operands of the iterator the shared CPU kernel (or its structured meta function)
    builds, in that iterator's order: the graph's inputs are put in that order (a note says so when it is
    not the schema's); an iterator over other operands blocks the port."""
    from migrate.conventions.cpu_iter import iterator_inputs, meta_of, positions
    from migrate.port.locate import function_text
    from migrate.source.params import definition_params
    from migrate.port.operands import parameter

    for im in impls:
        shared = im.entry.cpu_line_to_share()
        if shared is None or im.registration is not None:
            continue
        meta = meta_of(im.entry)
        cpu = positions(ix.tree.root, shared.kernel_name, meta)
        params = [p.name for p in definition_params(*function_text(ix, im.function))]
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
    scalar = True if dtype == "bool" else 2  # an int scalar would promote bool to int64: clamp_max(bool, 2) works
    for extra in dict.fromkeys([0, scalars]):
        try:
            op(*([x] * arity), *([scalar] * extra), **(kwargs or {}))
            return True
        except Exception:
            continue
    return False


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


def _finish(ix: Index, family: str, port: Port, fb: FixBuilder, reroute: bool) -> Port:
    if reroute:
        reroute_dispatch(ix, family, port, fb)
    port.edits = format_edits(ix.tree.root, port.edits)
    return port


def reroute_dispatch(ix: Index, family: str, port: Port, fb: FixBuilder) -> None:
    """Dispatch: MPS joins the shared CPU line of every overload still routed to MPSGraph; the old
    implementation, its include and the family's expected failures go."""
    from migrate.port.stub_impl import unregister_edits

    for im in port.impls:
        if im.registration is None:
            shared = im.entry.cpu_line_to_share()
            if shared is None:  # a ufunc op: its MPS line stays, the function calls the stub
                port.edits += ufunc_body_edits(ix, im, port.stub)
                continue
            port.edits += fb.join_shared_line(im.entry, im.line, shared).edits
    port.edits += unregister_edits(ix, port.impls)
    if not port.cleanup:
        return
    port.edits = cleanup_by_fix_loop(ix, family, port.edits, {im.function.name for im in port.impls})

"""A family's port planned: the graph its MPSGraph code builds (``translate_family``), then which port it
gets -- a reroute onto a functor and registration that exist, a ride on another family's registered stub,
one kernel per stub (migrate/port/multi.py), or one kernel (migrate/port/write.py) -- and the includes the
edits need (``plan_port``)."""

from __future__ import annotations

import re

from migrate.fixes import FixBuilder
from migrate.index import Index
from migrate.model import NativeEntry
from migrate.port.dag import Dag
from migrate.port.host_edits import with_include, with_stub_header
from migrate.port.locate import Impl, family_impls, graph_dag
from migrate.port.multi import plan_multi
from migrate.port.selectors import blocking, family_selectors
from migrate.port.stubs import one_stub_each, registered_arity, split_riders, stub_for
from migrate.conventions.target import KERNEL_FILE
from migrate.port.text_edits import struct_end
from migrate.port.translate import PortBlocked
from migrate.port.write import NothingToPort, Port, reroute_dispatch, write_kernel


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


def _plan_port(ix: Index, family: str, torch_dtypes: bool, cleanup: bool) -> Port:
    from migrate.port.reduce.plan import plan_reduction

    reduction = plan_reduction(ix, family, cleanup)  # rules/reductions.yaml: reductions, softmax, norms, losses
    if reduction is not None:
        return reduction  # type: ignore[return-value]
    done = _hand_written(ix, family) or _onto_registered_stub(ix, family)
    if done is not None:
        fb = FixBuilder(ix)
        done.cleanup = cleanup
        if not done.notes:
            done.notes.append(f"{family} already has a functor and {done.stub} an MPS registration: only rerouting")
        reroute_dispatch(ix, family, done, fb)
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
        multi = plan_multi(ix, family, own if riders else family_impls(ix, family), torch_dtypes, cleanup)
        if multi is not None:
            return multi
        impls, dag = translate_family(ix, family, own if riders else None)
    else:
        impls, dag = translate_family(ix, family)
    return write_kernel(ix, family, family, impls, dag, torch_dtypes, cleanup, riders)


def _hand_written(ix: Index, family: str) -> Port | None:
    """A functor and an MPS stub registration already exist (e.g. a completed skeleton): a reroute
    needs no translation of the graph.  A skeleton's placeholder is refused."""
    if family not in ix.functor_registrations or family not in ix.families:
        return None
    impls = family_impls(ix, family)
    if not impls:
        return None
    try:
        stub = stub_for(ix, family, impls)
    except PortBlocked:
        return None
    if stub not in ix.registrations:
        return None
    for f in ix.tree.metals.values():
        for fn in f.functors:
            data = ix.tree.sources[f.path]
            if fn.name == family and b"TODO(mps-migrate)" in data[fn.span.start : struct_end(data, fn.span.start)]:
                raise PortBlocked(
                    f"{family}_functor still holds the skeleton's TODO(mps-migrate) placeholder: "
                    f"write the kernel first",
                    "skeleton placeholder",
                    fn.span.where,
                )
    return Port(family, family, registered_arity(ix, family), None, None, impls, stub)  # type: ignore[arg-type]


def _onto_registered_stub(ix: Index, family: str) -> Port | None:
    """sub_out calls add_stub(..., -alpha): once add_stub has an MPS registration, sub needs no kernel of its
    own -- MPS joins sub's CPU line and runs what CPU runs, the stub with the negated scalar."""
    impls = family_impls(ix, family) if family in ix.families else []
    if not impls:
        return None
    try:
        stub_for(ix, family, impls)
        return None  # the family's own stub: the usual port
    except PortBlocked as exc:
        if exc.construct != "another family's stub":
            return None
    stub = stub_for(ix, family, impls, foreign=True)
    owner = stub.removesuffix("_stub")
    from migrate.port.stub_impl import replaced

    if stub not in ix.registrations or all(r in replaced(impls) for r in ix.registrations[stub]):
        return None  # registered only by the family's own MPSGraph code (where_kernel_mps): nothing to ride on
    from migrate.conventions.cpu_iter import calls_stub_on_its_iterator, negated_scalars

    shared = {d.kernel_name for im in impls if (d := im.entry.cpu_line_to_share()) is not None}
    if not shared or not all(calls_stub_on_its_iterator(ix.tree.root, k, stub) for k in shared):
        return None  # index_add's CPU kernel reaches add_stub through helpers: not add's computation

    port = Port(family, owner, registered_arity(ix, owner), None, None, impls, stub)  # type: ignore[arg-type]
    fns = ", ".join(sorted({r.function for r in ix.registrations[stub]}))
    kernels = sorted(shared)
    neg = sorted({n for k in kernels for n in negated_scalars(ix.tree.root, k, stub)})
    how = f" with {', '.join('-' + n for n in neg)}" if neg else ""
    port.notes.append(
        f"{', '.join(kernels)} calls {stub}{how}, which MPS registers already ({fns}): "
        f"{family} needs no kernel of its own, only rerouting"
    )
    return port


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


def tensor_inputs(e: NativeEntry) -> int:
    """Tensor arguments of a schema before its keyword-only ``*`` (out= tensors excluded)."""
    args = e.func[e.func.index("(") + 1 :]
    depth, cur, parts = 0, "", []
    for c in args:
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    parts.append(cur.strip())
    n = 0
    for p in parts:
        if p == "*":
            break
        if p.startswith("Tensor") and not p.startswith(("Tensor(", "Tensor[]")) and "!" not in p:
            n += 1
    return n

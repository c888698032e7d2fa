"""A reduction, softmax, norm or loss family's port: the old graph checked against the recipe, the kernels
appended to (or written as) ``kernels/<host file>.metal``, each overload's body replaced by a launch through
ReduceLaunch.h, and the old graph code the bodies leave unused removed by lint's own fix loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from migrate.index import Index
from migrate.model import Edit
from migrate.port.host_edits import with_include
from migrate.port.locate import Impl, family_impls
from migrate.port.reduce import host as h
from migrate.port.reduce.kernel import library_of, preamble, section
from migrate.port.reduce.recipes import Recipe, recipe, selector_combines
from migrate.port.reduce.specialise import specialised_selectors
from migrate.port.translate import PortBlocked

KERNELS_DIR = "aten/src/ATen/native/mps/kernels"


@dataclass
class ReductionPort:
    family: str
    name: str
    impls: list[Impl]
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    parts: list = field(default_factory=list)
    stub: str = ""
    kind: str = "reduction"
    convention: str = "reduction kernel + ReduceLaunch.h"
    cleanup: bool = True
    kernels: tuple[str, ...] = ()


def graph_combines(ix: Index, impls: list[Impl]) -> set[str]:
    """The combines the old graph's reduction selectors compute (the family's functions and their helpers, each
    helper specialised for the enum values the family passes it)."""
    stems = sorted(selector_combines().items(), key=lambda kv: -len(kv[0]))  # longest stem first
    out = set()
    for sel in specialised_selectors(ix, [i.function for i in impls]):
        head = sel.split(":")[0]
        out.update(next(([c] for stem, c in stems if head.startswith(stem)), []))
    return out


def plan_reduction(ix: Index, family: str, cleanup: bool = True) -> ReductionPort | None:
    """The family's reduction port, or None when rules/reductions.yaml has no recipe for it."""
    r = recipe(family)
    if r is None:
        return None
    impls = family_impls(ix, family)
    if not impls:
        return None
    where = impls[0].function.span.where
    if r.route == "composite":
        return _composite(ix, r, impls, cleanup)
    found = graph_combines(ix, impls)
    extra = sorted(found - set(r.graph))
    if extra or not found:  # a reduction already ported (var, for var_mean) is no longer in the graph
        what = f"also reduces with {', '.join(extra)}" if extra else f"does not reduce with {', '.join(r.graph)}"
        raise PortBlocked(
            f"the old graph of {family} {what} (it uses {', '.join(sorted(found)) or 'no reduction selector'}): "
            "the recipe does not describe it",
            "reduction recipe",
            where,
        )
    if not (ix.tree.root / "c10/metal/utils.h").exists():  # the kernels include c10/metal (2.6.0: inline Metal)
        raise PortBlocked(
            f"{family}'s graph is a recipe's, but the tree predates c10/metal, which the generated kernels include",
            "pre-c10/metal kernel file",
            where,
        )
    unported = [i.entry.overload_name for i in impls if i.entry.overload_name not in r.bodies]
    if unported:
        raise PortBlocked(f"no port body for {', '.join(unported)}", "reduction overload", where)
    kind = "gather" if r.kernels[0].form == "gather" else "reduction"
    port = ReductionPort(family, r.kernels[0].name, impls, kind=kind, kernels=tuple(k.name for k in r.kernels))
    port.edits = _edits(ix, r, impls)
    port.notes = [
        f"{family}: {len(r.kernels)} Metal kernel(s) ({', '.join(k.name for k in r.kernels)}) in "
        f"{_kernel_path(impls[0])}; {len(impls)} overload(s) launch them through {h.HEADER}",
        *r.notes,
    ]
    if cleanup:
        from migrate.port.text_edits import cleanup_by_fix_loop

        port.edits = cleanup_by_fix_loop(ix, family, port.edits, frozenset(i.function.name for i in impls))
    return port


def _kernel_path(im: Impl) -> str:
    return f"{KERNELS_DIR}/{PurePosixPath(im.function.path).stem}.metal"


def _edits(ix: Index, r: Recipe, impls: list[Impl]) -> list[Edit]:
    sources = ix.tree.sources
    lib = library_of(sources, ix.tree.root)
    edits: list[Edit] = []
    kpath = _kernel_path(impls[0])
    old = sources.get(kpath, b"").decode("utf-8", "surrogateescape")
    head = "" if "reduce_offset(" in old else preamble(lib) + "\n"
    if old and head:  # a kernel file of the tree's own: its includes stay, the preamble's others follow them
        head = "\n" + "\n".join(ln for ln in head.split("\n") if not (ln.startswith("#include") and ln in old))
    edits.append(Edit(kpath, len(old.encode()), len(old.encode()), head + section(r, lib, old + head)))
    if h.HEADER not in sources:
        edits.append(Edit(h.HEADER, 0, 0, h.HEADER_TEXT))
    for im in impls:
        f = im.function
        data = sources[f.path]
        start, end = h.body_span(data, f.span.start, f.span.end)
        text = data[f.span.start : f.span.end].decode("utf-8", "surrogateescape")
        body = h.render_body(
            r.bodies[im.entry.overload_name], im.entry, text, f.span.line, r.kernels[0].name, f.span.where
        )
        edits.append(Edit(f.path, start, end, body))
    for path in dict.fromkeys(im.function.path for im in impls):
        edits = with_include(ix, edits, path, h.INCLUDE)
    return edits


COMPOSITE_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")


def _composite(ix: Index, r: Recipe, impls: list[Impl], cleanup: bool) -> ReductionPort:
    """A family that is views and copies in torch: its MPS-only dispatch line goes, so MPS runs the composite kernel
    the yaml already names; the MPSGraph function it leaves unused goes with it. No kernel is written."""
    from migrate.fixes import FixBuilder

    fb = FixBuilder(ix)
    edits: list[Edit] = []
    for im in impls:
        composite = [k for line in im.entry.dispatch for k in line.keys if k in COMPOSITE_KEYS]
        if im.line.keys != ("MPS",) or not composite:
            raise PortBlocked(
                f"{im.entry.overload_name}: no composite kernel to route MPS to (or its MPS line is shared)",
                "no composite",
                im.line.span.where,
            )
        edits += fb.remove_line(im.line.span, f"route {im.entry.overload_name} to its composite kernel").edits
    port = ReductionPort(r.family, "", impls, kind="composite", convention="composite route", kernels=())
    keys = sorted({k for im in impls for line in im.entry.dispatch for k in line.keys if k in COMPOSITE_KEYS})
    port.notes = [
        f"{r.family}: MPS drops its own dispatch line and runs the {', '.join(keys)} kernel (views and a copy in "
        "torch); no Metal kernel is written",
        *r.notes,
    ]
    if cleanup:
        from migrate.port.text_edits import cleanup_by_fix_loop

        edits = cleanup_by_fix_loop(ix, r.family, edits, frozenset(i.function.name for i in impls))
    port.edits = edits
    return port

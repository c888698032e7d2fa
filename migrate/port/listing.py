"""`port --list`: every MPSGraph-routed family, portable or not, and why."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from migrate.index import Index
from migrate.port.locate import mpsgraph_families
from migrate.port.patch import plan_port, translate_family
from migrate.port.stubs import own_impls
from migrate.port.translate import PortBlocked
from migrate.port.write import NothingToPort
from migrate.port.verdict_only import verdict_only


@dataclass(frozen=True)
class Verdict:
    family: str
    status: str  # portable | translatable (the graph translates; the tree's target files block the patch) | blocked
    overloads: tuple[str, ...]
    detail: str  # the DAG, or the reason
    construct: str = ""  # what blocks it
    where: str = ""


def verdict(ix: Index, family: str) -> Verdict:
    """Whether ``family`` ports, and why not (``port --list``, ``status``): planned for the verdict alone."""
    with verdict_only():  # no clang-format, no torch example: neither changes a verdict
        return _verdict(ix, family)


def _verdict(ix: Index, family: str) -> Verdict:
    overloads = tuple(
        e.overload_name
        for e in ix.families[family]
        if ix.routes[e.overload_name].impl in ("mpsgraph", "mixed") and ix.routes[e.overload_name].via == "explicit"
    )
    from migrate.port.reduce.plan import plan_reduction

    try:
        reduction = plan_reduction(ix, family, cleanup=False)
    except PortBlocked as exc:  # the graph understood, the tree's files not ready: translatable
        status = "translatable" if exc.construct == "pre-c10/metal kernel file" else "blocked"
        return Verdict(family, status, overloads, exc.reason, exc.construct, exc.where or "")
    if reduction is not None:
        what = ", ".join(reduction.kernels) or "no kernel, MPS takes the yaml's composite kernel"
        return Verdict(family, "portable", overloads, f"{reduction.kind}: {what}")
    try:
        impls, dag = translate_family(ix, family, own_impls(ix, family))
    except PortBlocked as exc:
        if exc.construct != "several stubs":
            return Verdict(family, "blocked", overloads, exc.reason, exc.construct, exc.where or "")
        try:  # one kernel per stub (migrate/port/multi.py)
            port = plan_port(ix, family, torch_dtypes=False, cleanup=False)
        except PortBlocked as exc2:
            return Verdict(family, "blocked", overloads, exc2.reason, exc2.construct, exc2.where or "")
        parts = "; ".join(f"{p.name}: {p.dag.structure()}" for p in port.parts)
        return Verdict(family, "portable", overloads, f"{port.kind}, one kernel per stub: {parts}")
    try:
        port = plan_port(ix, family, torch_dtypes=False, cleanup=False)  # portable or not: the dtypes do not decide it
    except PortBlocked as exc:
        # a blocker about the tree's target files names no line of its own: the graph code being ported
        return Verdict(
            family,
            "translatable",
            overloads,
            f"{dag.structure()} -- {exc.reason}",
            exc.construct,
            exc.where or impls[0].function.span.where,
        )
    except NothingToPort as exc:  # pragma: no cover - translate_family already found overloads
        return Verdict(family, "blocked", overloads, str(exc), "nothing to port")
    return Verdict(family, "portable", overloads, f"{port.kind}: {dag.structure()}")


def render(verdicts: list[Verdict], width: int = 160) -> str:
    """The --list table; long details are wrapped so that no line passes ``width`` columns."""
    import textwrap

    fw = max((len(v.family) for v in verdicts), default=6)
    out = []
    for v in verdicts:
        where = f"  [{v.where}]" if v.where and v.status != "portable" else ""
        head = f"{v.family:<{fw}}  {v.status:<12}  "
        lines = textwrap.wrap(v.detail + where, width - len(head), break_on_hyphens=False) or [""]
        out += [(head if k == 0 else " " * len(head)) + line for k, line in enumerate(lines)]
    return "\n".join(out) + "\n"


def list_families(ix: Index) -> list[Verdict]:
    return [verdict(ix, f) for f in mpsgraph_families(ix)]


def summary(verdicts: list[Verdict], top: int = 10) -> str:
    n = Counter(v.status for v in verdicts)
    blockers = Counter(v.construct for v in verdicts if v.status == "blocked")
    targets = Counter(v.construct for v in verdicts if v.status == "translatable")
    lines = [
        f"{len(verdicts)} MPSGraph-routed families: {n['portable']} portable, "
        f"{n['translatable']} translatable but blocked by the tree's target files, {n['blocked']} blocked"
    ]
    if blockers:
        lines.append("top blockers: " + ", ".join(f"{k} ({c})" for k, c in blockers.most_common(top)))
    if targets:
        lines.append("target-file blockers: " + ", ".join(f"{k} ({c})" for k, c in targets.most_common(top)))
    import textwrap

    return "\n".join(
        w for line in lines for w in textwrap.wrap(line, 160, subsequent_indent="  ", break_on_hyphens=False)
    )

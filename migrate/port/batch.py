"""``port --all``: port every portable family, verify each against torch CPU, one table.

Every family's patch is planned against the unchanged tree (one reviewable unit each; ``--patch-dir``
writes one file per family).  Verify compiles a kernel file once per distinct text, so each family is
verified with the *combined* kernel-file additions of all ports plus its own host and dispatch edits:
the kernel files compile once for the whole batch, and a family's own kernel is what runs.

A verify result is ``pass`` (no failing cell), ``FAIL`` (its cells name the cause), or ``pass*`` when
every failing cell is one where the tree's own native kernel of the same launch convention (verified
unpatched, the baseline) fails in the same (dtype, layout): the emulated host, or upstream's host,
behaves that way for every kernel of that convention, the port did not bring it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.apply import unified_diff
from migrate.index import Index
from migrate.port.locate import mpsgraph_families
from migrate.port.patch import NothingToPort, Port, apply_edits, plan_port
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree


@dataclass
class Row:
    family: str
    target: str = ""  # kernel file written to (or "" when blocked)
    convention: str = ""
    verify: str = ""  # pass | pass* | FAIL | blocked | not run
    detail: str = ""  # failure / blocker
    changes: list[str] = field(default_factory=list)  # behaviour changes from the old MPSGraph path
    patch: str = ""  # the family's unified diff against the unchanged tree (or after ``after``'s patch)
    port: Port | None = None
    after: str = ""  # planned on the tree with this family's port applied (sub reroutes onto add's stub)
    base: dict[str, bytes] = field(default_factory=dict)  # that tree's changed files
    chain: list[str] = field(default_factory=list)  # every port ``base`` holds, in the order they were applied
    standalone: bool = False  # its kernel edits are offsets into kernel files ``base`` changed: verified alone

    def as_json(self) -> dict:
        return {
            "family": self.family,
            "target": self.target,
            "convention": self.convention,
            "verify": self.verify,
            "detail": self.detail,
            "behaviour_changes": self.changes,
        }


def plan_all(ix: Index, families: list[str] | None = None) -> list[Row]:
    rows, waiting = [], {}
    for fam in families or mpsgraph_families(ix):
        row = Row(fam)
        rows.append(row)
        try:
            _plan(ix, row)
        except (PortBlocked, NothingToPort, ValueError) as exc:
            where = f" ({exc.where})" if isinstance(exc, PortBlocked) and exc.where else ""
            row.verify, row.detail = "blocked", f"{getattr(exc, 'reason', exc)}{where}"
            if getattr(exc, "after", None):
                waiting[fam] = exc.after
    by_family = {r.family: r for r in rows}
    for fam, owner in list(waiting.items()):  # sub after add: planned on the tree with add's port applied
        first = by_family.get(owner)
        if first is None or first.port is None or first.chain:
            continue
        base = apply_edits(ix.tree.sources, first.port.edits)
        row = by_family[fam]
        try:
            _plan(Index(load_tree(ix.tree.root, {**ix.tree.sources, **base})), row)
        except (PortBlocked, NothingToPort, ValueError):
            continue
        row.after, row.base, row.verify, row.chain = owner, base, "", [owner]
        row.standalone = bool(_kernel_paths(row.port) & _kernel_paths(first.port))
        row.detail = f"planned after {owner}'s port (its patch applies on top of {owner}.diff)"
        del waiting[fam]
    for _ in range(2):  # clamp: after clamp_max (itself after minimum), then clamp_min (after maximum)
        for fam, owner in waiting.items():
            if by_family[fam].port is None:
                _plan_after_chain(ix, by_family, by_family[fam], owner)
    return rows


_MAX_OWNERS = 8


def _plan_after_chain(ix: Index, by_family: dict[str, Row], row: Row, owner: str) -> None:
    """Plan ``row`` on the tree with its owners' ports applied, each re-planned on the ports before it (the
    owners' own owners first); an owner it then waits for joins the chain.  Left blocked when an owner has no
    port or a port of the chain no longer plans."""
    chain: list[str] = []
    while len(chain) < _MAX_OWNERS:
        first = by_family.get(owner)
        if first is None or first.port is None or owner in chain:
            return
        chain += [f for f in [*first.chain, owner] if f not in chain]
        base = _compose(ix, chain)
        if base is None:
            return
        try:
            _plan(Index(load_tree(ix.tree.root, {**ix.tree.sources, **base})), row)
        except PortBlocked as exc:
            if not exc.after:
                return
            owner = exc.after
            continue
        except (NothingToPort, ValueError):
            return
        names = ", ".join(chain)
        row.after, row.base, row.verify, row.chain, row.standalone = chain[-1], base, "", chain, True
        row.detail = f"planned after the ports of {names} (its patch applies on top of theirs, in that order)"
        return


def _compose(ix: Index, chain: list[str]) -> dict[str, bytes] | None:
    """The files the ports of ``chain`` change, each planned on the tree with the ports before it applied."""
    overlay: dict[str, bytes] = {}
    for fam in chain:
        try:
            cur = Index(load_tree(ix.tree.root, {**ix.tree.sources, **overlay}))
            port = plan_port(cur, fam)
            overlay.update(apply_edits(cur.tree.sources, port.edits))
        except (PortBlocked, NothingToPort, ValueError):
            return None
    return overlay


def _plan(ix: Index, row: Row) -> None:
    port = plan_port(ix, row.family)
    new = apply_edits(ix.tree.sources, port.edits)
    row.port = port
    row.convention = port.convention or "reroute"
    row.target = next((p for p in sorted(new) if p.endswith(".metal")), "")
    row.changes = [n for n in port.notes if n.startswith("behaviour change")]
    row.patch = "".join(unified_diff(p, ix.tree.sources[p], new[p]) for p in sorted(new))


def _kernel_paths(port: Port) -> set[str]:
    return {e.path for e in port.edits if e.path.endswith(".metal")}


def combined_kernels(ix: Index, rows: list[Row]) -> dict[str, bytes]:
    """The kernel files with every row's kernel edits.  A block several ports add once per file (shared
    templates) is one edit of the same text in each: kept once."""
    edits = list(dict.fromkeys(e for r in rows for e in r.port.edits if e.path.endswith(".metal")))
    return apply_edits(ix.tree.sources, edits) if edits else {}


def verify_all(root, ix: Index, rows: list[Row], progress=None) -> None:
    """Fill ``verify``/``detail`` of every planned row (see the module doc)."""
    from migrate.verify.conventions import HandWritten
    from migrate.verify.run import CannotRun, Options, first_failure, verify

    ported = [r for r in rows if r.port is not None]
    combined = combined_kernels(ix, [r for r in ported if not r.standalone])
    combined_diff = {p: unified_diff(p, ix.tree.sources[p], combined[p]) for p in combined}
    baselines: dict[str, object] = {}
    for k, r in enumerate(ported):
        if progress:
            progress(k, len(ported), r.family)
        if r.standalone:  # its own tree: the earlier ports and its own, every file
            new = {**r.base, **apply_edits({**ix.tree.sources, **r.base}, r.port.edits)}
            text = "".join(unified_diff(p, ix.tree.sources[p], new[p]) for p in sorted(new))
        else:
            own = [e for e in r.port.edits if not e.path.endswith(".metal")]
            base = {p: d for p, d in r.base.items() if not p.endswith(".metal")}  # the earlier port's host edits
            new = {**base, **(apply_edits({**ix.tree.sources, **base}, own) if own else {})}
            metal = _kernel_paths(r.port) | {p for p in r.base if p.endswith(".metal")}
            text = "".join(combined_diff[p] for p in sorted(combined_diff) if p in metal)
            text += "".join(unified_diff(p, ix.tree.sources[p], new[p]) for p in sorted(new))
        try:
            rep = _verify_parts(root, r, text, verify, Options)
        except (CannotRun, HandWritten, Exception) as exc:  # one family's trouble never stops the batch
            r.verify, r.detail = "not run", " ".join(str(exc).split())[:300]
            continue
        fails = [c for c in rep.cells if c.status == "FAIL"]
        if not fails:
            r.verify = "pass" if rep.ran else "not run"
            after = ", ".join(r.chain) + ("'s port" if len(r.chain) == 1 else "'s ports")
            r.detail = (f"after {after}; " if r.after else "") + ("" if rep.ran else "no case ran")
            r.detail = r.detail.removesuffix("; ")
            continue
        conv = r.convention.removesuffix("_scalar")  # a scalar launcher repeats its era's launch steps
        base = baselines.get(conv)
        if base is None and conv in ("unary_1d", "binary_offsets", "functor_registry"):
            base = baselines[conv] = _baseline(root, ix, conv, verify, Options)
        known = base[1] if base else set()
        refused = [c for c in fails if _cpu_refuses(c)]
        own_fails = [c for c in fails if (c.dtype, c.layout) not in known and c not in refused]
        if not own_fails:
            r.verify = "pass*"
            parts = []
            if len(fails) > len(refused):
                parts.append(
                    f"{len(fails) - len(refused)} cell(s) fail as the tree's own {base[0]} kernel does: "
                    + ", ".join(sorted({c.layout for c in fails if c not in refused}))
                )
            if refused:
                parts.append(
                    f"{len(refused)} cell(s) are calls torch CPU refuses (judged against the old graph): "
                    + ", ".join(sorted({f"{c.dtype} {c.layout}" for c in refused}))
                )
            r.detail = "; ".join(parts)
        else:
            c = own_fails[0]
            r.verify = "FAIL"
            r.detail = f"{len(own_fails)} cell(s); {c.dtype} {c.layout}: {first_failure(c)}"


def _verify_parts(root, r: Row, text: str, verify, Options):
    """The family's verify report; a port with one kernel per stub (migrate/port/multi.py) verifies each
    kernel against calls whose arguments reach its stub, and the cells of all of them make one report."""
    if not r.port.parts:
        return verify(root, r.family, (text, f"<port {r.family}>"), Options())
    rep = None
    for part in r.port.parts:
        known = part.choice.values if part.choice is not None else None
        got = verify(root, r.family, (text, f"<port {r.family}>"), Options(stub=part.stub, known=known))
        if rep is None:
            rep = got
        else:
            rep.cells += got.cells
            rep.notes += got.notes
    return rep


_OUT_DTYPE_REFUSALS = ("can't be cast", "dtype of out")  # TensorIterator's; a shared kernel's own TORCH_CHECK


def _cpu_refuses(cell) -> bool:
    """A cell whose case torch CPU refuses as a call (an out= dtype the result cannot be cast to, or one the
    shared kernel checks before its stub): MPS runs the same shared code after the port and raises the same
    before any kernel runs, so the kernel is not at fault."""
    return any(n.startswith("torch-cpu:") and any(r in n for r in _OUT_DTYPE_REFUSALS) for n in cell.skipped)


def _baseline(root, ix: Index, convention: str, verify, Options):
    """(family, failing (dtype, layout) cells) of the tree's own native kernel of ``convention``."""
    from migrate.port.style import KIND, detect

    arity = 1 if convention == "unary_1d" else 2
    try:
        target = detect(ix, arity)
    except PortBlocked:
        return None
    fams = _native_families(ix, target)
    for fam in fams:
        try:
            rep = verify(root, fam, None, Options())
        except Exception:  # a baseline that cannot run gives no allowance
            continue
        if rep.ran:
            return fam, {(c.dtype, c.layout) for c in rep.cells if c.status == "FAIL"}
    del KIND
    return None


def _native_families(ix: Index, target) -> list[str]:
    """Families whose MPS stub the target host file registers, widest dtype coverage first."""
    import re

    data = ix.tree.sources[target.hpath]
    names = re.findall(rb'(?:exec_unary_kernel|binary_mps_impl)\s*\(\s*iter\s*,\s*"(\w+)"\s*\)', data)
    fams = [n.decode() for n in names if n.decode() in ix.families]
    kdata = ix.tree.sources[target.kpath]
    return sorted(dict.fromkeys(fams), key=lambda f: -kdata.count(f"({f},".encode()) - kdata.count(f'"{f}_'.encode()))


def table(rows: list[Row], width: int = 160) -> str:
    fw = max([len(r.family) for r in rows] + [6])
    tw = max([len(r.target.rsplit("/", 1)[-1]) for r in rows] + [6])
    out = [f"{'family':<{fw}}  {'target':<{tw}}  {'verify':<8}  detail / behaviour changes"]
    for r in rows:
        head = f"{r.family:<{fw}}  {r.target.rsplit('/', 1)[-1]:<{tw}}  {r.verify:<8}  "
        for k, text in enumerate([r.detail] * bool(r.detail) + r.changes or [""]):
            line = (head if k == 0 else " " * len(head)) + text
            out.append(line if len(line) <= width else line[: width - 3] + "...")
    return "\n".join(out) + "\n"

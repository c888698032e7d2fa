"""``port --all``: port every portable family, one table (migrate/batch_verify.py verifies each row).

Every family's patch is planned against the unchanged tree (one reviewable unit each; ``--patch-dir``
writes one file per family).  A family that waits for another's port (sub after add, clamp after its
prerequisites) is planned on the tree with those ports applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.apply import unified_diff
from migrate.index import Index
from migrate.port.locate import mpsgraph_families
from migrate.port.patch import plan_port
from migrate.port.text_edits import apply_edits
from migrate.port.translate import PortBlocked
from migrate.port.write import NothingToPort, Port
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
        row.standalone = bool(kernel_paths(row.port) & kernel_paths(first.port))
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
    row.patch = "".join(unified_diff(p, ix.tree.sources.get(p, b""), new[p]) for p in sorted(new))


def kernel_paths(port: Port) -> set[str]:
    return {e.path for e in port.edits if e.path.endswith(".metal")}


def combined_kernels(ix: Index, rows: list[Row]) -> dict[str, bytes]:
    """The kernel files with every row's kernel edits.  A block several ports add once per file (shared
    templates) is one edit of the same text in each: kept once."""
    edits = list(dict.fromkeys(e for r in rows for e in r.port.edits if e.path.endswith(".metal")))
    return apply_edits(ix.tree.sources, edits) if edits else {}


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

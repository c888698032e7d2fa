"""``port FAMILY`` with prerequisites: when the family's port waits for another family's (``clamp.out`` calls
``clamp_max_scalar_stub``: clamp reroutes onto clamp_max's registration), the prerequisites are ported first, each
planned on the tree with the ports before it applied, and the family last."""

from __future__ import annotations

from dataclasses import dataclass

from migrate.index import Index
from migrate.port.patch import plan_port
from migrate.port.text_edits import apply_edits
from migrate.port.translate import PortBlocked
from migrate.port.write import NothingToPort, Port
from migrate.tree import load_tree

MAX_CHAIN = 8


@dataclass
class Part:
    family: str
    port: Port
    before: dict[str, bytes]  # the files this part changes, as they were before it (the tree or an earlier part)
    after: dict[str, bytes]  # the same files with this part applied
    why: str = ""  # for a prerequisite: the reason its dependant gave
    needed_by: str = ""  # for a prerequisite: the family that waits for it


def plan_chain(ix: Index, family: str) -> list[Part]:
    """The parts, prerequisites first and ``family`` last (one part when it waits for nothing). Raises the
    PortBlocked of the first family that cannot be ported, or of a cycle."""
    tree = ix.tree
    overlay: dict[str, bytes] = {}
    parts: list[Part] = []
    pending: list[tuple[str, str, str]] = [(family, "", "")]  # (family, why, needed by)
    blocks: list[PortBlocked] = []  # what each waiting family said: raised when its prerequisite cannot be ported
    current = ix
    while pending:
        fam, why, needed_by = pending[-1]
        try:
            port = plan_port(current, fam)
        except PortBlocked as exc:
            waiting = [f for f, _, _ in pending] + [p.family for p in parts]
            if not exc.after or exc.after in waiting or len(waiting) >= MAX_CHAIN:
                raise (blocks[-1] if blocks and not exc.after else exc) from None
            pending.append((exc.after, exc.reason, fam))
            blocks.append(exc)
            continue
        except (NothingToPort, ValueError):
            if not blocks:
                raise
            raise blocks[-1] from None  # the prerequisite has nothing to port: the dependant stays blocked
        new = apply_edits(current.tree.sources, port.edits)
        parts.append(Part(fam, port, {p: current.tree.sources.get(p, b"") for p in new}, new, why, needed_by))
        overlay.update(new)
        pending.pop()
        if blocks and len(blocks) >= len(pending):
            blocks.pop()
        if pending:
            current = Index(load_tree(tree.root, {**tree.sources, **overlay}))
    return parts


def combined(parts: list[Part]) -> dict[str, bytes]:
    """Every file the chain changes, with every part applied."""
    out: dict[str, bytes] = {}
    for part in parts:
        out.update(part.after)
    return out

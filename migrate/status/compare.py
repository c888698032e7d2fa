"""Progress between two trees (e.g. two releases): families migrated, regressed, new."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from migrate.status.counting import KINDS, Status

METAL = ("metal-shared", "metal-mps")


def family_state(kinds: list[str]) -> str:
    """mpsgraph | half (MPSGraph and Metal) | metal | other (composite, none, ...)."""
    graph = "mpsgraph" in kinds
    metal = any(k in METAL for k in kinds)
    return "half" if graph and metal else "mpsgraph" if graph else "metal" if metal else "other"


@dataclass
class Progress:
    before: Status  # the baseline (--compare OTHER_ROOT)
    after: Status  # the tree of --root
    migrated: list[str]  # had MPSGraph overloads, now none and some Metal
    advanced: list[str]  # fewer MPSGraph overloads, some left
    regressed: list[tuple[str, list[str]]]  # (family, overloads that went from Metal to MPSGraph)
    new: list[tuple[str, str]]  # (family, state) only in the new tree
    removed: list[str]

    def kind_delta(self) -> dict[str, tuple[int, int]]:
        a, b = self.before.kinds, self.after.kinds
        return {k: (a.get(k, 0), b.get(k, 0)) for k in KINDS}

    def to_json(self) -> dict:
        return {
            "before": self.before.root,
            "after": self.after.root,
            "kinds": {k: {"before": x, "after": y} for k, (x, y) in self.kind_delta().items()},
            "migrated": self.migrated,
            "advanced": self.advanced,
            "regressed": [{"family": f, "overloads": o} for f, o in self.regressed],
            "new": [{"family": f, "state": s} for f, s in self.new],
            "removed": self.removed,
        }


def _by_family(s: Status) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for o, fam in s.overload_family.items():
        out.setdefault(fam, {})[o] = s.overload_kind[o]
    return out


def compare(before: Status, after: Status) -> Progress:
    old, new = _by_family(before), _by_family(after)
    migrated, advanced, regressed, added = [], [], [], []
    for fam in sorted(new):
        if fam not in old:
            added.append((fam, family_state(list(new[fam].values()))))
            continue
        was, now = Counter(old[fam].values()), Counter(new[fam].values())
        back = sorted(o for o, k in new[fam].items() if k == "mpsgraph" and old[fam].get(o) in METAL)
        if back:
            regressed.append((fam, back))
        elif was["mpsgraph"] and not now["mpsgraph"] and any(now[k] for k in METAL):
            migrated.append(fam)
        elif 0 < now["mpsgraph"] < was["mpsgraph"]:
            advanced.append(fam)
    removed = sorted(set(old) - set(new))
    return Progress(before, after, migrated, advanced, regressed, added, removed)

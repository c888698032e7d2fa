"""Migration status of a tree: every overload's route kind, counted per host file and category,
and the MPSGraph-backed families with whether ``port`` could move them."""

from __future__ import annotations

import fnmatch
import importlib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from migrate.index import Index, is_shared
from migrate.model import NativeEntry
from migrate.registry import all_rules
from migrate.tables import load_table
from migrate.tree import MPS_REL

# Route kinds, in report order, with their labels.
KINDS: dict[str, str] = {
    "metal-shared": "native Metal, shared stub",
    "metal-mps": "MPS-only Metal",
    "mpsgraph": "MPSGraph",
    "delegating": "delegating kernel",
    "composite": "composite",
    "undefined": "broken link",
    "none": "no MPS kernel",
}
NO_HOST = "(no MPS host code)"
GRAPH_IMPLS = ("mpsgraph", "mixed")


@lru_cache(maxsize=1)
def _categories() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((cat, tuple(pats)) for cat, pats in load_table("categories.yaml").items())


def category_of(host_path: str) -> str:
    """``.../UnaryKernel.mm`` -> ``unary`` (rules/categories.yaml), else the stem without Ops/Kernel."""
    if host_path == NO_HOST:
        return NO_HOST
    stem = PurePosixPath(host_path).stem
    for cat, patterns in _categories():
        if any(fnmatch.fnmatchcase(stem, p) for p in patterns):
            return cat
    return re.sub(r"(Ops|KernelImpl|Kernel)$", "", stem).lower() or stem.lower()


def short_host(path: str) -> str:
    """``aten/src/ATen/native/mps/operations/X.mm`` -> ``operations/X.mm`` (display only)."""
    return path[len(MPS_REL) + 1 :] if path.startswith(MPS_REL + "/") else path


def _final_entry(ix: Index, e: NativeEntry) -> NativeEntry:
    """Follow structured_delegate to the entry that carries the dispatch block."""
    seen = set()
    while e.structured_delegate and ix.mps_line(e) is None and e.overload_name not in seen:
        seen.add(e.overload_name)
        target = ix.entries.get(e.structured_delegate)
        if target is None:
            break
        e = target
    return e


def route_kind(ix: Index, e: NativeEntry) -> str:
    """The kind of the route that serves ``e`` (structured delegates: their target's)."""
    e = _final_entry(ix, e)
    r = ix.routes[e.overload_name]
    if r.via in ("composite", "none"):
        return r.via
    if r.impl in GRAPH_IMPLS:
        return "mpsgraph"
    if r.impl == "metal":
        line = ix.mps_line(e)
        shared = line is not None and (is_shared(line) or ix.used_by_other_backend(line.kernel_name))
        return "metal-shared" if shared else "metal-mps"
    return "delegating" if r.impl == "delegating" else "undefined"


@dataclass
class FamilyStatus:
    name: str
    graph_overloads: list[str]
    kernels: list[str]
    hosts: list[str]
    metal_overloads: list[str]
    half_migrated: bool  # MPS001 reports it
    portable: bool | None = None  # None: unknown
    reasons: list[str] = field(default_factory=list)


@dataclass
class Status:
    root: str
    overload_kind: dict[str, str]  # overload -> kind
    overload_family: dict[str, str]
    overload_host: dict[str, str]
    families: list[FamilyStatus]  # MPSGraph-backed, half-migrated first
    port_note: str = ""  # why portability is unknown, when it is

    @property
    def kinds(self) -> Counter:
        return Counter(self.overload_kind.values())

    def by(self, what: str) -> dict[str, Counter]:
        """Kind counts per ``host`` file or per ``category``."""
        out: dict[str, Counter] = {}
        for o, kind in self.overload_kind.items():
            host = self.overload_host[o]
            key = host if what == "host" else category_of(host)
            out.setdefault(key, Counter())[kind] += 1
        return dict(sorted(out.items(), key=lambda kv: (kv[0] == NO_HOST, -_routed(kv[1]), kv[0])))

    @property
    def family_count(self) -> int:
        return len(set(self.overload_family.values()))

    def to_json(self) -> dict:
        return {
            "root": self.root,
            "overloads": len(self.overload_kind),
            "families": self.family_count,
            "kinds": {k: self.kinds.get(k, 0) for k in KINDS},
            "by_category": {c: dict(n) for c, n in self.by("category").items()},
            "by_host": {h: dict(n) for h, n in self.by("host").items()},
            "mpsgraph_families": [vars(f) for f in self.families],
            "port_note": self.port_note,
        }


def _routed(c: Counter) -> int:
    return sum(n for k, n in c.items() if k not in ("composite", "none"))


def _portability_fn():
    """``migrate.port.portability`` when that module exists, else (None, why)."""
    try:
        mod = importlib.import_module("migrate.port")
    except ModuleNotFoundError as exc:
        if exc.name == "migrate.port":
            return None, "migrate.port does not exist yet"
        return None, f"migrate.port cannot be imported: {exc}"
    except Exception as exc:  # a broken port module must not break the report
        return None, f"migrate.port cannot be imported: {exc}"
    fn = getattr(mod, "portability", None)
    return (fn, "") if callable(fn) else (None, "migrate.port has no portability()")


def half_migrated_families(ix: Index) -> set[str]:
    rule = all_rules()["MPS001"]
    return {ix.entries[f.overload].base_name for f in rule.run(ix) if f.overload in ix.entries}


def compute_status(ix: Index) -> Status:
    kind, family, host = {}, {}, {}
    for e in ix.tree.yaml.entries:
        o = e.overload_name
        kind[o] = route_kind(ix, e)
        family[o] = e.base_name
        r = ix.routes[o]
        host[o] = r.defined_at.path if r.defined_at else NO_HOST
    half = half_migrated_families(ix)
    portability, note = _portability_fn()
    families = []
    for name, entries in ix.families.items():
        graph = [e.overload_name for e in entries if kind[e.overload_name] == "mpsgraph"]
        if not graph:
            continue
        fs = FamilyStatus(
            name=name,
            graph_overloads=graph,
            kernels=sorted({ix.routes[o].kernel for o in graph if ix.routes[o].kernel}),
            hosts=sorted({host[o] for o in graph if host[o] != NO_HOST}),
            metal_overloads=[e.overload_name for e in entries if kind[e.overload_name].startswith("metal")],
            half_migrated=name in half,
        )
        if portability is not None:
            try:
                ok, reasons = portability(ix, name)
                fs.portable, fs.reasons = bool(ok), [str(r) for r in reasons]
            except Exception as exc:  # report, do not crash the whole status
                fs.reasons = [f"portability() failed: {type(exc).__name__}: {exc}"]
        families.append(fs)
    families.sort(key=lambda f: (not f.half_migrated, f.name))
    return Status(str(ix.tree.root), kind, family, host, families, note)

"""The values graph-building code holds while it is translated (migrate/port/translate.py): a reference to the
graph or its cache, a dtype (named, or another tensor's), a dtype test kept in a host bool, a host value the
kernel does not see, a cached-graph member never set, and what a bare ``return;`` gives."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from migrate.port.dag import Node

OUTPUT_WORDS = ("output", "result", "gradinput", "out")  # a cached-graph member named like the output


@dataclass(frozen=True)
class GraphRef:
    pass


@dataclass(frozen=True)
class CachedRef:
    pass


@dataclass(frozen=True)
class DtypeRef:
    dtype: str | None = None  # explicit Metal dtype
    like: Node | None = None  # the dtype of this node
    host: str | None = None  # getMPSDataType(self): the dtype of host tensor ``self``


@dataclass(frozen=True)
class DtypeTest:
    """A host bool holding a dtype test of a graph tensor (``bool isFloatInput = ([t dataType] &
    MPSDataTypeFloatBit) != 0;``): true when ``node``'s dtype is (``equal``) or is not one of ``dtypes``.
    Decided at dispatch time, not by the data; the tensor is the one the test saw when the bool was set."""

    node: Node
    dtypes: frozenset[str]
    equal: bool


@lru_cache(maxsize=1)
def dtype_sets() -> tuple[frozenset[str], dict[str, frozenset[str]], frozenset[str]]:
    """(every dtype a graph tensor can have, MPSDataType flag bit -> the dtypes carrying it, the integral
    dtypes), from rules/dtypes.yaml."""
    from migrate.tables import load_table

    t = load_table("dtypes.yaml")
    universe = frozenset(d for fam in t["all_families"] for d in t[fam])
    bits = {name: frozenset(d for fam in fams for d in t[fam]) for name, fams in t["mps_type_bits"].items()}
    return universe, bits, frozenset(t["integral"])


@dataclass(frozen=True)
class Host:
    text: str


@dataclass(frozen=True)
class Unset(Host):
    """A cached-graph member the graph code never assigned: nil."""


class _Void:
    """What a bare ``return;`` gives: the statements after it do not run."""


VOID = _Void()

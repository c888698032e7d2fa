"""rules/reductions.yaml as typed recipes: what a reduction, softmax, norm or loss family ports to."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from migrate.tables import load_table

FORMS = ("reduce", "arg", "welford", "row", "gather")
COMBINES = ("sum", "prod", "max", "min", "and", "or")


@dataclass(frozen=True)
class KernelSpec:
    name: str
    form: str
    combine: str = "sum"
    map: str = "x0"
    finalize: str = "total"
    acc: str = ""  # accumulate type; "" is opmath_t<T>
    out: str = "T"  # T | long | bool
    dtypes: tuple[str, ...] = ()
    row_max: str = ""  # row: the element whose row maximum is taken first ("" = none)
    row_sum: str = ""
    row_write: str = ""
    outputs: tuple[str, ...] = ()  # welford: var | std, then mean

    @property
    def inputs(self) -> int:
        text = " ".join((self.map, self.row_max, self.row_sum, self.row_write))
        return max((k + 1 for k in range(3) if f"x{k}" in text), default=1)

    @property
    def n_outputs(self) -> int:
        return len(self.outputs) if self.form == "welford" else 1


@dataclass(frozen=True)
class Recipe:
    family: str
    graph: tuple[str, ...]
    kernels: tuple[KernelSpec, ...]
    bodies: dict
    helpers: dict
    notes: tuple[str, ...]
    route: str = "kernel"  # kernel | composite (MPS runs the yaml's composite kernel: no kernel written)


def _kernel(name: str, d: dict) -> KernelSpec:
    if d["form"] not in FORMS or d.get("combine", "sum") not in COMBINES:
        raise ValueError(f"rules/reductions.yaml: kernel {name}: unknown form or combine")
    return KernelSpec(
        name=name,
        form=d["form"],
        combine=d.get("combine", "sum"),
        map=d.get("map", "x0"),
        finalize=d.get("finalize", "total"),
        acc=d.get("acc", ""),
        out=d.get("out", "T"),
        dtypes=tuple(d.get("dtypes", ())),
        row_max=d.get("max", ""),
        row_sum=d.get("sum", ""),
        row_write=d.get("write", ""),
        outputs=tuple(d.get("outputs", ())),
    )


@lru_cache(maxsize=1)
def _table() -> dict:
    return load_table("reductions.yaml")


def selector_combines() -> dict[str, str]:
    """Selector stem (up to WithTensor/OfTensor) -> the combine it computes."""
    return dict(_table()["selectors"])


@lru_cache(maxsize=None)
def recipe(family: str) -> Recipe | None:
    d = _table()["families"].get(family)
    if d is None:
        return None
    return Recipe(
        family=family,
        graph=tuple(d.get("graph", ())),
        kernels=tuple(_kernel(k, v) for k, v in d.get("kernels", {}).items()),
        bodies=dict(d.get("bodies", {})),
        route=d.get("route", "kernel"),
        helpers=dict(d.get("helpers", {})),
        notes=tuple(d.get("notes", ())),
    )


def families() -> tuple[str, ...]:
    return tuple(_table()["families"])

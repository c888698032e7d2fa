"""The selector table rules/mpsgraph.yaml, loaded once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from migrate.tables import load_table

CLASSES = ("math", "arith", "round", "predicate", "logical", "bitwise", "select", "clamp")
_DEFAULT_DTYPES = {
    "math": ("float", "int", "bool"),
    "arith": ("float", "int", "bool"),
    "round": ("float", "int", "bool"),
    "predicate": ("float", "int", "bool"),
    "logical": ("float", "int", "bool"),
    "bitwise": ("int", "bool"),
    "select": ("float", "int", "bool"),
    "clamp": ("float", "int"),
}


@dataclass(frozen=True)
class OpRule:
    op: str
    selector: str
    cls: str
    metal: str | None
    metal_int: str | None
    torch: str
    torch_int: str | None
    dtypes: tuple[str, ...]
    fixed_arity: int | None = None  # ops only idioms emit (rules/port_idioms.yaml) have no selector
    requires: str | None = None  # a name the tree's c10/metal headers must define

    @property
    def arity(self) -> int:
        if self.fixed_arity is not None:
            return self.fixed_arity
        return self.selector.count(":") - (1 if self.selector.endswith("name:") else 0)

    @property
    def returns_bool(self) -> bool:
        return self.cls in ("predicate", "logical")


@dataclass(frozen=True)
class Table:
    ops: dict[str, OpRule]
    by_selector: dict[str, OpRule]
    constants: frozenset[str]
    casts: frozenset[str]
    cast_helpers: frozenset[str]
    placeholders: frozenset[str]
    scalar_placeholders: frozenset[str]
    not_elementwise: tuple[tuple[str, str], ...]

    def why_not_elementwise(self, selector: str) -> str | None:
        for prefix, why in self.not_elementwise:
            if selector.startswith(prefix):
                return why
        return None


def _op_rule(table: str, name: str, d: dict, selector: str, arity: int | None = None) -> OpRule:
    if d["class"] not in CLASSES:
        raise ValueError(f"rules/{table}: {name}: unknown class {d['class']!r}")
    return OpRule(
        name,
        selector,
        d["class"],
        d.get("metal"),
        d.get("metal_int"),
        str(d["torch"]),
        d.get("torch_int"),
        tuple(d.get("dtypes") or _DEFAULT_DTYPES[d["class"]]),
        arity,
        d.get("requires"),
    )


def torch_fn(spec: str):
    """An op's ``torch`` entry (``torch.atan2``, ``lambda a, b: ...``) as the torch function it names."""
    import torch

    if spec.startswith("lambda"):
        return eval(spec, {"torch": torch})  # our own table (rules/mpsgraph.yaml), not user input
    obj = torch
    for part in spec.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@lru_cache(maxsize=1)
def table() -> Table:
    raw = load_table("mpsgraph.yaml")
    ops = {name: _op_rule("mpsgraph.yaml", name, d, d["selector"]) for name, d in raw["ops"].items()}
    by_selector = {r.selector: r for r in ops.values()}
    for name, d in (load_table("port_idioms.yaml").get("ops") or {}).items():
        ops[name] = _op_rule("port_idioms.yaml", name, d, "", int(d["arity"]))
    return Table(
        ops,
        by_selector,
        frozenset(raw["constants"]),
        frozenset(raw["casts"]),
        frozenset(raw["cast_helpers"]),
        frozenset(raw["placeholders"]),
        frozenset(raw.get("scalar_placeholders", ())),
        tuple((k, v) for k, v in raw["not_elementwise"].items()),
    )

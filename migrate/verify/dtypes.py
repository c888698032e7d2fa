"""torch dtype <-> Metal type names and c10 ScalarType codes (rules/verify.yaml)."""

from __future__ import annotations

from functools import lru_cache

import torch

from migrate.tables import load_table


def table() -> dict:
    return load_table("verify.yaml")


@lru_cache(maxsize=None)
def _by_torch() -> dict[torch.dtype, dict]:
    return {getattr(torch, k): dict(v, name=k) for k, v in table()["dtypes"].items()}


@lru_cache(maxsize=None)
def _by_metal() -> dict[str, torch.dtype]:
    return {v["metal"]: getattr(torch, k) for k, v in table()["dtypes"].items()}


def metal_name(dtype: torch.dtype) -> str:
    try:
        return _by_torch()[dtype]["metal"]
    except KeyError:
        raise ValueError(f"{dtype} has no Metal type") from None


def scalar_type(dtype: torch.dtype) -> int:
    if dtype == torch.float64:
        return 7
    return _by_torch()[dtype]["scalar_type"]


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def from_metal(name: str) -> torch.dtype | None:
    return _by_metal().get(name)


def from_name(name: str) -> torch.dtype:
    d = getattr(torch, name.strip(), None)
    if not isinstance(d, torch.dtype) or d not in _by_torch():
        known = ", ".join(table()["dtype_order"])
        raise ValueError(f"unknown dtype {name!r} (known: {known})")
    return d


def ordered(dtypes) -> list[torch.dtype]:
    order = [getattr(torch, n) for n in table()["dtype_order"]]
    return sorted(set(dtypes), key=order.index)

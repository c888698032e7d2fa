"""verify's own cases on the host path, for elementwise families (an OpInfo that is a UnaryUfuncInfo or a
BinaryUfuncInfo): the layouts and special values of ``migrate.verify.cases`` (rules/verify.yaml), called through the
OpInfo's op, so that the host code's strides, offsets, CPU scalars, mixed dtypes and out= casts are exercised as well
as what the OpInfo samples cover. Worker-side (imports torch)."""

from __future__ import annotations

import torch

from migrate.verify.cases import CpuScalar, PyScalar, build_cases, nonzero_divisors
from migrate.verify.dtypes import table


def arity_of(opinfo) -> int | None:
    """1 or 2 for an elementwise OpInfo, else None (no own cases)."""
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

    if isinstance(opinfo, UnaryUfuncInfo):
        return 1
    if isinstance(opinfo, BinaryUfuncInfo):
        return 2
    return None


def own_cases(family: str, arity: int, dtype: torch.dtype) -> list[dict]:
    """Case dicts (without index, call and references) for one dtype: ``layout`` names the case, ``cpu_args`` the
    positions passed as 0-dim CPU tensors, ``exact`` asks the worker to keep every tensor's strides and offset."""
    layouts = [name for name in table()["layouts"] if name != "opinfo"]
    out = []
    for case in nonzero_divisors(build_cases(dtype, arity, layouts, table()["seed"]), family):
        args, cpu_args = [], []
        for k, a in enumerate(case.args):
            if isinstance(a, PyScalar):
                args.append(a.value)
            elif isinstance(a, CpuScalar):
                args.append(a.tensor)
                cpu_args.append(k)
            else:
                args.append(a)
        kwargs = {"out": case.out} if case.out is not None else {}
        out.append({"layout": case.layout, "args": args, "kwargs": kwargs, "cpu_args": cpu_args, "exact": True})
    return out


def on_mps_exact(t: torch.Tensor) -> torch.Tensor:
    """``t`` on MPS with its sizes, strides and storage offset (``Tensor.to`` would make a strided view dense)."""
    whole = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
    return whole.to("mps").as_strided(t.shape, t.stride(), t.storage_offset())

"""Emulation of the TensorIterator geometry the MPS host code reads.

``Iter`` mirrors what ``exec_*_kernel`` asks of a ``TensorIteratorBase``:
``shape()`` and ``strides(i)`` (bytes, fastest dimension first, after
TensorIterator's dimension reordering and coalescing), ``ndim()``,
``numel()``, ``is_contiguous()``, ``has_contiguous_first_dim()``,
``input(i)``/``output()`` (the operands as given) and ``common_dtype()``.

Operand 0 is the output.  A functional call (no ``out=``) allocates the
output like TensorIterator does: dense in the iteration order, so a
transposed input gives a transposed, iteration-contiguous output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch


@dataclass
class Operand:
    tensor: torch.Tensor
    cpu_scalar: bool = False  # a 0-dim CPU tensor (e.g. a wrapped Python number): bound by value


def _broadcast_strides(t: torch.Tensor, shape: tuple[int, ...]) -> list[int]:
    """Byte strides of ``t`` broadcast to ``shape``, in tensor dim order."""
    lead = len(shape) - t.dim()
    out = [0] * lead
    for i, (sz, st) in enumerate(zip(t.shape, t.stride())):
        out.append(0 if sz == 1 and shape[lead + i] != 1 else st * t.element_size())
    return out


def _reorder(shape: list[int], strides: list[list[int]], skip: set[int]) -> list[int]:
    """TensorIterator::reorder_dimensions: perm, fastest dimension first."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        for i, st in enumerate(strides):
            if i in skip:
                continue
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _coalesce(shape: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """TensorIterator::coalesce_dimensions on fastest-first shape/strides."""
    if len(shape) <= 1:
        return shape, strides
    shape = list(shape)
    strides = [list(s) for s in strides]
    prev = 0
    for dim in range(1, len(shape)):
        s0, s1 = shape[prev], shape[dim]
        ok = s0 == 1 or s1 == 1 or all(s0 * st[prev] == st[dim] for st in strides)
        if ok:
            if shape[prev] == 1:
                for st in strides:
                    st[prev] = st[dim]
            shape[prev] *= shape[dim]
        else:
            prev += 1
            if prev != dim:
                for st in strides:
                    st[prev] = st[dim]
                shape[prev] = shape[dim]
    return shape[: prev + 1], [st[: prev + 1] for st in strides]


@dataclass
class Iter:
    operands: list[Operand]  # [output, input0, input1, ...]
    common: torch.dtype
    shape_: list[int] = field(default_factory=list)
    strides_: list[list[int]] = field(default_factory=list)

    # -- the TensorIteratorBase surface the host code uses
    def shape(self) -> list[int]:
        return self.shape_

    def strides(self, i: int) -> list[int]:
        return self.strides_[i]

    def ndim(self) -> int:
        return len(self.shape_)

    def numel(self) -> int:
        return math.prod(self.shape_)

    def output(self) -> torch.Tensor:
        return self.operands[0].tensor

    def input(self, i: int) -> torch.Tensor:
        return self.operands[1 + i].tensor

    def common_dtype(self) -> torch.dtype:
        return self.common

    def has_contiguous_first_dim(self) -> bool:
        if self.ndim() == 0:
            return True
        return all(self.strides_[i][0] == op.tensor.element_size() for i, op in enumerate(self.operands))

    def is_contiguous(self) -> bool:
        if self.numel() == 1:
            return True
        if self.ndim() != 1:
            return False
        return self.has_contiguous_first_dim()


def broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """torch.broadcast_shapes without its first-call import of torch's symbolic-shapes machinery (~1 s)."""
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(-nd, 0):
        sizes = {s[d] for s in shapes if len(s) >= -d} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def build_iter(
    inputs: list[Operand],
    out: torch.Tensor | None,
    out_dtype: torch.dtype,
    common: torch.dtype,
    empty_strided=torch.empty_strided,
) -> Iter:
    """Broadcast, allocate the output if needed (with ``empty_strided``), reorder and coalesce."""
    shape = broadcast_shape([tuple(o.tensor.shape) for o in inputs])
    if out is not None:
        if tuple(out.shape) != shape:
            raise ValueError(f"out= has shape {tuple(out.shape)}, broadcast shape is {shape}")
    ndim = len(shape)
    in_strides = [_broadcast_strides(o.tensor, shape) for o in inputs]
    if out is None:
        # fastest-first order, output excluded from the comparison (will_resize)
        rev = lambda st: [st[ndim - 1 - d] for d in range(ndim)]  # noqa: E731
        rshape = [shape[ndim - 1 - d] for d in range(ndim)]
        perm = _reorder(rshape, [rev(s) for s in in_strides], set())
        tstrides = [0] * ndim
        acc = 1
        for p in perm:  # p is an index into the fastest-first dims
            tdim = ndim - 1 - p
            tstrides[tdim] = acc
            acc *= shape[tdim]
        out = empty_strided(shape, tstrides, dtype=out_dtype)
    operands = [Operand(out), *inputs]
    all_strides = [_broadcast_strides(out, shape), *in_strides]
    rshape = [shape[ndim - 1 - d] for d in range(ndim)]
    rstrides = [[st[ndim - 1 - d] for d in range(ndim)] for st in all_strides]
    perm = _reorder(rshape, rstrides, set())
    pshape = [rshape[p] for p in perm]
    pstrides = [[st[p] for p in perm] for st in rstrides]
    cshape, cstrides = _coalesce(pshape, pstrides)
    return Iter(operands, common, cshape, cstrides)

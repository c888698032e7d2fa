"""Host-side launch helpers mirroring how PyTorch's MPS host code calls the
c10/metal/indexing.h kernel families (sizes/strides fastest-dimension first,
strides in bytes). Written for these tests."""

from __future__ import annotations

import math

import torch

METAL = {
    torch.float32: "float",
    torch.float16: "half",
    torch.bfloat16: "bfloat",
    torch.int32: "int",
    torch.int64: "long",
    torch.bool: "bool",
    torch.complex64: "float2",
    torch.uint8: "uchar",
    torch.int16: "short",
    torch.int8: "char",
}
SCALAR_TYPE = {
    torch.uint8: 0,
    torch.int8: 1,
    torch.int16: 2,
    torch.int32: 3,
    torch.int64: 4,
    torch.float16: 5,
    torch.float32: 6,
    torch.complex64: 9,
    torch.bool: 11,
    torch.bfloat16: 15,
}


def geometry(*tensors: torch.Tensor):
    """(sizes, [byte strides per tensor]) fastest-first, as TensorIterator gives them."""
    shape = tensors[0].shape
    sizes = tuple(reversed(shape)) or (1,)
    strides = [tuple(s * t.element_size() for s in reversed(t.stride())) or (0,) for t in tensors]
    return sizes, strides


def grid2d(sizes) -> list[int]:
    return [sizes[0], math.prod(sizes[1:]) if len(sizes) > 1 else 1]


def ilp_threads(n: int) -> int:
    return (n + 3) // 4

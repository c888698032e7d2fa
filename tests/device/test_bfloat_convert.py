"""float -> bfloat in kernels (the runtime's inline integer conversion) rounds as torch's c10::BFloat16:
bit-identical for every non-NaN input (subnormals kept, ties to even, overflow to inf); NaN stays a
quiet NaN of the same sign (torch writes 0x7fc0 or 0xffff there, by code path: no single bit pattern)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

SRC = r"""
#include <metal_stdlib>
using namespace metal;
kernel void by_cast(device bfloat* out [[buffer(0)]], constant float* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = static_cast<bfloat>(in[i]);
}
kernel void by_ctor(device bfloat* out [[buffer(0)]], constant float* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = bfloat(in[i]);
}
kernel void implicit(device bfloat* out [[buffer(0)]], constant float* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = in[i];
}
kernel void by_vector(device bfloat4* out [[buffer(0)]], constant float4* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = bfloat4(in[i]);
}
kernel void from_half(device bfloat* out [[buffer(0)]], constant half* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = static_cast<bfloat>(in[i]);
}
kernel void from_int(device bfloat* out [[buffer(0)]], constant int* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = static_cast<bfloat>(in[i]);
}
"""

SPECIAL = [
    0x00000000,
    0x80000000,
    0x00000001,
    0x80000001,
    0x007FFFFF,
    0x00800000,
    0x00008000,
    0x00018000,  # zeros, subnormals
    0x00007FFF,
    0x0000FFFF,
    0x00017FFF,
    0x00010000,
    0x7F7FFFFF,
    0xFF7FFFFF,
    0x7F7F7FFF,
    0x7F7F8000,  # ties, max, overflow
    0x7F800000,
    0xFF800000,
    0x3F808000,
    0x3F818000,
    0x3F807FFF,
    0x3F808001,
    0x3F800000,
    0xBF808000,  # inf, ties to even
    0x7F800001,
    0xFF800001,
    0x7FC00000,
    0xFFC00000,
    0x7FFFFFFF,
    0xFFFFFFFF,
    0x7F808000,
    0x7FBFFFFF,  # NaNs
]


def _inputs() -> np.ndarray:
    """Every upper half with the rounding-relevant lower halves, the special values, 2^20 random patterns."""
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    rng = np.random.default_rng(12)
    parts = [
        (hi[:, None] | low[None, :]).ravel(),
        np.array(SPECIAL, dtype=np.uint32),
        rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32),
    ]
    bits = np.concatenate(parts)
    return bits[: len(bits) // 4 * 4]


def _check(got: torch.Tensor, f: torch.Tensor) -> None:
    want = f.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    got = got.view(torch.int16).numpy().view(np.uint16)
    src = f.view(torch.int32).numpy().view(np.uint32)
    nan = np.isnan(f.numpy())
    bad = np.flatnonzero((got != want) & ~nan)
    assert bad.size == 0, [f"{src[i]:#010x}: got {got[i]:#06x}, torch {want[i]:#06x}" for i in bad[:5]]
    g = got[nan]
    assert ((g & 0x7F80) == 0x7F80).all() and (g & 0x0040).all(), "NaN must stay a quiet NaN"
    assert ((g & 0x8000) == ((src[nan] >> 16) & 0x8000)).all(), "NaN keeps its sign"


@pytest.fixture(scope="module")
def lib(cpu):
    return cpu.compile_shader(SRC)


@pytest.mark.parametrize("kernel", ["by_cast", "by_ctor", "implicit", "by_vector"])
def test_float_to_bfloat_is_torch_rounding(lib, kernel):
    f = torch.from_numpy(_inputs().view(np.float32).copy())
    out = torch.empty(f.numel(), dtype=torch.bfloat16)
    n = f.numel() // 4 if kernel == "by_vector" else f.numel()
    getattr(lib, kernel)(out, f, threads=[n])
    _check(out, f)


def test_half_and_int_to_bfloat_go_through_float_as_torch(lib):
    h = torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(torch.float16)  # every half
    out = torch.empty(h.numel(), dtype=torch.bfloat16)
    lib.from_half(out, h, threads=[h.numel()])
    _check(out, h.float())
    i = torch.cat(
        [
            torch.randint(
                -(1 << 31), (1 << 31) - 1, (1 << 16,), generator=torch.Generator().manual_seed(3), dtype=torch.int32
            ),
            torch.tensor([0, 1, -1, 257, 259, (1 << 24) + 1, (1 << 31) - 1, -(1 << 31)], dtype=torch.int32),
        ]
    )
    out = torch.empty(i.numel(), dtype=torch.bfloat16)
    lib.from_int(out, i, threads=[i.numel()])
    assert torch.equal(out.view(torch.int16), i.to(torch.bfloat16).view(torch.int16))

"""Math functions of the CPU backend's metal_stdlib that need their own type's bits."""

from __future__ import annotations

import torch

SRC = r"""
#include <metal_stdlib>
using namespace metal;
template <typename T>
kernel void next_after(device T* out [[buffer(0)]], constant T* x [[buffer(1)]], constant T* y [[buffer(2)]],
                       uint i [[thread_position_in_grid]]) {
  out[i] = nextafter(x[i], y[i]);
}
template [[host_name("next_after_half")]] kernel void next_after<half>(device half*, constant half*, constant half*, uint);
template [[host_name("next_after_bfloat")]] kernel void next_after<bfloat>(device bfloat*, constant bfloat*, constant bfloat*, uint);
"""


def test_nextafter_16bit_matches_torch(cpu):
    lib = cpu.compile_shader(SRC)
    inf = float("inf")
    xs = [-inf, inf, 0.0, -0.0, 0.0, 1.0, 1.0, -1.0, 65504.0, 5.96e-8, float("nan"), 2.0]
    ys = [0.0, 0.0, 1.0, 1.0, -1.0, 2.0, 0.0, -2.0, inf, 0.0, 1.0, 2.0]
    for dtype, name in ((torch.float16, "next_after_half"), (torch.bfloat16, "next_after_bfloat")):
        x, y = torch.tensor(xs, dtype=dtype), torch.tensor(ys, dtype=dtype)
        out = torch.empty_like(x)
        getattr(lib, name)(out, x, y, threads=[len(xs)])
        torch.testing.assert_close(out, torch.nextafter(x, y), rtol=0, atol=0, equal_nan=True)

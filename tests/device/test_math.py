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


PI_SRC = r"""
#include <metal_stdlib>
using namespace metal;
kernel void pi_fns(device float* s [[buffer(0)]], device float* c [[buffer(1)]], device float* t [[buffer(2)]],
                   constant float* x [[buffer(3)]], uint i [[thread_position_in_grid]]) {
  s[i] = sinpi(x[i]);
  c[i] = cospi(x[i]);
  t[i] = tanpi(x[i]);
}
"""


def test_sinpi_cospi_tanpi_are_exact_at_integers_and_half_integers(cpu):
    """Metal's sinpi(n) is exactly 0 (lgamma's reflection divides by it: a pole must give inf, not a large
    finite value), cospi(n + 0.5) exactly 0; elsewhere they are sin/cos/tan of pi * x."""
    lib = cpu.compile_shader(PI_SRC)
    x = torch.tensor([-3.0, -2.0, -1.0, 0.0, 1.0, 7.0, 1e7, -0.5, 0.5, 2.5, 0.25, -1.75, 0.1])
    s, c, t = (torch.empty_like(x) for _ in range(3))
    lib.pi_fns(s, c, t, x, threads=[len(x)])
    ints = x == x.round()
    halves = (x.double() * 2 % 2) == 1
    assert (s[ints] == 0).all() and (c[halves] == 0).all()
    assert torch.equal(torch.signbit(s[ints]), torch.signbit(x[ints]))  # sinpi(-n) is -0, as IEEE's sinPi
    assert torch.isinf(t[halves]).all() and (t[ints] == 0).all()
    other = ~ints & ~halves
    ref = x.double()[other] * torch.pi
    torch.testing.assert_close(s[other], ref.sin().float(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(c[other], ref.cos().float(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(t[other], ref.tan().float(), rtol=1e-5, atol=1e-6)

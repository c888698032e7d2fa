"""Each half/bfloat/float operation of a kernel rounds to its type, as on the GPU: no excess precision, no fusion."""

from __future__ import annotations

import pytest
import torch

SRC = r"""
#include <metal_stdlib>
using namespace metal;
template <typename T>
kernel void mul_add(device T* out [[buffer(0)]], constant T* a [[buffer(1)]], constant T* b [[buffer(2)]],
                    constant T* c [[buffer(3)]], uint i [[thread_position_in_grid]]) {
  out[i] = a[i] * b[i] + c[i];
}
template [[host_name("mul_add_half")]] kernel void mul_add<half>(device half*, constant half*, constant half*, constant half*, uint);
template [[host_name("mul_add_bfloat")]] kernel void mul_add<bfloat>(device bfloat*, constant bfloat*, constant bfloat*, constant bfloat*, uint);
template [[host_name("mul_add_float")]] kernel void mul_add<float>(device float*, constant float*, constant float*, constant float*, uint);
"""


@pytest.mark.parametrize(
    "dtype, name",
    [(torch.float16, "mul_add_half"), (torch.bfloat16, "mul_add_bfloat"), (torch.float32, "mul_add_float")],
)
def test_mul_add_rounds_after_each_operation(cpu, dtype, name):
    lib = cpu.compile_shader(SRC)
    g = torch.Generator().manual_seed(7)
    a, b, c = (torch.randn(10000, generator=g).to(dtype) for _ in range(3))
    out = torch.empty_like(a)
    getattr(lib, name)(out, a, b, c, threads=[a.numel()])
    per_op = a * b + c  # torch rounds the product to dtype, then the sum
    once = (a.double() * b.double() + c.double()).to(dtype)  # one rounding: what excess precision or fma gives
    assert (per_op != once).sum() > 100  # the inputs tell the two apart
    torch.testing.assert_close(out, per_op, rtol=0, atol=0)

"""Row-uniform fast path (prepass._split, msl_runtime_exec.h): a kernel `P; if (C) { A } else
{ ..loop.. }` with a pure prologue P and condition C gets `__msl_cond`/`__msl_fast` copies; an
optimised build runs `P; A` for a row whose threads all pass C (vectorised across threads),
any other row as written. Kernels whose prologue or condition may write memory are not split."""

from __future__ import annotations

import pytest
import torch

from migrate.device.cpu.launchers import launchers
from migrate.device.cpu.prepass import prepass

from .indexing_host import SCALAR_TYPE, ilp_threads
from .shaders import INDEXING

SPLIT = """
__msl_kernel void k(__OUT float* out [[buffer(0)]], const float* in [[buffer(1)]],
                    const uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  PROLOGUE
  if (COND) { out[i] = in[i] * 2.0; } else { ELSE }
}
"""


def split_of(prologue: str = "uint b = i * 4;", cond: str = "i < n", els: str = "for (uint j = i; j < n; ++j) {}"):
    src = '# 1 "k.metal"\n' + SPLIT.replace("PROLOGUE", prologue).replace("COND", cond).replace("ELSE", els)
    r = prepass(src.replace("__OUT", ""), "k.metal")
    (k,) = r.kernels
    return k.split, r.text


def test_ilp_kernels_are_split():
    r = prepass(
        '# 1 "k.metal"\n'
        "template <typename T> __msl_kernel void d(T* out [[buffer(0)]], const T* in [[buffer(1)]],\n"
        "    const uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
        "  using U = T; const auto m = static_cast<uint>(n); uint b = i * 4;\n"
        "  if (b + 4 <= m) { for (uint j = 0; j < 4; ++j) out[b + j] = in[b + j]; }\n"
        "  else { for (uint j = b; j < m; ++j) out[j] = in[j]; } }\n"
        'template [[host_name("d_float")]] __msl_kernel void d<float>(float*, const float*, const uint&, uint);\n',
        "k.metal",
    )
    (k,) = r.kernels
    assert k.split and k.callee == "d < float >"
    text = " ".join(r.text.split())
    assert "bool d__msl_cond ( T * out" in text and "return ( b + 4 <= m ) ; }" in text
    assert "void d__msl_fast ( T * out" in text and "uint b = i * 4 ; { for ( uint j = 0 ; j < 4" in text
    launch = " ".join(launchers(r.kernels).split())
    assert "&d__msl_cond < float >" in launch and "&d__msl_fast < float >" in launch
    assert "__msl_run<__msl_k0::body, 3, __msl_k0::cond, __msl_k0::fast>(d, bufs, false)" in launch


@pytest.mark.parametrize(
    "prologue,cond,els",
    [
        ("uint b = i * 4; out[0] = 1;", "i < n", None),  # a store
        ("uint b = i++;", "i < n", None),
        ("uint b = i; b += 1;", "i < n", None),
        ("uint b = helper(i);", "i < n", None),  # any call but a cast or a Metal type's constructor
        ("uint b = i;", "atomic_load(&n) < 4", None),
        ("uint b = i;", "(b = 2) < n", None),
        ("uint b = i;", "in[i]() < n", None),
        ("threadgroup float t[4];", "i < n", None),
        ("static uint s = 0;", "i < n", None),
        ("uint b = i; return;", "i < n", None),
        ("if (i > n) return;", "i < n", None),
        ("float x{in[i]};", "i < n", None),
        ("", "i < n", "out[i] = 0;"),  # no loop in the else branch: the plain loop vectorises it
        ("", "i < n", "for (;;) {} } out[0] = 1; {"),  # code after the if/else
    ],
)
def test_impure_or_other_shapes_are_not_split(prologue, cond, els):
    assert split_of()[0]
    kw = {"els": els} if els else {}
    assert not split_of(prologue, cond, **kw)[0]


def test_sync_kernels_and_overloads_are_not_split():
    assert not split_of("uint b = i;", "simd_sum(b) < n")[0]
    body = "{ if (i < n) { o[i] = 1; } else { for (;;) {} } }\n"
    src = (
        '# 1 "k.metal"\n'
        f"template <typename T> __msl_kernel void d(T* o, const uint& n, uint i [[thread_position_in_grid]]) {body}"
        f"template <typename T> __msl_kernel void d(T* o, T* p, const uint& n, uint i [[thread_position_in_grid]]) {body}"
        'template [[host_name("a")]] __msl_kernel void d<float>(float*, const uint&, uint);\n'
        'template [[host_name("b")]] __msl_kernel void d<float>(float*, float*, const uint&, uint);\n'
    )
    r = prepass(src, "k.metal")
    assert len(r.kernels) == 2 and not any(k.split for k in r.kernels)
    one = [ln for ln in src.splitlines(keepends=True) if "T* p" not in ln and '"b"' not in ln]
    assert prepass("".join(one), "k.metal").kernels[0].split  # control: one definition is split


RUN = r"""
#include <metal_stdlib>
using namespace metal;
// P reads per-thread data: C differs between rows and inside a row
kernel void gated(device float* out [[buffer(0)]], constant float* in [[buffer(1)]],
                  constant uint* gate [[buffer(2)]], constant uint& n [[buffer(3)]],
                  uint2 pos [[thread_position_in_grid]], uint2 tpg [[threads_per_grid]]) {
  const uint i = pos.y * tpg.x + pos.x;
  uint g = gate[i];
  if (g != 0 && i < n) {
    out[i] = in[i] * in[i] + float(g);
  } else {
    for (uint j = 0; j < 3 && i < n; ++j) out[i] = -in[i] - float(j);
  }
}
// a prologue with an atomic: never split (it would count twice)
kernel void counted(device float* out [[buffer(0)]], device atomic_uint* count [[buffer(1)]],
                    constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  uint c = atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
  if (i < n) { out[i] = float(c < 1000000u); } else { for (uint j = i; j < n; ++j) out[j] = 0.0; }
}
"""


@pytest.fixture(scope="module")
def libs(cpu):
    return cpu.compile_shader(INDEXING, opt=1), cpu.compile_shader(RUN, opt=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("n", [1, 5, 4096, 4099, 70001])
def test_ilp_fast_rows_and_tails_match_torch(libs, dtype, n):
    lib, _ = libs
    t = {torch.float32: "float", torch.float16: "half", torch.bfloat16: "bfloat", torch.int32: "int"}[dtype]
    g = torch.Generator().manual_seed(n)
    x = (torch.randn(n, generator=g) * 3).to(dtype)
    y = (torch.randn(n, generator=g) * 3).to(dtype)
    out = torch.full_like(x, 7)
    getattr(lib, f"sq_dense_{t}_{t}")(out, x, n, threads=[ilp_threads(n)], group_size=[64])
    torch.testing.assert_close(out, x * x, rtol=0, atol=0)
    out = torch.full_like(x, 7)
    getattr(lib, f"bsub_dense_ilp4_{t}_{t}")(out, x, y, n, threads=[ilp_threads(n)], group_size=[32])
    torch.testing.assert_close(out, x - y * 2, rtol=0, atol=0)
    if dtype != torch.int32:
        out = torch.full((n,), 7.0)
        getattr(lib, f"sq_dense_castout_ilp_{t}")(out, x, (4, SCALAR_TYPE[torch.float32], n), threads=[ilp_threads(n)])
        torch.testing.assert_close(out, (x * x).float(), rtol=0, atol=0)


def test_mixed_rows_fall_back(libs):
    _, lib = libs
    w, h, n = 64, 40, 64 * 40 - 5
    g = torch.Generator().manual_seed(1)
    x = torch.randn(w * h, generator=g)
    gate = torch.ones(w * h, dtype=torch.int32)
    gate[3 * w + 17] = 0  # one thread of row 3
    gate[10 * w : 11 * w] = 0  # all of row 10
    gate[20 * w : 21 * w : 2] = 5  # row 20: gated, other values
    out = torch.full_like(x, 9.0)
    lib.gated(out, x, gate, n, threads=[w, h], group_size=[32, 4])
    ref = torch.where((gate != 0) & (torch.arange(w * h) < n), x * x + gate.float(), -x - 2)
    ref[n:] = 9.0
    torch.testing.assert_close(out, ref, rtol=0, atol=0)


def test_atomic_prologue_runs_once_per_thread(libs):
    _, lib = libs
    n = 5000
    out = torch.zeros(n)
    count = torch.zeros(1, dtype=torch.int32)
    lib.counted(out, count, n, threads=[n], group_size=[256])
    assert count.item() == n and bool((out == 1).all())

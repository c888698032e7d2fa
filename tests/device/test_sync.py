"""Barriers, threadgroup memory, SIMD collectives, atomics and thread positions."""

from __future__ import annotations

import pytest
import torch

SYNC = r"""
#include <c10/metal/reduction_utils.h>
#include <c10/metal/atomic.h>
using namespace metal;
using namespace c10::metal;

// two-level reduction: simd_sum + threadgroup memory + barriers (c10 helper)
kernel void group_sum(device float* out [[buffer(0)]], constant float* inp [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      uint lid [[thread_position_in_threadgroup]], uint tg [[threadgroup_position_in_grid]],
                      uint tptg [[threads_per_threadgroup]], uint gid [[thread_position_in_grid]]) {
  threadgroup float partial[32];
  float v = gid < n ? inp[gid] : 0.0;
  float s = threadgroup_sum(partial, v, lid, tptg);
  if (lid == 0) out[tg] = s;
}

// hand-written tree reduction with many barriers
kernel void tree_max(device int* out, constant int* inp, uint lid [[thread_index_in_threadgroup]],
                     uint tg [[threadgroup_position_in_grid]], uint n [[threads_per_threadgroup]]) {
  threadgroup int buf[256];
  buf[lid] = inp[tg * 256 + lid];
  for (uint s = 128; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid < s && lid + s < n) buf[lid] = max(buf[lid], buf[lid + s]);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) out[tg] = buf[0];
}

kernel void simd_ops(device float* out [[buffer(0)]], constant float* inp [[buffer(1)]],
                     uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                     uint sg [[simdgroup_index_in_threadgroup]]) {
  float v = inp[i];
  out[6 * i + 0] = simd_shuffle_down(v, 1);
  out[6 * i + 1] = simd_prefix_exclusive_sum(v);
  out[6 * i + 2] = simd_broadcast(v, 3);
  out[6 * i + 3] = float(static_cast<ulong>(simd_ballot(v > 0)) & 0xffffffff);
  out[6 * i + 4] = lane % 2 == 0 ? simd_sum(v) : -1.0;  // divergent: only even lanes take part
  out[6 * i + 5] = float(sg);
}

kernel void positions(device uint* out [[buffer(0)]],
                      uint3 tpig [[thread_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]],
                      uint3 tgpig [[threadgroup_position_in_grid]], uint3 tptg [[threads_per_threadgroup]],
                      uint3 tpg [[threads_per_grid]], ushort lane [[thread_index_in_simdgroup]]) {
  uint idx = (tpig.z * tpg.y + tpig.y) * tpg.x + tpig.x;
  out[8 * idx + 0] = tpig.x;
  out[8 * idx + 1] = tpig.y;
  out[8 * idx + 2] = tpig.z;
  out[8 * idx + 3] = lid.x + 100 * lid.y;
  out[8 * idx + 4] = tgpig.x + 100 * tgpig.y;
  out[8 * idx + 5] = tptg.x + 100 * tptg.y + 10000 * tptg.z;
  out[8 * idx + 6] = lane;
  out[8 * idx + 7] = 1;
}

kernel void hist(device atomic_int* bins, constant int* x, uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&bins[x[i]], 1, memory_order_relaxed);
}
kernel void fsum(device atomic_float* acc, constant float* x, uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(acc, x[i], memory_order_relaxed);
}
kernel void half_scatter_add(device AtomicType_t<half>* out, constant half* x, constant int* idx,
                             uint i [[thread_position_in_grid]]) {
  AtomicType<half>::atomic_add(out, idx[i], x[i]);
}
kernel void my_kernel(device float* out, constant float& v, uint i [[thread_position_in_grid]]) { out[i] = v; }
"""


@pytest.fixture(scope="module")
def lib(cpu):
    return cpu.compile_shader(SYNC, opt=1)


def test_kernels_with_sync_run_as_fibers(lib):
    assert lib.group_sum.uses_fibers and lib.tree_max.uses_fibers and lib.simd_ops.uses_fibers
    assert not lib.hist.uses_fibers and not lib.my_kernel.uses_fibers


@pytest.mark.parametrize("n,group", [(1000, 256), (64, 64), (33, 32), (5000, 1024)])
def test_threadgroup_sum_reduction(lib, n, group):
    x = torch.randn(n)
    ngroups = (n + group - 1) // group
    out = torch.full((ngroups,), float("nan"))
    lib.group_sum(out, x, n, threads=[n], group_size=[group])
    ref = torch.stack([x[i * group : (i + 1) * group].sum() for i in range(ngroups)])
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_tree_reduction_with_barriers(lib):
    x = torch.randint(-1000, 1000, (256 * 7,), dtype=torch.int32)
    out = torch.zeros(7, dtype=torch.int32)
    lib.tree_max(out, x, threads=[256 * 7], group_size=[256])
    assert out.tolist() == x.view(7, 256).amax(1).tolist()


def test_simd_collectives(lib):
    n = 64 + 16  # two full simdgroups and a partial one (group of 80)
    x = torch.randn(n)
    out = torch.zeros(n * 6)
    lib.simd_ops(out, x, threads=[n], group_size=[n])
    o = out.view(n, 6)
    for base in (0, 32, 64):
        lanes = min(32, n - base)
        v = x[base : base + lanes]
        # lane 31 keeps its value; reading a lane that does not exist (partial
        # simdgroup) gives 0, as Apple GPUs do in practice
        down = torch.cat([v[1:], v[-1:] if lanes == 32 else torch.zeros(1)])
        torch.testing.assert_close(o[base : base + lanes, 0], down)
        excl = torch.cat([torch.zeros(1), v.cumsum(0)[:-1]])
        torch.testing.assert_close(o[base : base + lanes, 1], excl, rtol=1e-5, atol=1e-5)
        assert (o[base : base + lanes, 2] == v[3]).all()
        ballot = sum(1 << i for i in range(lanes) if v[i] > 0)
        assert (o[base : base + lanes, 3] == float(ballot)).all()
        even = v[0::2].sum()
        torch.testing.assert_close(o[base : base + lanes : 2, 4], even.expand((lanes + 1) // 2), rtol=1e-5, atol=1e-5)
        assert (o[base : base + lanes, 5] == base // 32).all()


def test_thread_positions_partial_groups(lib):
    tx, ty, tz, gx, gy = 10, 7, 2, 4, 3
    n = tx * ty * tz
    out = torch.zeros(n * 8, dtype=torch.int32)
    lib.positions(out, threads=[tx, ty, tz], group_size=[gx, gy, 1])
    o = out.view(tz, ty, tx, 8)
    assert (o[..., 7] == 1).all()  # every thread ran exactly where expected
    for z in range(tz):
        for y in range(ty):
            for x in range(tx):
                r = o[z, y, x].tolist()
                assert r[:3] == [x, y, z]
                assert r[3] == x % gx + 100 * (y % gy)
                assert r[4] == x // gx + 100 * (y // gy)
                # non-uniform last groups: threads_per_threadgroup is the actual size
                w = min(gx, tx - (x // gx) * gx)
                h = min(gy, ty - (y // gy) * gy)
                assert r[5] == w + 100 * h + 10000
                assert r[6] == ((y % gy) * w + x % gx) % 32


def test_int_atomics_histogram(lib):
    x = torch.randint(0, 10, (20000,), dtype=torch.int32)
    bins = torch.zeros(10, dtype=torch.int32)
    lib.hist(bins, x, threads=[20000], group_size=[128])
    assert bins.tolist() == torch.bincount(x, minlength=10).tolist()


def test_float_atomic_add(lib):
    x = torch.randint(-8, 8, (30000,)).float()  # exactly representable partial sums
    acc = torch.zeros(1)
    lib.fsum(acc, x, threads=[30000])
    assert acc.item() == x.sum().item()


def test_half_atomic_add_via_c10_cas(lib):
    idx = torch.randint(0, 5, (999,), dtype=torch.int32)
    x = torch.full((999,), 0.25, dtype=torch.float16)
    out = torch.zeros(6, dtype=torch.float16)  # 6 halves = 3 uints; CAS on packed pairs
    lib.half_scatter_add(out, x, idx, threads=[999])
    ref = torch.bincount(idx, minlength=6).half() * 0.25
    assert out.tolist() == ref.tolist()


def test_python_scalar_becomes_constant(lib):
    out = torch.zeros(16)
    lib.my_kernel(out, 3.14, threads=[16])
    assert (out == torch.tensor(3.14)).all()
    lib.my_kernel(out, torch.tensor(2.5, dtype=torch.float64), threads=[16])  # 0-dim tensor, converted
    assert (out == 2.5).all()


ATAN2 = r"""
#include <c10/metal/indexing.h>
using namespace metal;
struct atan2_functor {
  template <typename T>
  inline T operator()(const T a, const T b) { return static_cast<T>(precise::atan2(float(a), float(b))); }
};
REGISTER_BINARY_OP(atan2, float, float);
REGISTER_BINARY_OP(atan2, half, half);
"""


def test_issue_example_atan2(cpu):
    lib = cpu.compile_shader(ATAN2)
    assert "atan2_dense_float_float" in lib.kernel_names and "atan2_dense_ilp4_half_half" in dir(lib)
    n = 1000
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    out = torch.empty(n)
    lib.atan2_dense_ilp4_float_float(out, a, b, n, threads=[(n + 3) // 4, 1, 1], group_size=[256, 1, 1])
    torch.testing.assert_close(out, torch.atan2(a, b), rtol=2.5e-7, atol=1e-7)
    ah, bh = a.half(), b.half()
    outh = torch.empty(n, dtype=torch.float16)
    lib.atan2_dense_half_half(outh, ah, bh, threads=[n, 1, 1], group_size=[256, 1, 1])
    ref = torch.atan2(ah.float(), bh.float()).half()
    # libm's and torch's float atan2 may differ by an ulp, which can flip the rounding to half
    ulps = (outh.view(torch.int16).int() - ref.view(torch.int16).int()).abs()
    assert int(ulps.max()) <= 1 and int((ulps > 0).sum()) <= n // 100

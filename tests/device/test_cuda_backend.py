"""CUDA backend: MSL -> PTX here (zig's clang, libdevice), checked by ptxas where present;
running kernels needs an NVIDIA GPU (those tests skip with the reason elsewhere)."""

from __future__ import annotations

import re

import pytest
import torch

from migrate.device import BackendUnavailable, MetalCompileError, get_backend
from migrate.device.cuda import toolchain
from migrate.device.cuda.build import arg_tables

pytestmark = pytest.mark.skipif(toolchain.libdevice() is None, reason="no libdevice.10.bc on this machine")
HAS_GPU = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU here (the GPU proof: bench/gpu_run.py)")

SRC = r"""
#include <metal_stdlib>
using namespace metal;
kernel void add_exp(device float* out [[buffer(0)]], constant half* a [[buffer(1)]], constant float& b [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) { out[i] = exp(float(a[i])) + b; }
kernel void group_sum(device float* out, constant float* a, uint i [[thread_position_in_grid]],
                      uint l [[thread_index_in_threadgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]], uint n [[threads_per_threadgroup]]) {
  threadgroup float part[32];
  const float s = simd_sum(a[i]);
  if (lane == 0) part[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (l == 0) { float t = 0; for (uint k = 0; k < (n + 31) / 32; ++k) t += part[k]; out[i / n] = t; }
}
template <typename T> kernel void neg(device T* o, constant T* a, uint i [[thread_position_in_grid]]) { o[i] = -a[i]; }
template [[host_name("neg_bfloat")]] kernel void neg<bfloat>(device bfloat*, constant bfloat*, uint);
kernel void bump(device atomic_uint* c [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(c, 1u, memory_order_relaxed);
}
"""


@pytest.fixture(scope="module")
def cuda(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(tmp_path_factory.mktemp("cuda-cache")))
    yield get_backend("cuda", assemble=True)
    mp.undo()


@pytest.fixture(scope="module")
def lib(cuda):
    return cuda.compile_shader(SRC)


def test_ptx_has_one_entry_per_kernel_and_the_gpu_mapping(lib):
    ptx = lib.ptx
    assert ".target sm_90" in ptx and ".version 8.0" in ptx  # pinned, not the local CUDA's default
    assert set(lib.kernel_names) == {"add_exp", "group_sum", "neg_bfloat", "bump"}
    assert len(re.findall(r"\.entry __msl_cuda_\d+", ptx)) == 4
    assert re.search(r"\bbar(rier)?\.sync\b", ptx)  # threadgroup_barrier
    assert "shfl.sync.idx" in ptx  # simd_sum over the warp
    assert re.search(r"\.shared .*part", ptx)  # threadgroup array -> shared memory
    assert re.search(r"\b(atom|red)(\.global)?\.add\.u32", ptx)
    assert ".extern .func" not in ptx  # libdevice linked in: no unresolved math calls


def test_argument_tables_match_the_cpu_backends(lib, cpu):
    cpu_lib = cpu.compile_shader(SRC)
    for name in lib.kernel_names:
        got = [(a.kind, a.size, a.elem_size, a.lanes, a.is_const, a.is_pointer) for a in lib.kernel(name).args]
        want = [(a.kind, a.size, a.elem_size, a.lanes, a.is_const, a.is_pointer) for a in cpu_lib.kernel(name).args]
        assert got == want, name


def test_arg_table_reader_fills_ptx_trailing_zeros():
    ptx = ".visible .const .align 4 .b8 __msl_ai_3[24] = {1, 0, 0, 0, 4};\n"
    assert arg_tables(ptx) == {3: [[1, 4, 0, 0, 0, 0]]}


def test_compile_errors_name_the_users_line(cuda):
    with pytest.raises(MetalCompileError) as e:
        cuda.compile_shader("kernel void k(device float* o [[buffer(0)]]) {\n  o[0] = nope;\n}\n", filename="bad.metal")
    assert e.value.diagnostics[0].file == "bad.metal" and e.value.diagnostics[0].line == 2


def test_cache_is_found_again_without_rebuilding(cuda):
    src = SRC.replace("+ b;", "- b;")  # a new build, not only a new manifest
    cuda.compile_shader(src)
    assert not cuda.last_build.cached
    cuda.compile_shader(src)
    assert cuda.last_build.cached


@pytest.mark.skipif(HAS_GPU, reason="a GPU is present")
def test_running_without_a_gpu_says_so(lib):
    with pytest.raises(BackendUnavailable, match="no CUDA GPU"):
        lib.add_exp(torch.empty(4), torch.ones(4, dtype=torch.half), 1.0)


@needs_gpu
def test_kernels_run_and_match_torch(lib):
    a = torch.randn(1000).half()
    out = torch.empty(1000)
    lib.add_exp(out, a, 0.5)
    torch.testing.assert_close(out, a.float().exp() + 0.5)
    x = torch.randn(4 * 256)
    sums = torch.empty(4)
    lib.group_sum(sums, x, threads=[x.numel()], group_size=[256])
    torch.testing.assert_close(sums, x.view(4, 256).sum(1), rtol=1e-5, atol=1e-5)
    b = torch.randn(77).bfloat16()
    nb = torch.empty_like(b)
    lib.neg_bfloat(nb, b)
    assert torch.equal(nb, -b)
    c = torch.zeros(1, dtype=torch.int32, device="cuda")
    lib.bump(c, threads=[5000])
    assert int(c) == 5000

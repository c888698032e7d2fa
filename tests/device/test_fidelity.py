"""Metal language fidelity: overload sets, bool/packed vectors, matrices,
simdgroup_matrix, [[threadgroup(N)]] parameters, constant expressions."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

SRC = r"""
#include <c10/metal/utils.h>
#include <c10/metal/special_math.h>
using namespace metal;
using namespace c10::metal;

// non-template float overloads beat c10::metal's templates; integer arguments
// to float functions; trunc from special_math's namespace
kernel void hardswishish(device float* o, constant float* x, uint i [[thread_position_in_grid]]) {
  o[i] = min(max(float(x[i]) + 3.0f, .0f), 6.f) + ::precise::log(4) + trunc(x[i]);
}
kernel void int_minmax(device long* o, constant int* a, constant long* b, uint i [[thread_position_in_grid]]) {
  o[i] = ::metal::max(::metal::min(long(a[i]), b[i] - 1), 0L) * 100 + max(a[i], 3) + clamp(a[i], -1, 1);
}
kernel void vec_scalar(device float2* o, constant float2* x, uint i [[thread_position_in_grid]]) {
  o[i] = max(1.0, x[i]) + fma(x[i], x[i], float2(1.0, 2.0));
}
// bool vectors: byte lanes with named components; bool arithmetic converts back to bool
kernel void bool_cross(device bool* o, constant bool* a, constant bool* b, uint i [[thread_position_in_grid]]) {
  bool3 x = {a[3 * i], a[3 * i + 1], a[3 * i + 2]};
  bool3 y = {b[3 * i], b[3 * i + 1], b[3 * i + 2]};
  bool3 r;
  r.x = x.y * y.z - x.z * y.y;
  r.y = x.z * y.x - x.x * y.z;
  r.z = x.x * y.y - x.y * y.x;
  o[3 * i] = r.x; o[3 * i + 1] = r.y; o[3 * i + 2] = r.z;
}
// packed vectors: 12-byte uint3, converted to the aligned type
kernel void packed_sum(device uint3* o, constant packed_uint3* s, uint i [[thread_position_in_grid]]) {
  o[i] = uint3(s[i]) + uint3(s[i].x, 0, 0);
}
// constant expressions with static_cast
template <typename T>
kernel void eps_add(device T* o, uint i [[thread_position_in_grid]]) {
  constexpr auto eps = static_cast<T>(0.25);
  constexpr T one = 1;
  o[i] = one + eps;
}
template [[host_name("eps_add_bfloat")]] kernel void eps_add<bfloat>(device bfloat*, uint);
template [[host_name("eps_add_half")]] void kernel eps_add<half>(device half*, uint);
// matrices: row vector times matrix, diagonal scalar constructor
kernel void vec_mat(device float4* o, constant float4* v, constant float4* cols, uint i [[thread_position_in_grid]]) {
  float4x4 m = float4x4(2.0f);
  float4x4 c;
  for (int k = 0; k < 4; ++k) c[k] = cols[k];
  o[i] = v[i] * c + v[i] * m;
}
// 16x16 matmul from 8x8 simdgroup fragments, one simdgroup per output tile,
// accumulating in place in device memory (loads must see no lane's store)
kernel void sg_matmul(device float* c [[buffer(0)]], constant float* a [[buffer(1)]],
                      constant float* b [[buffer(2)]], uint sg [[simdgroup_index_in_threadgroup]]) {
  const uint ti = sg / 2, tj = sg % 2;
  simdgroup_float8x8 A, B, C;
  for (uint k = 0; k < 16; k += 8) {
    simdgroup_load(C, c + ti * 8 * 16 + tj * 8, 16);
    simdgroup_load(A, a + ti * 8 * 16 + k, 16);
    simdgroup_load(B, b + tj * 8 * 16 + k, 16, ulong2(0, 0), true);
    simdgroup_multiply_accumulate(C, A, B, C);
    simdgroup_store(C, c + ti * 8 * 16 + tj * 8, 16);
  }
}
// half <-> float conversions (the runtime's own libcalls on x86-64)
kernel void to_half(device half* o, constant float* x, uint i [[thread_position_in_grid]]) { o[i] = half(x[i]); }
kernel void from_half(device float* o, constant half* x, uint i [[thread_position_in_grid]]) { o[i] = float(x[i]); }
// dynamic threadgroup memory
kernel void tg_reverse(device float* o, constant float* x, threadgroup float* buf [[threadgroup(0)]],
                       uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]],
                       uint i [[thread_position_in_grid]]) {
  buf[lid] = x[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[i] = buf[n - 1 - lid];
}
"""


@pytest.fixture(scope="module")
def lib(cpu):
    return cpu.compile_shader(SRC, filename="fidelity.metal", opt=0)


def test_float_overloads_and_integer_arguments(lib):
    x = torch.tensor([-5.0, -1.5, 0.5, 2.5, 9.0])
    o = torch.empty(5)
    lib.hardswishish(o, x, threads=[5])
    ref = torch.clamp(x + 3, 0, 6) + torch.log(torch.tensor(4.0)) + torch.trunc(x)
    torch.testing.assert_close(o, ref)


def test_integer_min_max_clamp(lib):
    a = torch.tensor([1, 7, -3], dtype=torch.int32)
    b = torch.tensor([5, 2, 9])
    o = torch.empty(3, dtype=torch.long)
    lib.int_minmax(o, a, b, threads=[3])
    ref = torch.minimum(a.long(), b - 1).clamp(min=0) * 100 + a.clamp(min=3) + a.clamp(-1, 1)
    assert o.tolist() == ref.tolist()


def test_vector_with_scalar_and_vector_fma(lib):
    x = torch.tensor([[0.5, 3.0], [-2.0, 1.5]])
    o = torch.empty(2, 2)
    lib.vec_scalar(o, x, threads=[2])
    torch.testing.assert_close(o, x.clamp(min=1.0) + x * x + torch.tensor([1.0, 2.0]))


def test_bool_vector_components(lib):
    g = torch.Generator().manual_seed(0)
    a = torch.randint(0, 2, (64, 3), generator=g).bool()
    b = torch.randint(0, 2, (64, 3), generator=g).bool()
    o = torch.empty(64, 3, dtype=torch.bool)
    lib.bool_cross(o, a, b, threads=[64])
    assert torch.equal(o, torch.linalg.cross(a.int(), b.int()).bool())


def test_packed_vectors_are_12_bytes(lib):
    s = torch.arange(12, dtype=torch.int32).reshape(4, 3)
    o = torch.zeros(4, 4, dtype=torch.int32)  # uint3 is 16 bytes
    lib.packed_sum(o, s, threads=[4])
    ref = s.clone()
    ref[:, 0] *= 2
    assert torch.equal(o[:, :3], ref)


@pytest.mark.parametrize("dtype", ["bfloat", "half"])
def test_constexpr_static_cast(lib, dtype):
    o = torch.zeros(2, dtype=getattr(torch, "bfloat16" if dtype == "bfloat" else "float16"))
    getattr(lib, f"eps_add_{dtype}")(o, threads=[2])
    assert o.tolist() == [1.25, 1.25]


def test_row_vector_times_matrix(lib):
    v = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 0.0, 2.0]])
    cols = torch.arange(16, dtype=torch.float32).reshape(4, 4)
    o = torch.empty(2, 4)
    lib.vec_mat(o, v, cols, threads=[2])
    torch.testing.assert_close(o, v @ cols.T + 2 * v)


def test_simdgroup_matrix_matmul(lib):
    g = torch.Generator().manual_seed(1)
    a, b, c = (torch.randn(16, 16, generator=g) for _ in range(3))
    out = c.clone()
    lib.sg_matmul(out, a, b, threads=[128], group_size=[128])
    torch.testing.assert_close(out, c + a @ b.T, rtol=1e-5, atol=1e-5)


def test_threadgroup_parameter(lib):
    x = torch.arange(96, dtype=torch.float32)
    o = torch.empty(96)
    lib.tg_reverse(o, x, threads=[96], group_size=[32])
    assert torch.equal(o, x.reshape(3, 32).flip(1).reshape(-1))


def test_tree_resolves_aten_kernel_headers(cpu, tmp_path):
    from migrate.device import get_backend

    hdr = tmp_path / "aten" / "src" / "ATen" / "native" / "mps" / "kernels"
    hdr.mkdir(parents=True)
    (hdr / "Twice.h").write_text("#pragma once\ntemplate <typename T> inline T twice(T x) { return x + x; }\n")
    src = (
        "#include <ATen/native/mps/kernels/Twice.h>\n"
        "kernel void k(device float* o, uint i [[thread_position_in_grid]]) { o[i] = twice(float(i)); }\n"
    )
    o = torch.empty(3)
    get_backend("cpu", root=tmp_path).compile_shader(src, opt=0).k(o, threads=[3])
    assert o.tolist() == [0.0, 2.0, 4.0]


def test_half_conversions_bit_exact(lib):
    every = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.float16)
    wide = torch.empty(65536)
    lib.from_half(wide, every, threads=[65536])
    assert torch.equal(wide.view(torch.int32), every.float().view(torch.int32))
    g = torch.Generator().manual_seed(2)
    bits = torch.randint(-(2**31), 2**31 - 1, (1 << 16,), generator=g, dtype=torch.int64).to(torch.int32)
    x = torch.cat([bits.view(torch.float32), wide, wide.nextafter(wide + 1), wide.nextafter(wide - 1)])
    x = x[~x.isnan()]  # NaN payloads are implementation-defined
    out = torch.empty(x.numel(), dtype=torch.float16)
    lib.to_half(out, x, threads=[x.numel()])
    assert torch.equal(out.view(torch.int16), x.half().view(torch.int16))


# ------------------------------------------- literals and precise::/fast:: overload sets
# Metal has no double: an unsuffixed floating literal is a float (the pre-pass suffixes it), so `1.0 + h` is a
# float and `x + 1e-10` rounds in float. precise:: and fast:: hold float overloads only (Apple's FP32 variants): a
# half or bfloat argument converts to float and gives a float, where metal::'s per-type set keeps half.
LITERALS = r"""
#include <metal_stdlib>
using namespace metal;
kernel void literal_types(device float* o, constant float* x, constant half* h, uint i [[thread_position_in_grid]]) {
  o[0] = (x[0] + 1e-10) - x[0];
  o[1] = sizeof(0.5);
  o[2] = sizeof(1.0 + h[0]);
  o[3] = sizeof(h[0] * 2.);
}
template <typename T>
kernel void precise_args(device float* o, constant T* x, uint i [[thread_position_in_grid]]) {
  const T v = x[i];
  o[4 * i] = ::precise::atan2(v, 1.0 + v);
  o[4 * i + 1] = float(precise::abs(v)) + fast::pow(2, v);
  o[4 * i + 2] = sizeof(precise::sqrt(v)) * 10 + sizeof(metal::sqrt(v));
  o[4 * i + 3] = sizeof(fast::exp(v));
}
template [[host_name("precise_args_half")]] kernel void precise_args<half>(device float*, constant half*, uint);
template [[host_name("precise_args_bfloat")]] kernel void precise_args<bfloat>(device float*, constant bfloat*, uint);
template <typename T>
kernel void precise_complex(device T* o, constant T* x, uint i [[thread_position_in_grid]]) {
  const T z = x[i];
  o[i] = T(precise::sqrt((z.x + z.y) * .5), ::precise::atan2(z.y, 1.0 + z.x));
}
template [[host_name("precise_complex_half2")]] kernel void precise_complex<half2>(device half2*, constant half2*, uint);
"""


@pytest.fixture(scope="module")
def lits(cpu):
    return cpu.compile_shader(LITERALS, filename="literals.metal", opt=0)


def test_unsuffixed_literals_are_float(lits):
    o = torch.zeros(4)
    lits.literal_types(o, torch.tensor([1.0]), torch.tensor([0.5], dtype=torch.float16), threads=[1])
    assert o.tolist() == [0.0, 4.0, 4.0, 4.0]  # a double literal: 1e-10, 8, 8, 8


@pytest.mark.parametrize("name, dtype", [("half", torch.float16), ("bfloat", torch.bfloat16)])
def test_precise_and_fast_take_floats_only(lits, name, dtype):
    x = torch.tensor([-1.5, 0.25, 3.0], dtype=dtype)
    o = torch.zeros(12)
    getattr(lits, f"precise_args_{name}")(o, x, threads=[3])
    got, xf = o.reshape(3, 4), x.float()
    torch.testing.assert_close(got[:, 0], torch.atan2(xf, 1.0 + xf))  # in float: (half, float) resolves
    torch.testing.assert_close(got[:, 1], xf.abs() + torch.pow(2.0, xf))
    assert got[:, 2].tolist() == [42.0] * 3 and got[:, 3].tolist() == [4.0] * 3  # float results; metal:: keeps half


def test_precise_complex_half_lanes(lits):
    z = torch.tensor([[0.5, 2.0], [3.0, -0.75]], dtype=torch.float16)
    o = torch.zeros(2, 2, dtype=torch.float16)
    lits.precise_complex_half2(o, z, threads=[2])
    zf = z.float()
    ref = torch.stack([torch.sqrt((zf[:, 0] + zf[:, 1]) * 0.5), torch.atan2(zf[:, 1], 1.0 + zf[:, 0])], 1)
    assert torch.equal(o, ref.half())  # computed in float, rounded once


def test_the_cuda_backend_models_the_same_rules(tmp_path, monkeypatch):
    from migrate.device.cuda import toolchain

    if toolchain.libdevice() is None:
        pytest.skip("no libdevice.10.bc on this machine")
    from migrate.device import get_backend

    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path))
    lib = get_backend("cuda").compile_shader(LITERALS, filename="literals.metal", opt=0)
    assert {"literal_types", "precise_args_half", "precise_args_bfloat", "precise_complex_half2"} <= set(
        lib.kernel_names
    )
    assert ".f64" not in lib.ptx  # no literal reached the GPU as a double


NEWER = Path(__file__).resolve().parents[1] / "data" / "msl" / "unary_functors_newer.metal"


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_newer_unary_file_compiles(tmp_path, monkeypatch, backend):
    """The shape of newer trees' UnaryKernel.metal (own fixture): functors over float2/half2 complex numbers calling
    precise:: with unsuffixed literals and half lanes; it compiles on both backends, and runs as torch on the CPU."""
    from migrate.device import get_backend

    if backend == "cuda":
        from migrate.device.cuda import toolchain

        if toolchain.libdevice() is None:
            pytest.skip("no libdevice.10.bc on this machine")
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path))
    lib = get_backend(backend).compile_shader(NEWER.read_text(), filename=NEWER.name, opt=0)
    assert {"log1p_half2", "exp2_bfloat", "abs_bfloat", "sqrt_half2", "angle_half"} <= set(lib.kernel_names)
    if backend != "cpu":
        return
    z = torch.tensor([0.5 + 2j, -0.25 - 0.75j, 3 + 0j], dtype=torch.complex64)
    o = torch.empty_like(z)
    lib.log1p_float2(o, z, threads=[3])
    torch.testing.assert_close(o, torch.log1p(z))
    x = torch.tensor([-1.5, 0.0, 2.25], dtype=torch.bfloat16)
    y = torch.empty_like(x)
    lib.exp2_bfloat(y, x, threads=[3])
    assert torch.equal(y, torch.exp2(x.float()).bfloat16())

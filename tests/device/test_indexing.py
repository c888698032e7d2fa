"""Every REGISTER_* family of c10/metal/indexing.h, run on the CPU backend and
compared with torch CPU: dense, ILP, scalar, strided (transposed, broadcast
stride 0, odd and empty shapes), cast and castout variants."""

from __future__ import annotations

import pytest
import torch

from .indexing_host import METAL, SCALAR_TYPE, geometry, grid2d, ilp_threads
from .shaders import INDEXING

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool, torch.complex64]
IDS = [METAL[d] for d in DTYPES]


@pytest.fixture(scope="module")
def lib(cpu):
    return cpu.compile_shader(INDEXING, opt=0)


def make(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype in (torch.int32, torch.int64):
        return torch.randint(-50, 50, shape, generator=g, dtype=dtype)
    if dtype == torch.complex64:
        return torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g))
    return (torch.randn(shape, generator=g) * 2).to(dtype)


def check(out, ref):
    assert out.dtype == ref.dtype and out.shape == ref.shape
    if out.dtype == torch.complex64:
        torch.testing.assert_close(out, ref, rtol=2e-6, atol=1e-6)
    else:  # same per-op rounding as the GPU: bit-exact
        torch.testing.assert_close(out, ref, rtol=0, atol=0, equal_nan=True)


def ref_sq(x):
    return x.clone() if x.dtype == torch.bool else x * x


def ref_bsub(a, b):
    return a | b if a.dtype == torch.bool else a - b * 2


def ref_badd(a, b, alpha):
    return a | (b & alpha) if a.dtype == torch.bool else a + b * alpha


def ref_tfma(a, b, c):
    return (a & b) | c if a.dtype == torch.bool else a * b + c


SHAPES = [(7, 13), (0, 5), (1,), (3, 1, 5)]


# ----------------------------------------------------------------- unary
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary_dense_and_scalar(lib, dtype, shape):
    t = METAL[dtype]
    x = make(shape, dtype)
    out = torch.empty_like(x)
    n = x.numel()
    getattr(lib, f"sq_dense_{t}_{t}")(out, x, n, threads=[ilp_threads(n)], group_size=[64])
    check(out, ref_sq(x))
    out2 = torch.empty_like(x)
    getattr(lib, f"sq_dense_scalar_{t}_{t}")(out2, x, threads=[n])
    check(out2, ref_sq(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("layout", ["transposed", "broadcast", "out_transposed", "empty"])
def test_unary_strided(lib, dtype, layout):
    t = METAL[dtype]
    if layout == "transposed":
        x, out = make((13, 7), dtype).t(), torch.empty(7, 13, dtype=dtype)
    elif layout == "broadcast":
        x, out = make((1, 13), dtype).expand(7, 13), torch.empty(7, 13, dtype=dtype)
    elif layout == "out_transposed":
        x, out = make((7, 13), dtype), torch.empty(13, 7, dtype=dtype).t()
    else:
        x, out = make((0, 3), dtype).t(), torch.empty(3, 0, dtype=dtype)
    sizes, (so, si) = geometry(out, x)
    getattr(lib, f"sq_strided_{t}_{t}")(out, x, sizes, si, so, len(sizes), threads=grid2d(sizes), group_size=[8, 8])
    check(out, ref_sq(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["float", "half", "bfloat"])
def test_unary_castout_variants(lib, dtype):
    t = METAL[dtype]
    x = make((5, 9), dtype)
    ref = ref_sq(x).to(torch.float32)
    out = torch.empty(5, 9)
    getattr(lib, f"sq_dense_castout_{t}")(out, x, (4, SCALAR_TYPE[torch.float32]), threads=[45])
    check(out, ref)
    out = torch.empty(5, 9)
    getattr(lib, f"sq_dense_castout_ilp_{t}")(out, x, (4, 6, 45), threads=[ilp_threads(45)])
    check(out, ref)
    xt = make((9, 5), dtype).t()
    out = torch.empty(9, 5, dtype=torch.float32).t()
    sizes, (so, si) = geometry(out, xt)
    getattr(lib, f"sq_strided_castout_{t}")(out, xt, sizes, si, so, (len(sizes), 6), threads=grid2d(sizes))
    check(out, ref_sq(xt).to(torch.float32))


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32], ids=["float", "half", "bfloat", "int"]
)
def test_unary_transcendental_int_to_float(lib, dtype):
    t = METAL[dtype]
    x = make((301,), dtype) if dtype != torch.int32 else torch.arange(-20, 20, dtype=torch.int32)
    out_t = torch.float32 if dtype == torch.int32 else dtype
    out = torch.empty(x.shape, dtype=out_t)
    name = "float" if dtype == torch.int32 else t
    getattr(lib, f"exp2_dense_{name}_{t}")(out, x, x.numel(), threads=[ilp_threads(x.numel())])
    ref = torch.exp2(x.to(out_t))
    if dtype == torch.float32:  # libm vs torch's vectorised exp2: a few ULP
        torch.testing.assert_close(out, ref, rtol=4e-7, atol=0)
    else:
        torch.testing.assert_close(out, ref, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_unary_alpha(lib, dtype):
    t = METAL[dtype]
    x = make((6, 11), dtype)
    alpha = {torch.bool: True, torch.complex64: (0.5, -2.0), torch.int32: 3, torch.int64: -7}.get(dtype, 0.75)
    a_t = torch.tensor(complex(*alpha) if isinstance(alpha, tuple) else alpha, dtype=dtype)
    ref = x & a_t if dtype == torch.bool else x * a_t
    out = torch.empty_like(x)
    getattr(lib, f"scale_dense_{t}_{t}_{t}")(out, x, alpha, threads=[x.numel()])
    check(out, ref)
    xt = make((11, 6), dtype).t()
    out = torch.empty(6, 11, dtype=dtype)
    sizes, (so, si) = geometry(out, xt)
    getattr(lib, f"scale_strided_{t}_{t}_{t}")(out, xt, sizes, si, so, len(sizes), a_t, threads=grid2d(sizes))
    check(out, xt & a_t if dtype == torch.bool else xt * a_t)


# ---------------------------------------------------------------- binary
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("n", [0, 1, 37, 1000])
def test_binary_dense_ilp_broadcast_scalar(lib, dtype, n):
    t = METAL[dtype]
    a, b = make((n,), dtype, 1), make((n,), dtype, 2)
    k = lambda v: getattr(lib, f"bsub_{v}_{t}_{t}")  # noqa: E731
    out = torch.empty_like(a)
    k("dense")(out, a, b, threads=[n])
    check(out, ref_bsub(a, b))
    out = torch.empty_like(a)
    k("dense_ilp4")(out, a, b, n, threads=[ilp_threads(n)], group_size=[32])
    check(out, ref_bsub(a, b))
    if n == 0:
        return
    bc = make((n % 5 + 1,), dtype, 3)
    rep = bc.repeat(n // bc.numel() + 1)[:n]
    out = torch.empty_like(a)
    k("dense_broadcast")(out, a, bc, bc.numel(), threads=[n])
    check(out, ref_bsub(a, rep))
    out = torch.empty_like(a)
    k("dense_broadcast_rhs")(out, bc, a, bc.numel(), threads=[n])
    check(out, ref_bsub(rep, a))
    s = make((1,), dtype, 4)
    out = torch.empty_like(a)
    k("dense_scalar")(out, a, s, threads=[n])
    check(out, ref_bsub(a, s.expand(n)))
    out = torch.empty_like(a)
    k("dense_scalar_lhs")(out, s.reshape(()), a, threads=[n])  # a 0-dim tensor binds by pointer to `device T*`
    check(out, ref_bsub(s.expand(n), a))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("layout", ["transposed", "broadcast", "odd3d", "empty"])
def test_binary_strided(lib, dtype, layout):
    t = METAL[dtype]
    if layout == "transposed":
        a, b, out = make((13, 7), dtype, 1).t(), make((7, 13), dtype, 2), torch.empty(13, 7, dtype=dtype).t()
    elif layout == "broadcast":
        a, b, out = (
            make((7, 1), dtype, 1).expand(7, 13),
            make((13,), dtype, 2).expand(7, 13),
            torch.empty(7, 13, dtype=dtype),
        )
    elif layout == "odd3d":
        a = make((3, 5, 9), dtype, 1)[:, ::2, 1:]
        b, out = make((3, 3, 8), dtype, 2), torch.empty(3, 3, 8, dtype=dtype)
    else:
        a, b, out = make((0, 4), dtype, 1), make((0, 4), dtype, 2), torch.empty(0, 4, dtype=dtype)
    sizes, (so, sa, sb) = geometry(out, a, b)
    n = out.numel()
    getattr(lib, f"bsub_strided_{t}_{t}")(out, a, b, sizes, so, sa, sb, (len(sizes),), threads=[n])
    check(out, ref_bsub(a, b))


CAST_INPUTS = {
    torch.float32: (torch.float16, torch.int32),
    torch.float16: (torch.bfloat16, torch.bool),
    torch.bfloat16: (torch.float32, torch.int64),
    torch.int32: (torch.int64, torch.uint8),
    torch.int64: (torch.int32, torch.int16),
    torch.bool: (torch.float32, torch.int32),
    torch.complex64: (torch.float32, torch.complex64),
}


def _cast_ref(x, dtype):
    if dtype == torch.bool:
        return x != 0
    return x.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_binary_cast_variants(lib, dtype):
    t = METAL[dtype]
    ta, tb = CAST_INPUTS[dtype]
    n = 29
    a = make((n,), ta, 1) if ta != torch.uint8 else torch.arange(n, dtype=torch.uint8)
    b = make((n,), tb, 2) if tb not in (torch.uint8, torch.int16) else torch.arange(n, dtype=tb)
    ref = ref_bsub(_cast_ref(a, dtype), _cast_ref(b, dtype))
    sz = (a.element_size(), b.element_size(), SCALAR_TYPE[ta], SCALAR_TYPE[tb])
    k = lambda v: getattr(lib, f"bsub_{v}_{t}_{t}")  # noqa: E731
    out = torch.empty(n, dtype=dtype)
    k("dense_cast")(out, a, b, sz, threads=[n])
    check(out, ref)
    bc = b[:3].clone()
    rep = _cast_ref(bc.repeat(10)[:n], dtype)
    out = torch.empty(n, dtype=dtype)
    k("dense_broadcast_cast")(out, a, bc, 3, sz, threads=[n])
    check(out, ref_bsub(_cast_ref(a, dtype), rep))
    out = torch.empty(n, dtype=dtype)
    k("dense_broadcast_rhs_cast")(
        out, bc, a, 3, (b.element_size(), a.element_size(), SCALAR_TYPE[tb], SCALAR_TYPE[ta]), threads=[n]
    )
    check(out, ref_bsub(rep, _cast_ref(a, dtype)))
    s = b[:1].clone()
    out = torch.empty(n, dtype=dtype)
    k("dense_scalar_cast")(out, a, s, sz, threads=[n])
    check(out, ref_bsub(_cast_ref(a, dtype), _cast_ref(s, dtype).expand(n)))
    out = torch.empty(n, dtype=dtype)
    k("dense_scalar_lhs_cast")(
        out, s, a, (b.element_size(), a.element_size(), SCALAR_TYPE[tb], SCALAR_TYPE[ta]), threads=[n]
    )
    check(out, ref_bsub(_cast_ref(s, dtype).expand(n), _cast_ref(a, dtype)))
    at = make((13, 5), ta, 5).t() if ta != torch.uint8 else torch.arange(65, dtype=ta).reshape(13, 5).t()
    bt = make((5, 13), tb, 6) if tb not in (torch.uint8, torch.int16) else torch.arange(65, dtype=tb).reshape(5, 13)
    out = torch.empty(5, 13, dtype=dtype)
    sizes, (so, sa, sb) = geometry(out, at, bt)
    k("strided_cast")(
        out, at, bt, sizes, so, sa, sb, (len(sizes), SCALAR_TYPE[ta], SCALAR_TYPE[tb], 0), threads=[out.numel()]
    )
    check(out, ref_bsub(_cast_ref(at, dtype), _cast_ref(bt, dtype)))


def test_binary_opmath_half_rounds_once(lib):
    a, b = make((257,), torch.float16, 1), make((257,), torch.float16, 2)
    out = torch.empty_like(a)
    lib.bsubo_dense_half_half(out, a, b, threads=[257])
    check(out, (a.float() - b.float() * 2).half())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32], ids=["float", "half", "int"])
def test_binary_comparison_and_castout(lib, dtype):
    t = METAL[dtype]
    a, b = make((6, 7), dtype, 1), make((7, 6), dtype, 2).t()
    out = torch.empty(6, 7, dtype=torch.bool)
    sizes, (so, sa, sb) = geometry(out, a, b)
    getattr(lib, f"blt_strided_bool_{t}")(out, a, b, sizes, so, sa, sb, (2,), threads=[42])
    check(out, a < b)
    outf = torch.empty(6, 7, dtype=torch.float32)
    sizes, (so, sa, sb) = geometry(outf, a, b)
    getattr(lib, f"blt_strided_castout_float_{t}")(
        outf,
        a,
        b,
        sizes,
        so,
        sa,
        sb,
        (2, SCALAR_TYPE[dtype], SCALAR_TYPE[dtype], SCALAR_TYPE[torch.float32]),
        threads=[42],
    )
    check(outf, (a < b).float())


# ---------------------------------------------------------- binary alpha
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_binary_alpha_all_variants(lib, dtype):
    t = METAL[dtype]
    alpha = {torch.bool: True, torch.complex64: (0.0, 1.0), torch.int32: 3, torch.int64: -4}.get(dtype, 0.5)
    al = torch.tensor(complex(*alpha) if isinstance(alpha, tuple) else alpha, dtype=dtype)
    n = 23
    a, b = make((n,), dtype, 1), make((n,), dtype, 2)
    k = lambda v: getattr(lib, f"badd_{v}_{t}_{t}_{t}")  # noqa: E731
    out = torch.empty_like(a)
    k("dense")(out, a, b, alpha, threads=[n])
    check(out, ref_badd(a, b, al))
    bc = make((4,), dtype, 3)
    rep = bc.repeat(6)[:n]
    out = torch.empty_like(a)
    k("dense_broadcast")(out, a, bc, 4, al, threads=[n])
    check(out, ref_badd(a, rep, al))
    out = torch.empty_like(a)
    k("dense_broadcast_rhs")(out, bc, a, 4, al, threads=[n])
    check(out, ref_badd(rep, a, al))
    s = make((1,), dtype, 4)
    out = torch.empty_like(a)
    k("dense_scalar")(out, a, s, alpha, threads=[n])
    check(out, ref_badd(a, s.expand(n), al))
    out = torch.empty_like(a)
    k("dense_scalar_lhs")(out, s, a, alpha, threads=[n])
    check(out, ref_badd(s.expand(n), a, al))
    same = (a.element_size(), b.element_size(), SCALAR_TYPE[dtype], SCALAR_TYPE[dtype])
    for variant, args, ref in [
        ("dense_cast", (a, b, alpha, same), ref_badd(a, b, al)),
        ("dense_broadcast_cast", (a, bc, 4, alpha, same), ref_badd(a, rep, al)),
        ("dense_broadcast_rhs_cast", (bc, a, 4, alpha, same), ref_badd(rep, a, al)),
        ("dense_scalar_cast", (a, s, alpha, same), ref_badd(a, s.expand(n), al)),
        ("dense_scalar_lhs_cast", (s, a, alpha, same), ref_badd(s.expand(n), a, al)),
    ]:
        out = torch.empty_like(a)
        k(variant)(out, *args, threads=[n])
        check(out, ref)
    at, bt = make((9, 4), dtype, 5).t(), make((1, 9), dtype, 6).expand(4, 9)
    out = torch.empty(4, 9, dtype=dtype)
    sizes, (so, sa, sb) = geometry(out, at, bt)
    k("strided")(out, at, bt, alpha, sizes, so, sa, sb, (2,), threads=[36])
    check(out, ref_badd(at, bt, al))
    out = torch.empty(4, 9, dtype=dtype)
    k("strided_cast")(
        out, at, bt, alpha, sizes, so, sa, sb, (2, SCALAR_TYPE[dtype], SCALAR_TYPE[dtype], 0), threads=[36]
    )
    check(out, ref_badd(at, bt, al))


# ---------------------------------------------------------------- ternary
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_ternary_all_variants(lib, dtype):
    t = METAL[dtype]
    n = 31
    a, b, c = make((n,), dtype, 1), make((n,), dtype, 2), make((n,), dtype, 3)
    out = torch.empty_like(a)
    getattr(lib, f"tfma_dense_{t}_{t}")(out, a, b, c, threads=[n])
    check(out, ref_tfma(a, b, c))
    out = torch.empty_like(a)
    es, st = a.element_size(), SCALAR_TYPE[dtype]
    getattr(lib, f"tfma_dense_cast_{t}")(out, a, b, c, (es, es, es), (st, st, st), threads=[n])
    check(out, ref_tfma(a, b, c))
    at, bt, ct = make((5, 3), dtype, 4).t(), make((3, 1), dtype, 5).expand(3, 5), make((3, 5), dtype, 6)
    out = torch.empty(5, 3, dtype=dtype).t()
    sizes, (so, sa, sb, sc) = geometry(out, at, bt, ct)
    getattr(lib, f"tfma_strided_{t}_{t}")(out, at, bt, ct, sizes, so, sa, sb, sc, 2, threads=[15])
    check(out, ref_tfma(at, bt, ct))
    if dtype in (torch.float32, torch.float16, torch.bfloat16):
        bh = bt.to(torch.int32) if dtype != torch.float32 else bt.half()
        out = torch.empty(5, 3, dtype=dtype).t()
        sizes, (so, sa, sb, sc) = geometry(out, at, bh, ct)
        getattr(lib, f"tfma_strided_cast_{t}")(
            out, at, bh, ct, sizes, so, sa, sb, sc, 2, (st, SCALAR_TYPE[bh.dtype], st, 0), threads=[15]
        )
        check(out, ref_tfma(at, bh.to(dtype), ct))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["half", "bfloat"])
def test_ternary_opmath_rounds_once(lib, dtype):
    t = METAL[dtype]
    a, b, c = make((64,), dtype, 1), make((64,), dtype, 2), make((64,), dtype, 3)
    out = torch.empty_like(a)
    getattr(lib, f"tfmao_dense_{t}_{t}")(out, a, b, c, threads=[64])
    check(out, (a.float() * b.float() + c.float()).to(dtype))

"""Every upstream .metal file of PyTorch 2.6.0 and 2.7.0a0 compiles on the CPU
backend (one test per file, -O0), and real kernels from files that need the
newer runtime features run and match torch CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from migrate.device import get_backend
from tests import corpus

KERNELS = Path("aten/src/ATen/native/mps/kernels")
TREES = ("2.6.0", "2.7.0a0")


def _cases():
    out = []
    for version in TREES:
        root, reason = corpus._fetch(version)
        files = sorted((root / KERNELS).glob("*.metal")) if root is not None else []
        if not files:
            why = reason or f"no .metal files under {KERNELS}"
            out.append(
                pytest.param(
                    version,
                    None,
                    id=f"{version}-unavailable",
                    marks=pytest.mark.skip(reason=f"PyTorch {version} tree unavailable: {why}"),
                )
            )
        out += [pytest.param(version, f.name, id=f"{version}-{f.stem}") for f in files]
    return out


def _root(version: str) -> Path:
    return corpus.pytorch_260_root() if version == "2.6.0" else corpus.pytorch_270a0_root()


def _lib(cpu, version: str, name: str):
    root = _root(version)
    be = get_backend("cpu", root=root, opt=0)
    return be.compile_shader((root / KERNELS / name).read_text(), filename=name)


@pytest.mark.parametrize("version,name", _cases())
def test_metal_file_compiles(cpu, version, name):
    lib = _lib(cpu, version, name)
    assert lib.kernel_names
    for k in lib.kernel_names:  # every kernel's launcher and argument table loaded
        assert getattr(lib, k).signature().startswith(k + "(")


@pytest.fixture(scope="module")
def lib27(cpu):
    return lambda name: _lib(cpu, "2.7.0a0", name)


def test_cross_runs(lib27):
    lib = lib27("CrossKernel.metal")
    g = torch.Generator().manual_seed(0)
    for kernel, a, b in (
        ("cross_float", *torch.randn(2, 8, 3, generator=g)),
        ("cross_int", *torch.randint(-9, 9, (2, 8, 3), generator=g, dtype=torch.int32)),
    ):
        out = torch.empty_like(a)
        rows = torch.arange(8, dtype=torch.int32) * 3 * a.element_size()
        offsets = torch.stack([rows, rows, rows, torch.zeros(8, dtype=torch.int32)], 1)  # uint3: 16 bytes
        getattr(lib, kernel)(a, b, out, offsets, 1, 1, 1, threads=[8])
        torch.testing.assert_close(out, torch.linalg.cross(a, b), msg=kernel)  # int: exact


def test_renorm_runs(lib27):
    norm = torch.tensor([0.5, 2.0, 4.0, 1.0])
    factor = torch.empty(4)
    lib27("RenormKernel.metal").renorm_float(norm, factor, 1.0, threads=[4])
    torch.testing.assert_close(factor, torch.where(norm > 1.0, 1.0 / (norm + 1e-7), torch.ones(4)))


@pytest.mark.parametrize(
    "kernel,ref",
    [
        ("i0_float_float", torch.special.i0),
        ("i1_float_float", torch.special.i1),
        ("entr_float_float", torch.special.entr),
    ],
)
def test_special_ops_run(lib27, kernel, ref):
    x = torch.linspace(-6, 6, 97)
    out = torch.empty(97)
    getattr(lib27("SpecialOps.metal"), kernel)(out, x, threads=[97])
    torch.testing.assert_close(out, ref(x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize(
    "kernel,dtype",
    [
        ("exp_float_float", torch.float32),
        ("exp_float_int", torch.int32),
        ("sqrt_float_long", torch.int64),
        ("tanh_half_half", torch.float16),
    ],
)
def test_unary_runs(lib27, kernel, dtype):
    x = torch.linspace(-4, 9, 64).to(dtype)
    op = getattr(torch, kernel.split("_")[0])
    out_dtype = torch.float16 if kernel.endswith("half_half") else torch.float32
    out = torch.empty(64, dtype=out_dtype)
    getattr(lib27("UnaryKernel.metal"), kernel)(out, x, threads=[64])
    torch.testing.assert_close(out, op(x.to(out_dtype)), equal_nan=True)


def test_index_offsets_with_packed_strides(lib27):
    shape = torch.tensor([3, 4], dtype=torch.int32)
    strides = torch.tensor([[4, 1, 8], [12, 3, 24]], dtype=torch.int32)  # packed_uint3 per dim
    out = torch.empty(12, 4, dtype=torch.int32)  # uint3 per thread
    lib27("Indexing.metal").kernel_index_offsets_32(strides, out, shape, 2, threads=[12])
    i = torch.arange(12)
    ref = (i % 3)[:, None] * strides[0] + (i // 3)[:, None] * strides[1]
    assert torch.equal(out[:, :3], ref.int())

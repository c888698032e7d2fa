"""Planted bugs verify must catch (beside those of test_verify_fixture.py: wrong sign of -0.0,
CPU scalar read at its storage start, read-only input written, cast-out writing nothing,
ILP tail): a dropped bfloat16 registration, half computed in half, swapped strides."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import torch

from migrate.device.cpu.backend import torch_include_dir
from migrate.verify.report import to_text
from migrate.verify.run import Options, first_failure, verify

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MINI, REAL = FIXTURES / "mini", FIXTURES / "verify"
KERNELS = "aten/src/ATen/native/mps/kernels"


def copy_tree(tmp_path: Path, src: Path, with_headers: bool = False) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(src, root)
    if with_headers:
        shutil.copytree(torch_include_dir() / "c10" / "metal", root / "c10" / "metal")
    return root


def replaced(root: Path, rel: str, old: str, new: str) -> str:
    text = (root / rel).read_text()
    assert old in text, f"{old!r} not in {rel}"
    return text.replace(old, new, 1)


def diff(root: Path, rel: str, old: str, new: str) -> tuple[str, str]:
    text = (root / rel).read_text()
    changed = replaced(root, rel, old, new)
    return "".join(
        difflib.unified_diff(text.splitlines(True), changed.splitlines(True), f"a/{rel}", f"b/{rel}")
    ), "planted.diff"


def failing(report):
    return {(c.dtype, c.layout): c for c in report.cells if c.status == "FAIL"}


DROP_BFLOAT = (
    "REGISTER_FLOAT_BINARY_OP(fmin);",
    "REGISTER_BINARY_OP(fmin, float, float);\nREGISTER_BINARY_OP(fmin, half, half);",
)


def test_dropped_bfloat_registration_fails_as_coverage(tmp_path):
    # torch CPU has bfloat16 fmin and the kernel registers float32/float16: a coverage failure
    root = copy_tree(tmp_path, MINI)
    rel = f"{KERNELS}/BinaryKernel.metal"
    (root / rel).write_text(replaced(root, rel, *DROP_BFLOAT))
    r = verify(root, "fmin", opts=Options(layouts=["odd_size"]))
    assert r.exit_code == 1
    assert set(failing(r)) == {("bfloat16", "coverage")}, to_text(r)
    assert "no bfloat16 kernel is" in first_failure(failing(r)[("bfloat16", "coverage")])
    assert "FAIL bfloat16 coverage" in to_text(r)


def test_dropped_bfloat_registration_in_a_patch_is_a_regression():
    patch = diff(MINI, f"{KERNELS}/BinaryKernel.metal", *DROP_BFLOAT)
    r = verify(MINI, "fmin", patch, Options(layouts=["odd_size"]))
    assert set(failing(r)) == {("bfloat16", "coverage")}
    assert "before the patch registers a bfloat16 kernel" in first_failure(failing(r)[("bfloat16", "coverage")])


HALF_IN_HALF = (
    "    const float fx = float(x);\n    const float fy = float(y);\n"
    "    return static_cast<T>(precise::sqrt(fx * fx + fy * fy));",
    "    const T s = x * x + y * y;  // half stays half\n    return static_cast<T>(precise::sqrt(float(s)));",
)


def test_half_computed_in_half_is_caught_with_default_tolerances(tmp_path):
    # x*x + y*y rounded to half twice (and overflowing above 255.9) instead of float opmath
    root = copy_tree(tmp_path, REAL)
    rel = f"{KERNELS}/BinaryKernel.metal"
    (root / rel).write_text(replaced(root, rel, *HALF_IN_HALF))
    r = verify(root, "hypot", opts=Options(dtypes=[torch.float16], layouts=["odd_size", "broadcast", "opinfo"]))
    bad = failing(r)
    assert r.exit_code == 1 and ("float16", "odd_size") in bad, to_text(r)
    assert "hypot_dense_half_half" in first_failure(bad[("float16", "odd_size")])
    clean = verify(REAL, "hypot", opts=Options(dtypes=[torch.float16], layouts=["odd_size", "broadcast", "opinfo"]))
    assert clean.exit_code == 0, to_text(clean)


SWAP = (
    "  const auto input_offs = offset_from_coord(pos, input_strides, ndim.x);\n"
    "  const auto other_offs = offset_from_coord(pos, other_strides, ndim.x);",
    "  const auto input_offs = offset_from_coord(pos, other_strides, ndim.x);\n"
    "  const auto other_offs = offset_from_coord(pos, input_strides, ndim.x);",
)


def test_strided_kernel_with_swapped_strides_is_caught(tmp_path):
    root = copy_tree(tmp_path, REAL, with_headers=True)
    patch = diff(root, "c10/metal/indexing.h", *SWAP)
    r = verify(
        root,
        "fmin",
        patch,
        Options(dtypes=[torch.float32], layouts=["contiguous", "transposed", "strided", "broadcast_stride0"]),
    )
    bad = failing(r)
    # strided: both operands share strides, so the swap is invisible there; contiguous never goes strided
    assert set(bad) == {("float32", "transposed"), ("float32", "broadcast_stride0")}, to_text(r)
    assert "fmin_strided_float_float" in first_failure(bad[("float32", "transposed")])

"""Bad input: compile errors mapped to the user's lines, unsupported features,
argument errors, out-of-bounds accesses, TORCH_REPORT_ERROR."""

from __future__ import annotations

import pytest
import torch

from migrate.device import (
    KernelArgumentError,
    KernelRuntimeError,
    MetalCompileError,
    OutOfBoundsAccess,
    UnknownKernelError,
    UnsupportedMetalFeature,
)

KERNELS = r"""
#include <c10/metal/error.h>
using namespace metal;
kernel void copy_shift(device float* out, constant float* inp, constant int& shift,
                       uint i [[thread_position_in_grid]]) {
  out[i] = inp[int(i) + shift];
}
kernel void checked_index(device float* out, constant long& n, device c10::metal::ErrorMessages* err,
                          uint i [[thread_position_in_grid]]) {
  if (i >= n) {
    TORCH_REPORT_ERROR(err, "index ", long(i), " is out of bounds for size ", n);
    return;
  }
  out[i] = 2;
}
"""


@pytest.fixture(scope="module")
def lib(cpu):
    return cpu.compile_shader(KERNELS, filename="errs.metal", opt=0)


def test_compile_error_points_at_user_line(cpu):
    src = "#include <metal_stdlib>\nusing namespace metal;\n\nkernel void k(device float* o, uint i [[thread_position_in_grid]]) {\n  o[i] = undefined_thing(i);\n}\n"
    with pytest.raises(MetalCompileError) as e:
        cpu.compile_shader(src, filename="mine.metal")
    msg = str(e.value)
    assert "mine.metal:5:" in msg and "undefined_thing" in msg
    assert "__msl" not in msg and "metal_stdlib.h" not in msg  # no internal text
    assert e.value.diagnostics[0].line == 5 and e.value.diagnostics[0].file == "mine.metal"


def test_missing_header_reported(cpu):
    with pytest.raises(MetalCompileError, match="nope.h"):
        cpu.compile_shader("#include <c10/metal/nope.h>\n", filename="x.metal")


@pytest.mark.parametrize(
    "snippet,feature",
    [
        ("texture2d<float> t;", "textures"),
        ("quad_shuffle(1.0f, 0);", "quad-group functions"),
    ],
)
def test_unsupported_feature_named(cpu, snippet, feature):
    src = f"#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* o) {{\n  {snippet}\n}}\n"
    with pytest.raises(UnsupportedMetalFeature) as e:
        cpu.compile_shader(src, filename="f.metal")
    assert feature in str(e.value) and "f.metal:4" in str(e.value)


def test_unknown_kernel_and_argument_count(lib):
    assert set(lib.kernel_names) == {"copy_shift", "checked_index"}
    with pytest.raises(UnknownKernelError, match="copy_shift"):
        lib.copy_shfit
    with pytest.raises(AttributeError):  # also an AttributeError, like a missing attribute
        getattr(lib, "nope")
    with pytest.raises(KernelArgumentError, match="takes 3 buffer argument"):
        lib.copy_shift(torch.zeros(4), torch.zeros(4), threads=[4])
    with pytest.raises(KernelArgumentError, match="meta"):
        lib.copy_shift(torch.zeros(4, device="meta"), torch.zeros(4), 0, threads=[4])
    with pytest.raises(KernelArgumentError, match="at most 1024"):
        lib.copy_shift(torch.zeros(4), torch.zeros(4), 0, threads=[4], group_size=[64, 32])
    with pytest.raises(KernelArgumentError, match="not an integer"):
        lib.copy_shift(torch.zeros(4), torch.zeros(4), 0.5, threads=[4])


def test_in_bounds_checked_launch_matches_unchecked(lib):
    inp = torch.arange(20.0)
    out = torch.zeros(16)
    lib.copy_shift(out, inp, 4, threads=[16], checked=True)
    assert out.tolist() == list(range(4, 20))


@pytest.mark.parametrize("shift,where,offset", [(1, "past the end", 64), (-3, "before the start", -12)])
def test_out_of_bounds_reported_without_corruption(lib, shift, where, offset):
    inp = torch.arange(16.0)
    out = torch.full((16,), -1.0)
    with pytest.raises(OutOfBoundsAccess) as e:
        lib.copy_shift(out, inp, shift, threads=[16], group_size=[4], checked=True)
    err = e.value
    assert where in str(err) and "copy_shift" in str(err)
    assert err.argument == 1 and err.byte_offset == offset
    bad_thread = 15 if shift > 0 else 0
    assert err.thread_position[0] in range(bad_thread - 3, bad_thread + 1)
    assert (out == -1).all()  # nothing written back


def test_torch_report_error_surfaces_after_launch(lib):
    out = torch.zeros(8)
    with pytest.raises(KernelRuntimeError) as e:
        lib.checked_index(out, 8, threads=[11])  # error buffer bound automatically
    assert len(e.value.reports) == 3
    assert "index 8 is out of bounds for size 8" in str(e.value) and "errs.metal:" in str(e.value)
    assert (out == 2).all()
    lib.checked_index(torch.zeros(8), 8, threads=[8])  # no report, no exception

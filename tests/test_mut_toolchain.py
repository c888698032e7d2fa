"""The CPU backend's compiler configuration: what a shader sees and how it is built."""
from __future__ import annotations

import platform

import pytest
import torch

from migrate.device import get_backend
from migrate.device.cpu import toolchain

SRC = r"""
#include <metal_stdlib>
#include "extra.h"
using namespace metal;
kernel void defines(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  if (i == 0) {
    out[0] = __METAL_VERSION__;
    out[1] = __METAL__;
    out[2] = __MPS_MIGRATE_CPU__;
    out[3] = EXTRA;
  }
}
kernel void axpy(device float* out [[buffer(0)]], constant float* a [[buffer(1)]], constant float* b [[buffer(2)]],
                 uint i [[thread_position_in_grid]]) {
  out[i] = 2.0f * a[i] + b[i];
}
"""


@pytest.fixture()
def cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "extra.h").write_text("#define EXTRA 41\n")
    return get_backend("cpu"), tmp_path / "inc"


def test_shader_sees_metal_defines_and_include_dirs_and_runs(cpu):
    be, inc = cpu
    lib = be.compile_shader(SRC, [inc], opt=0)
    out = torch.zeros(4, dtype=torch.int32)
    lib.defines(out, threads=[1])
    assert out.tolist() == [310, 1, 1, 41]
    a, b = torch.arange(8, dtype=torch.float32), torch.full((8,), 0.5)
    y = torch.empty(8)
    lib.axpy(y, a, b, threads=[8])
    assert y.tolist() == (2 * a + b).tolist()


def test_target_follows_the_host_architecture(monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "AMD64")
    assert toolchain.target_flags() == ("-target", "x86_64-linux-gnu", "-mcpu=x86_64_v2")
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    assert toolchain.target_flags() == ("-target", "aarch64-linux-gnu", "-mcpu=baseline")
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")
    with pytest.raises(OSError, match="CPU backend: unsupported host architecture 'riscv64'"):
        toolchain.target_flags()

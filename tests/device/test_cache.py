"""Compile cache: reuse across backends/processes, invalidation by headers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import torch

from migrate.device import get_backend

SRC = r"""
#include <c10/metal/common.h>
kernel void k(device int* out, uint i [[thread_position_in_grid]]) { out[i] = c10::metal::max_ndim + TAG; }
"""


def test_cached_second_compile_and_other_process(cpu, cache_dir):
    src = SRC.replace("TAG", "1")
    cpu.compile_shader(src)
    be = get_backend("cpu")
    lib = be.compile_shader(src)
    assert be.last_build.cached
    out = torch.zeros(3, dtype=torch.int32)
    lib.k(out, threads=[3])
    assert out.tolist() == [17, 17, 17]
    code = (
        "import torch; from migrate.device import get_backend; be = get_backend('cpu'); "
        f"lib = be.compile_shader({src!r}); print(be.last_build.cached)"
    )
    env = dict(os.environ, MPS_MIGRATE_CACHE=str(cache_dir), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    res = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env)
    assert res.stdout.strip() == "True", res.stderr


def test_headers_of_migrated_tree_are_used_and_tracked(cpu, tmp_path):
    import torch as _t

    inc = Path(_t.__file__).parent / "include" / "c10" / "metal"
    tree = tmp_path / "pytorch"
    shutil.copytree(inc, tree / "c10" / "metal")
    common = tree / "c10" / "metal" / "common.h"
    common.write_text(common.read_text().replace("max_ndim = 16", "max_ndim = 40"))
    src = SRC.replace("TAG", "2")
    be = get_backend("cpu", root=tree)
    out = torch.zeros(2, dtype=torch.int32)
    be.compile_shader(src).k(out, threads=[2])
    assert out.tolist() == [42, 42]
    common.write_text(common.read_text().replace("max_ndim = 40", "max_ndim = 50"))
    lib = be.compile_shader(src)
    assert not be.last_build.cached  # header change invalidates the cache entry
    lib.k(out, threads=[2])
    assert out.tolist() == [52, 52]


def test_first_build_of_the_runtime_reports_progress(tmp_path, capfd):
    from migrate.device.cpu import toolchain

    toolchain.ensure_runtime(tmp_path, announce_after=0.0)  # any real compile outlasts 0 s
    err = capfd.readouterr().err
    assert "zig builds its C++ runtime once" in err and "C++ runtime ready" in err
    assert list(tmp_path.glob("runtime-*.ready"))
    toolchain.ensure_runtime(tmp_path, announce_after=0.0)  # done once: silent, no compile
    assert capfd.readouterr().err == ""

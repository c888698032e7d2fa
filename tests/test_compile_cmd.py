"""mps-migrate compile: per-file OK/FAIL with file:line, exit codes, and the CPU and CUDA backends
building every .metal file of 2.6.0 and 2.7.0a0 (PTX checked by ptxas where present; the CPU backend's
launchers per file: tests/device/test_corpus_compile.py)."""

from __future__ import annotations

import json

import pytest

from migrate.cli import main
from migrate.device.cuda import toolchain
from tests import corpus

needs_libdevice = pytest.mark.skipif(
    toolchain.libdevice() is None, reason="no libdevice.10.bc (CUDA's math bitcode) on this machine"
)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    # one cache for the module: the corpus files build once
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path_factory.getbasetemp() / "compile-cache"))


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=needs_libdevice)])
@pytest.mark.parametrize("version", ["2.6.0", "2.7.0a0"])
def test_every_corpus_file_builds(version, backend, capsys):
    """`mps-migrate compile TREE --backend B` on both shared trees: every kernel file builds (measured on a loaded
    2-core machine, empty cache: CPU 14 s for 2.6.0 and 12 s for 2.7.0a0; CUDA PTX 44 s and 58 s)."""
    root = corpus.pytorch_260_root() if version == "2.6.0" else corpus.pytorch_270a0_root()
    rc = main(["compile", str(root), "--backend", backend, "--format", "json", "-j", "4"])
    out = json.loads(capsys.readouterr().out)
    files = out["files"]
    assert len(files) == (15 if version == "2.6.0" else 18)
    assert [r["error"] for r in files if not r["ok"]] == []
    assert rc == 0 and all(r["kernels"] > 0 for r in files)


BROKEN = """#include <metal_stdlib>
using namespace metal;
kernel void ok(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1.0; }
kernel void bad(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = undefined_name;
}
"""


@needs_libdevice
def test_failing_file_reports_first_error_with_line(tmp_path, capsys):
    good = tmp_path / "good.metal"
    good.write_text(BROKEN.replace("undefined_name", "2.0"))
    bad = tmp_path / "bad.metal"
    bad.write_text(BROKEN)
    rc = main(["compile", str(good), str(bad), "--backend", "cuda"])
    out = capsys.readouterr().out
    assert rc == 1
    assert f"OK       2 kernels  {good}" in out
    assert f"FAIL  {bad}" in out
    assert f"{bad}:5:" in out and "use of undeclared identifier 'undefined_name'" in out


def test_usage_errors(tmp_path, capsys):
    assert main(["compile", str(tmp_path / "missing.metal")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert main(["compile", str(tmp_path)]) == 2  # a folder that is no PyTorch tree


@needs_libdevice
def test_a_file_of_a_tree_compiles_against_that_trees_headers(capsys):
    """port27 is a 2.7-era tree: its kernel files define their own result_of, which the installed
    torch's (modern) c10/metal/utils.h also defines; given alone, the file must see its tree's c10."""
    from tests.helpers import FIXTURES

    f = FIXTURES / "port27/aten/src/ATen/native/mps/kernels/BinaryKernel.metal"
    assert main(["compile", str(f), "--backend", "cuda"]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.startswith("OK")

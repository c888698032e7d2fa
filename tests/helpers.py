"""Shared test helpers: run the CLI in-process or as a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
MINI = FIXTURES / "mini"
YAML = "aten/src/ATen/native/native_functions.yaml"
OPS = "aten/src/ATen/native/mps/operations"
KERNELS = "aten/src/ATen/native/mps/kernels"
COMMON_MPS = "torch/testing/_internal/common_mps.py"
OPINFO = "torch/testing/_internal/common_methods_invocations.py"


def mini_copy(tmp_path: Path) -> Path:
    """A writable copy of fixtures/mini under ``tmp_path``."""
    root = tmp_path / "tree"
    shutil.copytree(MINI, root)
    return root


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "migrate", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        input=input,
        timeout=600,
    )


def lint_json(root: Path, *extra: str) -> list[dict]:
    proc = run_cli("lint", str(root), "--format", "json", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def triples(findings: list[dict]) -> set[tuple[str, str, int]]:
    return {(f["code"], f["path"], f["line"]) for f in findings}


def compile_kernel_files(root: Path, cache_dir: Path) -> dict:
    """The tree's UnaryKernel.metal and BinaryKernel.metal compiled by the CPU backend (-O0), cached in ``cache_dir``."""
    import pytest

    from migrate.device import get_backend

    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(cache_dir))
    try:
        be = get_backend("cpu")
        return {
            k: be.compile_shader((root / KERNELS / f"{k}.metal").read_text(), opt=0)
            for k in ("UnaryKernel", "BinaryKernel")
        }
    finally:
        mp.undo()


def new_after_port(before, after, families) -> list[tuple[str, str]]:
    """(code, message) of the findings ``after`` adds to ``before``: a port adds none (its functors use
    the NaN-propagating c10::metal::max/min of rules/port_idioms.yaml, so MPS016 has nothing to say)."""
    from collections import Counter

    del families
    new = Counter((f.code, f.message) for f in after) - Counter((f.code, f.message) for f in before)
    return sorted((+new).elements())

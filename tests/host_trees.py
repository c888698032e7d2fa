"""Helpers of the host-code tests: the CLI in a subprocess, the toolchain (skip outside CI, fail in CI), and a
tree that is a real one except for a copied ``mps`` folder in which one host file was edited."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.host_code import toolchain
from migrate.host_code.scratch import scratch_copy


def cli(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "migrate", *args], capture_output=True, text=True, env=env, timeout=1800
    )


def toolchain_or_skip():
    try:
        return toolchain.find()
    except toolchain.ToolchainMissing as exc:
        if os.environ.get("CI"):
            raise AssertionError(f"CI must install the host toolchain (.ci/run): {exc}") from None
        pytest.skip(str(exc))


def mps_copy(tree: Path, tmp_path: Path) -> Path:
    """A tree that is ``tree`` (symlinks) except for a copied ``aten/src/ATen/native/mps`` folder and yaml."""
    return scratch_copy(tree, tmp_path)


def tree_with(tree: Path, tmp_path: Path, host_file: str, edit) -> Path:
    """``mps_copy`` with ``operations/<host_file>`` changed by ``edit`` (which must change it)."""
    root = mps_copy(tree, tmp_path)
    host = root / "aten/src/ATen/native/mps/operations" / host_file
    before = host.read_text()
    after = edit(before)
    assert after != before, f"the planted edit did not apply to {host_file}"
    host.write_text(after)
    return root

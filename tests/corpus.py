"""The real PyTorch 2.6.0 source tree, fetched by ../shared/corpus/fetch-pytorch-tree.

Tests that need it call ``pytorch_260_root()``: it returns the tree root or
skips the test with the fetch script's own reason.
"""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO.parent / "shared" / "corpus" / "fetch-pytorch-tree"


@functools.lru_cache(maxsize=None)
def _fetch(*args: str) -> tuple[Path | None, str]:
    if not FETCH.exists():
        return None, f"{FETCH} not found"
    try:
        proc = subprocess.run(["bash", str(FETCH), *args], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"fetch-pytorch-tree failed: {exc}"
    if proc.returncode != 0:
        return None, "fetch-pytorch-tree: " + (proc.stderr.strip().splitlines() or ["failed"])[-1]
    root = Path(proc.stdout.strip().splitlines()[-1])
    return (root, "") if root.is_dir() else (None, f"fetch-pytorch-tree printed {root!r}, not a folder")


def pytorch_260_root() -> Path:
    root, reason = _fetch()
    if root is None:
        pytest.skip(f"real PyTorch 2.6.0 tree unavailable: {reason}")
    return root


def pytorch_270a0_root() -> Path:
    """The 2.7.0a0 tree (it has c10/metal, RMSNorm and the Cholesky kernels), or skip."""
    root, reason = _fetch("--version", "2.7.0a0")
    if root is None:
        pytest.skip(f"real PyTorch 2.7.0a0 tree unavailable: {reason}")
    return root

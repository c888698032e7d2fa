"""Real PyTorch source trees, fetched by ../shared/corpus/fetch-pytorch-tree.

- ``pytorch_260_root()``: PyTorch 2.6.0 (downloaded; the test skips, saying why, without it).
- ``pytorch_270a0_root()``: PyTorch 2.7.0a0, shipped beside the fetch script (no network):
  it never skips where the shared corpus exists; failing to unpack it fails the test.
- ``user_tree_root()``: ``$MPS_MIGRATE_TEST_TREE``, a user's own checkout (skips when unset).
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import YAML

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO.parent / "shared" / "corpus" / "fetch-pytorch-tree"
TEST_TREE_ENV = "MPS_MIGRATE_TEST_TREE"


@functools.lru_cache(maxsize=None)
def _fetch(version: str = "2.6.0") -> tuple[Path | None, str]:
    if not FETCH.exists():
        return None, f"{FETCH} not found"
    try:
        proc = subprocess.run(["bash", str(FETCH), "--version", version], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"fetch-pytorch-tree failed: {exc}"
    if proc.returncode != 0:
        return None, "fetch-pytorch-tree: " + (proc.stderr.strip().splitlines() or ["failed"])[-1]
    root = Path(proc.stdout.strip().splitlines()[-1])
    return (root, "") if root.is_dir() else (None, f"fetch-pytorch-tree printed {root!r}, not a folder")


def pytorch_260_root() -> Path:
    root, reason = _fetch("2.6.0")
    if root is None:
        pytest.skip(f"real PyTorch 2.6.0 tree unavailable: {reason}")
    return root


def pytorch_270a0_root() -> Path:
    if not FETCH.exists():
        pytest.skip(f"real PyTorch 2.7.0a0 tree unavailable: {FETCH} not found")
    root, reason = _fetch("2.7.0a0")
    if root is None:  # it ships with the corpus: no network to blame
        pytest.fail(f"real PyTorch 2.7.0a0 tree unavailable: {reason}")
    return root


def user_tree_root() -> Path:
    value = os.environ.get(TEST_TREE_ENV, "")
    if not value:
        pytest.skip(f"set {TEST_TREE_ENV}=/path/to/pytorch to run these checks on your checkout")
    root = Path(value).expanduser()
    if not (root / YAML).is_file():
        pytest.fail(f"{TEST_TREE_ENV}={value}: no {YAML} there")
    return root

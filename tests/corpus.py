"""Real PyTorch source trees for the tests.

- ``pytorch_260_root()``: PyTorch 2.6.0; ``pytorch_270a0_root()``: PyTorch 2.7.0a0.
  Both come from ../shared/corpus/fetch-pytorch-tree where it exists, else from the subsets
  shipped in fixtures/trees/ (fixtures/trees/README.md), unpacked once into a cache folder
  (``$MPS_MIGRATE_TEST_TREES``, default ~/.cache/mps-migrate-test-trees). They never skip:
  a tree that cannot be had fails the test.
- ``user_tree_root()``: ``$MPS_MIGRATE_TEST_TREE``, a user's own checkout (skips when unset).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

from tests.helpers import YAML

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO.parent / "shared" / "corpus" / "fetch-pytorch-tree"
SHIPPED = REPO / "fixtures" / "trees"
TEST_TREE_ENV = "MPS_MIGRATE_TEST_TREE"
TREES_CACHE_ENV = "MPS_MIGRATE_TEST_TREES"


def trees_cache() -> Path:
    """Where the shipped archives unpack."""
    value = os.environ.get(TREES_CACHE_ENV, "")
    if value:
        return Path(value).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mps-migrate-test-trees"


def unpack_shipped(version: str, cache: Path) -> tuple[Path | None, str]:
    """fixtures/trees/pytorch-vVERSION.tar.xz unpacked under CACHE, once per archive content.

    Atomic: each caller unpacks into its own temporary folder and renames the tree into place;
    a caller that loses the race (another pytest-xdist worker) uses the winner's tree."""
    archive = SHIPPED / f"pytorch-v{version}.tar.xz"
    if not archive.is_file():
        return None, f"{archive} not found"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    base = cache / f"{version}-{digest}"
    root = base / f"pytorch-v{version}"
    if root.is_dir():
        return root, ""
    tmp = None
    try:
        base.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=base))
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(tmp, filter="data")
        try:
            os.rename(tmp / root.name, root)
        except OSError:
            if not root.is_dir():  # not a lost race
                raise
    except (OSError, tarfile.TarError) as exc:
        return None, f"cannot unpack {archive}: {exc}"
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if not (root / YAML).is_file():
        return None, f"{archive} holds no {root.name}/{YAML}"
    return root, ""


def _run_fetch(version: str) -> tuple[Path | None, str]:
    try:
        proc = subprocess.run(["bash", str(FETCH), "--version", version], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"fetch-pytorch-tree failed: {exc}"
    if proc.returncode != 0:
        return None, "fetch-pytorch-tree: " + (proc.stderr.strip().splitlines() or ["failed"])[-1]
    root = Path(proc.stdout.strip().splitlines()[-1])
    return (root, "") if root.is_dir() else (None, f"fetch-pytorch-tree printed {root!r}, not a folder")


@functools.lru_cache(maxsize=None)
def _fetch(version: str = "2.6.0") -> tuple[Path | None, str]:
    """(root, "") or (None, why): the shared corpus first, then the shipped subset."""
    reasons = []
    if FETCH.exists():
        root, reason = _run_fetch(version)
        if root is not None:
            return root, ""
        reasons.append(reason)
    root, reason = unpack_shipped(version, trees_cache())
    return (root, "") if root is not None else (None, "; ".join([*reasons, reason]))


def _tree(version: str) -> Path:
    root, reason = _fetch(version)
    if root is None:  # shipped in the repository: nothing to skip for
        pytest.fail(f"real PyTorch {version} tree unavailable: {reason}")
    return root


def pytorch_260_root() -> Path:
    return _tree("2.6.0")


def pytorch_270a0_root() -> Path:
    return _tree("2.7.0a0")


def user_tree_root() -> Path:
    value = os.environ.get(TEST_TREE_ENV, "")
    if not value:
        pytest.skip(f"set {TEST_TREE_ENV}=/path/to/pytorch to run these checks on your checkout")
    root = Path(value).expanduser()
    if not (root / YAML).is_file():
        pytest.fail(f"{TEST_TREE_ENV}={value}: no {YAML} there")
    return root

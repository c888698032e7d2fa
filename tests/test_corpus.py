"""The real trees shipped in fixtures/trees: they unpack once, atomically, and match the shared corpus."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests import corpus
from tests.helpers import YAML

VERSIONS = ("2.6.0", "2.7.0a0")


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".complete"
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_the_shipped_tree_unpacks_once_even_when_raced(version, tmp_path):
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: corpus.unpack_shipped(version, tmp_path), range(4)))
    roots = {root for root, _ in got}
    assert len(roots) == 1 and None not in roots, got
    (root,) = roots
    assert (root / YAML).is_file()
    assert [p.name for p in root.parent.iterdir()] == [root.name]  # no temporary folder left
    assert corpus.unpack_shipped(version, tmp_path) == (root, "")


def test_a_missing_archive_says_which():
    root, reason = corpus.unpack_shipped("0.0", Path("/nonexistent"))
    assert root is None and "pytorch-v0.0.tar.xz not found" in reason


@pytest.mark.parametrize("version", VERSIONS)
def test_the_shipped_tree_is_the_corpus_tree(version, tmp_path):
    if not corpus.FETCH.exists():
        pytest.skip(f"{corpus.FETCH} not found: nothing to compare with (the shipped tree is the one in use)")
    fetched, reason = corpus._run_fetch(version)
    assert fetched is not None, reason
    shipped, reason = corpus.unpack_shipped(version, tmp_path)
    assert shipped is not None, reason
    assert _digest(shipped) == _digest(fetched)

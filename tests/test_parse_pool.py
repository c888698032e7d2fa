"""Parsing on several processes gives the models one process gives, and fills the same cache entries."""

from __future__ import annotations

import pytest

from migrate import cache, parse_pool
from migrate.lint import lint_tree
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root
from tests.helpers import MINI


def read(root, monkeypatch, jobs: int):
    monkeypatch.setenv("MPS_MIGRATE_JOBS", str(jobs))
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)  # a pool even for a small tree
    return load_tree(root)


def same(a, b) -> None:
    assert a.yaml == b.yaml and a.hosts == b.hosts and a.metals == b.metals and a.errors == b.errors
    assert list(a.hosts) == list(b.hosts) and list(a.metals) == list(b.metals)  # walk order kept


@pytest.mark.parametrize("root", [MINI, "2.6.0"], ids=["mini", "2.6.0"])
def test_pool_reads_what_one_process_reads(root, monkeypatch, tmp_path):
    root = MINI if root == MINI else pytorch_260_root()
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    pools = []
    real = parse_pool._in_pool
    monkeypatch.setattr(parse_pool, "_in_pool", lambda n, jobs: pools.append((n, len(jobs))) or real(n, jobs))
    with cache.disable_cache():
        one, pooled = read(root, monkeypatch, 1), read(root, monkeypatch, 2)
    assert one.hosts and one.metals
    assert pools == [(2, 1 + len(one.hosts) + sum("#" not in k for k in one.metals))]  # every file, in 2 processes
    same(one, pooled)
    assert lint_tree(one).findings == lint_tree(pooled).findings
    filled = read(root, monkeypatch, 2)  # the pool writes the cache entries ...
    same(one, filled)
    assert len(pools) == 2
    monkeypatch.setattr(parse_pool, "_parse", None)  # ... that a later read serves: nothing is parsed again
    same(one, read(root, monkeypatch, 1))

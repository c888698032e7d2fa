"""Parsing on several processes gives the models one process gives, and fills the same cache entries."""

from __future__ import annotations

import os

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
    forks = []
    real = parse_pool._fork
    monkeypatch.setattr(parse_pool, "_fork", lambda share, jobs: forks.append(len(share)) or real(share, jobs))
    with cache.disable_cache():
        one, pooled = read(root, monkeypatch, 1), read(root, monkeypatch, 2)
    assert one.hosts and one.metals
    files = 1 + len(one.hosts) + sum("#" not in k for k in one.metals)
    assert len(forks) == 1 and 0 < forks[0] < files  # one child parsed a share, this process the rest
    same(one, pooled)
    assert lint_tree(one).findings == lint_tree(pooled).findings
    filled = read(root, monkeypatch, 2)  # the pool writes the cache entries ...
    same(one, filled)
    assert len(forks) == 2
    monkeypatch.setattr(parse_pool, "_parse", None)  # ... that a later read serves: nothing is parsed again
    same(one, read(root, monkeypatch, 1))


def test_a_failed_child_leaves_its_share_to_this_process(monkeypatch, tmp_path):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    real = parse_pool._parse

    def parse(job):
        if os.getpid() != parent:
            os._exit(3)  # the child dies mid-share
        return real(job)

    parent = os.getpid()
    monkeypatch.setattr(parse_pool, "_parse", parse)
    with cache.disable_cache():
        pooled = read(MINI, monkeypatch, 2)
        one = read(MINI, monkeypatch, 1)
    same(one, pooled)


def test_shares_balance_cost_and_keep_every_job_once():
    got = parse_pool.shares([0, 1, 2, 3, 4], [10, 1, 7, 3, 4], 2)
    assert sorted(k for s in got for k in s) == [0, 1, 2, 3, 4]
    assert [sum([10, 1, 7, 3, 4][k] for k in s) for s in got] == [13, 12]  # this process's share first
    assert parse_pool.shares([5, 6], [1, 1], 1) == [[5, 6]]


def test_review_rules_run_beside_the_index_rules(monkeypatch, tmp_path):
    from migrate import lint

    root = pytorch_260_root()
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    tree = load_tree(root)
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "1")
    alone = lint_tree(tree).findings
    assert {f.code for f in alone} & lint.BESIDE  # the tree has review findings to move
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    children = []
    real = parse_pool.run_beside
    monkeypatch.setattr(parse_pool, "run_beside", lambda work: children.append(1) or real(work))
    assert lint_tree(tree).findings == alone and children == [1]
    monkeypatch.setattr(parse_pool, "run_beside", lambda work: real(lambda: os._exit(3)))  # a child that dies
    assert lint_tree(tree).findings == alone
    assert lint_tree(tree, only_paths=[next(iter(tree.metals))]).findings is not None and children == [1]

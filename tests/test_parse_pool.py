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


def test_shares_balance_cost_and_keep_every_job_once(monkeypatch):
    monkeypatch.setattr(parse_pool, "CHILD_OVERHEAD", 1.0)
    got = parse_pool.shares([0, 1, 2, 3, 4], [10, 1, 7, 3, 4], 2)
    assert sorted(k for s in got for k in s) == [0, 1, 2, 3, 4]
    assert [sum([10, 1, 7, 3, 4][k] for k in s) for s in got] == [13, 12]  # this process's share first
    assert parse_pool.shares([5, 6], [1, 1], 1) == [[5, 6]]
    got = parse_pool.shares([0, 1, 2, 3, 4], [10, 1, 7, 3, 4], 2, first_load=10)  # this process has work already
    assert [sum([10, 1, 7, 3, 4][k] for k in s) for s in got] == [8, 17]
    monkeypatch.setattr(parse_pool, "CHILD_OVERHEAD", 2.0)  # a child's share costs twice as much: it gets less
    got = parse_pool.shares([0, 1, 2, 3, 4], [10, 1, 7, 3, 4], 2)
    assert [sum([10, 1, 7, 3, 4][k] for k in s) for s in got] == [17, 8]


def test_yaml_and_metal_are_parsed_here(monkeypatch, tmp_path):
    """The yaml's model costs more to send than to parse; a Metal file's tokens serve the rules here."""
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    kinds = []
    real = parse_pool._fork
    monkeypatch.setattr(
        parse_pool, "_fork", lambda share, jobs: kinds.extend(jobs[k][0] for k in share) or real(share, jobs)
    )
    with cache.disable_cache():
        read(MINI, monkeypatch, 2)
    assert kinds and set(kinds) == {"host"}


@pytest.mark.parametrize(("cores", "load", "want"), [(2, 0.0, 2), (2, 1.2, 1), (4, 1.5, 3), (4, 3.0, 1), (16, 0.0, 8)])
def test_auto_uses_the_idle_cores(monkeypatch, cores, load, want):
    monkeypatch.delenv("MPS_MIGRATE_JOBS", raising=False)
    monkeypatch.setattr(parse_pool.sys, "platform", "linux")
    monkeypatch.setattr(parse_pool.os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(parse_pool.os, "getloadavg", lambda: (load, load, load))
    assert parse_pool.idle_workers() == want
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    assert parse_pool.idle_workers() == 2

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
    forks, here = [], []  # children started; jobs this process parsed
    real_fork, real_parse = parse_pool._fork, parse_pool._parse_cached
    monkeypatch.setattr(
        parse_pool, "_fork", lambda queue, jobs, *more: forks.append(1) or real_fork(queue, jobs, *more)
    )
    monkeypatch.setattr(parse_pool, "_parse_cached", lambda job: here.append(job[0]) or real_parse(job))
    with cache.disable_cache():
        one = read(root, monkeypatch, 1)
        here.clear()
        pooled = read(root, monkeypatch, 2)
    assert one.hosts and one.metals
    # one child shares the queue; how the jobs split between it and this process depends on timing (on a
    # loaded machine either side may take them all), so only the result is compared
    assert len(forks) == 1 and here.count("host") <= len(one.hosts)
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


def test_the_queue_gives_each_job_once_to_whoever_asks():
    queue = parse_pool.Queue.of([5, 3, 70000, 0])
    queue.close_writer()
    child = parse_pool.Child.start(lambda: [next(iter(queue))])  # a forked reader takes the first
    assert child is not None and child.result() == [5]
    assert list(queue) == [3, 70000, 0]  # this process the rest, in order, then the end
    queue.close()
    assert parse_pool.Queue.of(list(range(20000))) is None  # more than a pipe holds at once


def test_yaml_and_metal_are_parsed_here(monkeypatch, tmp_path):
    """The yaml's model costs more to send than to parse; a Metal file's tokens serve the rules here."""
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    queued = []
    real = parse_pool.Queue.of
    monkeypatch.setattr(parse_pool.Queue, "of", lambda numbers: queued.append(list(numbers)) or real(numbers))
    jobs = []
    real_all = parse_pool.parse_all
    monkeypatch.setattr(parse_pool, "parse_all", lambda js, after=None: jobs.extend(js) or real_all(js, after))
    with cache.disable_cache():
        read(MINI, monkeypatch, 2)
    assert len(queued) == 1 and {jobs[k][0] for k in queued[0]} == {"host"}  # what children may take
    assert {j[0] for j in jobs} >= {"yaml", "host", "metal"}


@pytest.mark.parametrize(("cores", "load", "want"), [(2, 0.0, 2), (2, 1.2, 1), (4, 1.5, 3), (4, 3.0, 1), (16, 0.0, 8)])
def test_auto_uses_the_idle_cores(monkeypatch, cores, load, want):
    monkeypatch.delenv("MPS_MIGRATE_JOBS", raising=False)
    monkeypatch.setattr(parse_pool.sys, "platform", "linux")
    monkeypatch.setattr(parse_pool.os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(parse_pool.os, "getloadavg", lambda: (load, load, load))
    assert parse_pool.idle_workers() == want
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    assert parse_pool.idle_workers() == 2

"""Running the rules on two processes gives the findings one process gives."""

from __future__ import annotations

import os

import pytest

from migrate import cache, parse_pool, rule_pool
from migrate.lint import lint_tree
from migrate.rulebook import all_rules
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.helpers import FIXTURES


def lint(root, monkeypatch, jobs: int):
    monkeypatch.setenv("MPS_MIGRATE_JOBS", str(jobs))
    monkeypatch.setattr(rule_pool, "MIN_PARALLEL_BYTES", 0)  # a child even for a small tree
    with cache.disable_cache():
        return lint_tree(load_tree(root)).findings


@pytest.mark.parametrize("root", ["mini", "review", "2.6.0", "2.7.0a0"])
def test_two_processes_find_what_one_finds(root, monkeypatch):
    root = {"2.6.0": pytorch_260_root, "2.7.0a0": pytorch_270a0_root}.get(root, lambda: FIXTURES / root)()
    forks = []
    real = parse_pool.Child.start
    monkeypatch.setattr(parse_pool.Child, "start", lambda work: forks.append(1) or real(work))
    one = lint(root, monkeypatch, 1)
    assert not forks
    two = lint(root, monkeypatch, 2)
    assert forks  # a child ran the Metal data-flow rules
    assert one and one == two
    if root.name != "mini":  # the others have findings of the child's rules
        assert {f.code for f in one} & rule_pool.CHILD_RULES


def test_a_failed_child_leaves_its_rules_to_this_process(monkeypatch):
    review = FIXTURES / "review"
    one = lint(review, monkeypatch, 1)
    monkeypatch.setattr(rule_pool, "_encoded", lambda *args: os._exit(3))  # the child dies mid-rule
    assert lint(review, monkeypatch, 2) == one
    assert "MPS016" in {f.code for f in one}


def test_the_metal_flow_rules_exist():
    assert rule_pool.CHILD_RULES <= set(all_rules())

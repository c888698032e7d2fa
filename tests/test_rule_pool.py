"""Running the rules on two processes gives the findings one process gives."""

from __future__ import annotations

import os

import pytest

from migrate import cache, parse_pool, rule_pool
from migrate import lint as lint_module
from migrate.config import Config
from migrate.lint import lint_root, lint_tree
from migrate.read import metal_flow
from migrate.registry import all_rules
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


def lint_root_pooled(root, monkeypatch, config=None):
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)  # a parse child even for a small tree
    with cache.disable_cache():
        return lint_root(root, config=config).findings


def units_here(monkeypatch) -> list:
    """Calls of the Metal data-flow analysis in this process (a forked child's are not recorded)."""
    parent, here = os.getpid(), []
    real = metal_flow._units
    monkeypatch.setattr(
        metal_flow, "_units", lambda *a: (here.append(1) if os.getpid() == parent else None) or real(*a)
    )
    return here


@pytest.mark.parametrize("root", ["mini", "review", "2.6.0", "2.7.0a0"])
def test_the_parse_child_runs_the_metal_flow_rules(root, monkeypatch):
    """lint_root: the child that parsed its share of the files runs the Metal flow rules on the tree's Metal
    view; this process runs the others and never forks for rules; the findings are one process's."""
    root = {"2.6.0": pytorch_260_root, "2.7.0a0": pytorch_270a0_root}.get(root, lambda: FIXTURES / root)()
    one = lint(root, monkeypatch, 1)
    here, forks = units_here(monkeypatch), []
    real = parse_pool.Child.start
    monkeypatch.setattr(parse_pool.Child, "start", lambda work: forks.append(1) or real(work))
    assert lint_root_pooled(root, monkeypatch) == one
    assert not here and not forks
    if root.name != "mini":
        assert {f.code for f in one} & rule_pool.METAL_FLOW_RULES


def test_a_child_failing_in_the_metal_rules_leaves_them_here(monkeypatch):
    review = FIXTURES / "review"
    one = lint(review, monkeypatch, 1)
    here = units_here(monkeypatch)
    monkeypatch.setattr(lint_module, "metal_findings", lambda *args: os._exit(3))  # dies after its parse share
    assert lint_root_pooled(review, monkeypatch) == one
    assert here  # this process analysed the Metal sources itself
    assert "MPS016" in {f.code for f in one}


def test_a_child_failing_in_its_parse_share_leaves_everything_here(monkeypatch):
    review = FIXTURES / "review"
    one = lint(review, monkeypatch, 1)
    parent, real = os.getpid(), parse_pool._parse
    monkeypatch.setattr(parse_pool, "_parse", lambda job: real(job) if os.getpid() == parent else os._exit(3))
    assert lint_root_pooled(review, monkeypatch) == one


def test_metal_findings_for_other_rules_are_not_used(monkeypatch):
    """A tree read for one set of rules, linted with another: the child's findings are dropped, the rules run here."""
    review = FIXTURES / "review"
    config = Config(ignore=["MPS016"])
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "1")
    with cache.disable_cache():
        one = lint_tree(load_tree(review), config).findings
    here = units_here(monkeypatch)
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    with cache.disable_cache():
        key = rule_pool.metal_key(all_rules(), None)  # MPS016 among them
        work = (key, lambda metal_tree: rule_pool.metal_findings(metal_tree, key), rule_pool.flow_lead)
        tree = load_tree(review, metal_work=work)
        assert tree.metal_work is not None
        assert lint_tree(tree, config).findings == one
    assert here and "MPS016" not in {f.code for f in one}


def test_the_marker_splits_a_childs_values():
    child = parse_pool.Child.stream(lambda: iter([1, (2, b"x"), parse_pool._PARSED, "after"]), marks=True)
    assert child.until_marked() == [1, (2, b"x")]
    assert child.rest() == ["after"] and child.ended
    unmarked = parse_pool.Child.stream(lambda: iter([1, 2]), marks=True)  # a child ending without the marker
    assert unmarked.until_marked() == [1, 2] and not unmarked.marked


HOST_WITH_METAL = b"""#include <ATen/native/mps/OperationUtils.h>
#define SHADER R"M(kernel void in_a_macro() {})M"
static const char* SCALE_METAL = R"METAL(
kernel void scale(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2; }
)METAL";
// R"(not a string: a comment)"
static auto lib = MetalShaderLibrary(R"(kernel void twice() {})");
"""


@pytest.mark.parametrize("root", ["synthetic", "2.6.0", "2.7.0a0"])
def test_the_metal_view_reads_a_host_files_metal_as_its_model_has_it(root):
    """A host file the parse child did not parse: its Metal raw strings are read alone, as the host reader does."""
    from migrate.read.host_reader import read_host_file, read_inline_metal
    from migrate.tree import HOST_SUFFIXES, MPS_REL, _walk_rel

    if root == "synthetic":
        files = [("aten/src/ATen/native/mps/operations/Scale.mm", HOST_WITH_METAL)]
    else:
        tree = pytorch_260_root() if root == "2.6.0" else pytorch_270a0_root()
        files = [(rel, (tree / rel).read_bytes()) for rel in _walk_rel(tree, MPS_REL, HOST_SUFFIXES)]
    seen = 0
    for rel, data in files:
        inline = read_host_file(data, rel).inline_metal
        assert read_inline_metal(data, rel) == inline
        seen += len(inline)
    assert seen == {"synthetic": 2, "2.6.0": 3}.get(root, seen)

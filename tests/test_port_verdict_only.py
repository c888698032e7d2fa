"""port --list plans each family for its verdict alone: no clang-format run, no torch example, and the
same verdicts as full plans."""

from __future__ import annotations

import sys

import pytest

from migrate.index import Index
from migrate.model import Edit
from migrate.port import fmt, idioms
from migrate.port import listing
from migrate.port.listing import list_families
from migrate.port.locate import mpsgraph_families
from migrate.port.verdict_only import active, verdict_only
from migrate.tree import load_tree
from tests.test_port_era27 import build_tree


_real_verdict = listing._verdict


@pytest.fixture(scope="module")
def ix27(tmp_path_factory):
    return Index(load_tree(build_tree(tmp_path_factory.mktemp("v27") / "tree")))


def test_verdicts_are_those_of_full_plans(ix27, monkeypatch):
    seen = []
    monkeypatch.setattr(listing, "_verdict", lambda ix, f: seen.append(active()) or _real_verdict(ix, f))
    got = list_families(ix27)
    assert seen and all(seen)  # planned in verdict-only mode
    assert not active()  # the mode ends with each verdict
    full = [_real_verdict(ix27, f) for f in mpsgraph_families(ix27)]  # full plans: formatted, with examples
    assert [v.status for v in full].count("portable") >= 5  # the fixture's families port
    assert got == full


def test_formatting_is_skipped_while_it_holds(ix27, monkeypatch):
    if fmt.clang_format() is None:
        pytest.skip("no clang-format binary (the [verify] extra installs one)")
    calls = []
    real = fmt._format.__wrapped__
    monkeypatch.setattr(fmt, "_format", lambda *a: calls.append(a) or real(*a))
    edit = Edit("aten/src/ATen/native/mps/kernels/X.metal", 0, 0, "struct  a_functor {int x;};\n")
    with verdict_only():
        assert fmt.format_edits(ix27.tree.root, [edit]) == [edit]
        assert fmt.format_text(ix27.tree.root, edit.path, edit.replacement) == edit.replacement
    assert calls == []
    assert fmt.format_edits(ix27.tree.root, [edit])[0].replacement != edit.replacement  # formatted outside it
    assert len(calls) == 1


class _NoTorch:
    def __getattr__(self, name):
        raise AssertionError(f"torch.{name} used")


def test_an_idiom_example_is_not_evaluated_while_it_holds(monkeypatch):
    idiom = idioms.idioms()[0]
    monkeypatch.setitem(sys.modules, "torch", _NoTorch())  # any use of torch fails the test
    with verdict_only():
        assert idioms._example(idiom, {}) == f"e.g. {idiom.example}"
    with pytest.raises(AssertionError, match="torch"):
        idioms._example(idiom, {})

"""port FAMILY with prerequisites (fixtures/port: clamp's overloads call clamp_min's and clamp_max's stubs), and
the stub types a generated host function must match."""

from __future__ import annotations

import shutil
from pathlib import Path

from migrate.cli import main
from migrate.index import Index
from migrate.port.chain import plan_chain
from migrate.port.stub_types import declared_params, scalar_param
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root
from tests.helpers import FIXTURES


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "port", root, ignore=shutil.ignore_patterns("golden"))
    return root


def test_port_clamp_ports_its_prerequisites_first_each_part_on_the_ones_before(tmp_path):
    root = _tree(tmp_path)
    parts = plan_chain(Index(load_tree(root)), "clamp")
    assert [p.family for p in parts][-1] == "clamp" and {"clamp_min", "clamp_max"} <= {p.family for p in parts[:-1]}
    assert all(p.needed_by and "first" in p.why for p in parts[:-1])
    for earlier, later in zip(parts, parts[1:]):  # a later part starts from the files as the earlier left them
        for path in set(earlier.after) & set(later.before):
            assert later.before[path] == earlier.after[path]


def test_port_clamp_prints_each_part_and_writes_the_chain(tmp_path, capsys):
    root = _tree(tmp_path)
    assert main(["port", "clamp", "--root", str(root)]) == 0
    out, err = capsys.readouterr()
    assert "waits for clamp_min, ported first" in err and "waits for clamp_max, ported first" in err
    assert "the patch holds " in err and err.count("ported first") == len(err.split(" -> ")) - 1
    assert out.count("+struct clamp_min_functor") == 1 and out.count("+struct clamp_max_functor") == 1
    assert main(["port", "clamp", "--root", str(root), "--write"]) == 0
    err = capsys.readouterr().err
    assert "ported clamp_min:" in err and "ported clamp_max:" in err and "ported clamp:" in err
    assert main(["port", "clamp", "--root", str(root)]) == 0  # nothing left: every part was written
    out, err = capsys.readouterr()
    assert out == "" and "clamp" in err


def test_a_generated_host_function_takes_the_scalar_as_the_stub_declares_it():
    """TensorCompare.h declares clamp_max_scalar_stub with c10::Scalar by value; REGISTER_DISPATCH of a function
    taking const Scalar& does not compile (found by compile --host on a ported tree)."""
    ix = Index(load_tree(pytorch_270a0_root()))
    assert declared_params(ix, "clamp_max_scalar_stub") == ["TensorIteratorBase&", "c10::Scalar"]
    assert scalar_param(ix, "clamp_max_scalar_stub", "max") == "Scalar max"
    assert declared_params(ix, "leaky_relu_stub") == ["TensorIteratorBase&", "const c10::Scalar&"]
    assert scalar_param(ix, "leaky_relu_stub", "negative_slope") == "const Scalar& negative_slope"
    assert declared_params(ix, "no_such_stub") is None

"""``port --all`` lists the behaviour changes it measured (the port's host run compared with the unported tree's
own code, its MPSGraph through the emulation) next to the ones it infers from the graph."""

from __future__ import annotations

import pytest

from migrate.batch_verify import _case_change, measured_changes, verify_all
from migrate.cli import main
from migrate.host_code.run import Cell, HostReport
from migrate.index import Index
from migrate.port.batch import plan_all
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root
from tests.host_trees import toolchain_or_skip


def test_port_all_host_measures_the_change_it_infers_for_hypot():
    """The old graph squares and adds (overflow); the port scales by the larger magnitude as torch does: the
    inferred stable_hypot change and the measured one stand side by side, and verify against torch CPU passes."""
    toolchain_or_skip()
    root = pytorch_270a0_root()
    ix = Index(load_tree(root))
    rows = plan_all(ix, ["hypot"])
    verify_all(root, ix, rows, host=True)
    (row,) = rows
    assert row.verify == "pass", row.detail
    inferred = [c for c in row.changes if c.startswith("behaviour change (stable_hypot)")]
    measured = [c for c in row.changes if c.startswith("behaviour change (measured against old-mpsgraph")]
    assert inferred and measured, row.changes
    assert "hypot (own cases) float32" in measured[0] and "elements differ" in measured[0]


def _report(*cells: Cell) -> HostReport:
    return HostReport("f", [], [], list(cells), [], [], set(), 0.0, old="x")


def test_measured_changes_name_the_cells_and_say_which_old_code():
    same = Cell("f", "float32", passed=2, old_cases=2, old_graph_cases=2)
    assert measured_changes(_report(same)) == []
    graph = Cell("f", "float16", passed=2, changed=["own 3: Tensor-likes differ\nMismatched elements: 2 / 9 (22%)"],
                 old_cases=2, old_graph_cases=2)  # fmt: skip
    native = Cell("f", "int8", passed=1, changed=["own 1: 5 != 4"], old_cases=1)
    (line,) = measured_changes(_report(same, graph))
    assert (
        line
        == "behaviour change (measured against old-mpsgraph, the unported tree): f float16: own 3: 2 / 9 elements differ"
    )
    (line,) = measured_changes(_report(native))
    assert line.startswith("behaviour change (measured against old code,") and "f int8: own 1: 5 != 4" in line
    many = [Cell("f", f"t{k}", passed=1, changed=["c: d"], old_cases=1) for k in range(5)]
    assert measured_changes(_report(*many))[0].endswith("(+2 more cell(s))")
    assert _case_change("own 1:  a\n  b") == "own 1: a b"


@pytest.mark.parametrize("argv", [["port", "add", "--host"], ["port", "--list", "--host"]])
def test_host_goes_with_all_only(argv, capsys):
    assert main([*argv, "--root", str(pytorch_270a0_root())]) == 2
    assert "--host goes with --all" in capsys.readouterr().err

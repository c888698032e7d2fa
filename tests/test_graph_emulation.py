"""The host shim's MPSGraph emulation: the evaluator's Apple rules (rules/mpsgraph.yaml emulation.rules), the
argument kinds the shim reads, and, with the toolchain, the 2.7.0a0 tree's graph host code run through it."""

from __future__ import annotations

import math

import pytest
import torch

from migrate.host_code import graph_eval as ge

F32 = ge.TORCH_CODES[torch.float32]
I32 = ge.TORCH_CODES[torch.int32]


def _run(sel: str, *tensors, extra=()):
    values = dict(enumerate(tensors))
    return ge.evaluate({"sel": sel, "args": [{"t": i} for i in range(len(tensors))] + list(extra)}, values, "cpu")


NAN = float("nan")


def test_maximum_drops_nan_and_the_nan_propagating_form_keeps_it():
    a, b = torch.tensor([NAN, 1.0, 3.0]), torch.tensor([2.0, NAN, 1.0])
    dropped = _run("maximumWithPrimaryTensor:secondaryTensor:name:", a, b, extra=[None])
    kept = _run("maximumWithNaNPropagationWithPrimaryTensor:secondaryTensor:name:", a, b, extra=[None])
    assert dropped.tolist() == [2.0, 1.0, 3.0]
    assert math.isnan(kept[0]) and math.isnan(kept[1]) and kept[2] == 3.0


def test_round_takes_halfway_cases_away_from_zero_and_rint_to_even():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5])
    assert _run("roundWithTensor:name:", x, extra=[None]).tolist() == [1.0, 2.0, 3.0, -1.0, -3.0]
    assert _run("rintWithTensor:name:", x, extra=[None]).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]


def test_integer_division_truncates_toward_zero():
    a, b = torch.tensor([7, -7], dtype=torch.int32), torch.tensor([2, 2], dtype=torch.int32)
    out = _run("divisionWithPrimaryTensor:secondaryTensor:name:", a, b, extra=[None])
    assert out.tolist() == [3, -3] and out.dtype == torch.int32


def test_cast_to_integer_saturates_and_maps_nan_to_zero():
    x = torch.tensor([NAN, 1e10, -1e10, 2.9, -2.9, 300.0])
    out = ge.evaluate({"sel": "castTensor:toType:name:", "args": [{"t": 0}, I32, None]}, {0: x}, "cpu")
    assert out.tolist() == [0, 2**31 - 1, -(2**31), 2, -2, 300]
    u8 = ge._cast(torch.tensor([300.0, -5.0]), torch.uint8)
    assert u8.tolist() == [255, 0]
    assert ge._cast(torch.tensor([NAN, 0.0]), torch.bool).tolist() == [True, False]
    assert ge._cast(torch.tensor([1e30]), torch.int64).tolist() == [2**63 - 1]


def test_reduction_maximum_ignores_nan_and_the_propagate_form_does_not():
    x = torch.tensor([[NAN, 1.0], [NAN, NAN]])
    dropped = _run("reductionMaximumWithTensor:axis:name:", x, extra=[1, None])
    kept = _run("reductionMaximumPropagateNaNWithTensor:axes:name:", x, extra=[[1], None])
    assert dropped.shape == (2, 1) and dropped[0, 0] == 1.0 and math.isnan(dropped[1, 0])
    assert math.isnan(kept[0, 0])


def test_band_part_keeps_the_band_a_negative_count_keeps_the_whole_side():
    x = torch.ones(3, 3)
    upper = _run("bandPartWithTensor:numLower:numUpper:name:", x, extra=[0, -1, None])
    assert upper.tolist() == torch.triu(x).tolist()


def test_reductions_keep_the_reduced_axes_and_the_input_dtype():
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    s = _run("reductionSumWithTensor:axes:name:", x, extra=[[0, 1], None])
    assert s.shape == (1, 1) and s.dtype == torch.int32 and s.item() == 15
    am = _run("reductionArgMaximumWithTensor:axis:name:", x, extra=[1, None])
    assert am.dtype == torch.int32 and am.tolist() == [[2], [2]]


def test_the_shim_reads_argument_kinds_from_the_selector_labels():
    assert ge.arg_kinds("additionWithPrimaryTensor:secondaryTensor:name:") == ["t", "t", "s"]
    assert ge.arg_kinds("castTensor:toType:name:") == ["t", "dt", "s"]
    assert ge.arg_kinds("concatTensors:dimension:name:") == ["ts", "i", "s"]
    assert ge.arg_kinds("reductionSumWithTensor:axes:name:") == ["t", "ints", "s"]
    lines = dict(line.split(" ", 1) for line in ge.shim_table().splitlines())
    assert lines["splitTensor:numSplits:axis:name:"] == "t,u,i,s,->ts"
    assert "constantWithScalar:dataType:" not in lines  # a method of its own (its double is no generic argument)


def test_infer_gives_the_dtype_and_shape_the_host_code_reads_back():
    spec = ge.infer(
        {
            "node": {"sel": "reductionSumWithTensor:axes:name:", "args": [{"t": 3}, [1], None]},
            "inputs": {"3": {"dtype": F32, "shape": [2, 5]}},
        }
    )
    assert spec == f"{F32} 2 2 1"
    unranked = ge.infer({"node": {"sel": "#placeholder", "args": [None, I32]}, "inputs": {}})
    assert unranked == f"{I32} -1"
    pred = ge.infer(
        {
            "node": {"sel": "lessThanWithPrimaryTensor:secondaryTensor:name:", "args": [{"t": 0}, {"t": 1}, None]},
            "inputs": {"0": {"dtype": F32, "shape": [4]}, "1": {"dtype": F32, "shape": []}},
        }
    )
    assert pred == f"{ge.TORCH_CODES[torch.bool]} 1 4"


def test_an_unknown_selector_raises_naming_it():
    sel = "depthToSpace2DTensor:widthAxis:heightAxis:depthAxis:blockSize:usePixelShuffleOrder:name:"
    with pytest.raises(LookupError, match=rf"not emulated: -\[MPSGraph {sel}\]"):
        ge.evaluate({"sel": sel, "args": []}, {}, "cpu")


def test_call_sites_name_the_file_and_line_of_each_send(tmp_path):
    from migrate.host_code.run import call_sites

    f = tmp_path / "ops" / "Tri.mm"
    f.parent.mkdir()
    f.write_text("x\n  auto t = [mpsGraph bandPartWithTensor:a\n   numLower:1 numUpper:2 name:nil];\n")
    msg = "MPSGraph selector not emulated: -[MPSGraph bandPartWithTensor:numLower:numUpper:name:] (...)"
    assert call_sites([f], msg, tmp_path) == " (sent at ops/Tri.mm:2)"


# ------------------------------------------------------------------ the 2.7.0a0 tree's graph code, run


@pytest.fixture(scope="module")
def tree():
    from tests.corpus import pytorch_270a0_root
    from tests.host_trees import toolchain_or_skip

    toolchain_or_skip()
    return pytorch_270a0_root()


def _verify_json(*args):
    import json

    from tests.host_trees import cli

    p = cli("verify", *args, "--host", "--format", "json")
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        raise AssertionError(p.stdout + p.stderr) from None


def test_an_mpsgraph_family_runs_through_the_emulation_with_old_mpsgraph_as_reference(tree):
    rc, data = _verify_json("hypot", "--root", str(tree))
    assert data["references"] == ["torch-cpu", "old-mpsgraph"]
    cells = {(c["opinfo"], c["dtype"]): c for c in data["cells"]}
    assert cells[("hypot", "float32")]["graph_cases"] > 0 and cells[("hypot", "float32")]["failed"] == []
    # the old graph squares and adds: it overflows where torch CPU's hypot does not
    assert "hypot (own cases) float32" in data["old_vs_cpu"] and rc == 1


def test_a_selector_the_emulation_lacks_is_an_error_cell_naming_it_and_its_call_site(tree):
    # pixel_shuffle's graph moves depth to space, which the table lacks
    rc, data = _verify_json("pixel_shuffle", "--root", str(tree))
    errors = {c["error"] for c in data["cells"] if c["error"]}
    assert rc == 2 and data["verdict"] == "INCOMPLETE"
    expected = (
        "MPSGraph selector not emulated: -[MPSGraph depthToSpace2DTensor:widthAxis:heightAxis:depthAxis:blockSize:"
        "usePixelShuffleOrder:name:] (rules/mpsgraph.yaml has no entry) "
        "(sent at aten/src/ATen/native/mps/operations/PixelShuffle.mm:"
    )
    assert errors and all(e.startswith(expected) for e in errors), errors


def test_a_planted_port_that_drops_nan_is_a_behaviour_change_against_the_old_revision(tree, tmp_path):
    import subprocess

    from tests.host_trees import mps_copy

    root = mps_copy(tree, tmp_path)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "old"], check=True)
    host = root / "aten/src/ATen/native/mps/operations/BinaryOps.mm"
    text = host.read_text()
    planted = text.replace("(maximum_out_mps, maximumWithNaNPropagationAndIntFallback,", "(maximum_out_mps, maximum,")
    assert planted != text
    host.write_text(planted)
    rc, data = _verify_json("maximum", "--root", str(root), "--old", "HEAD")
    assert rc == 1 and data["references"][0] == "torch-cpu" and data["references"][1].startswith("old-mpsgraph (HEAD")
    changed = set(data["behaviour_changes"])
    assert {"maximum (own cases) float32", "maximum (own cases) float16"} <= changed
    assert not any("int" in c for c in changed)  # integers never see NaN: no change there
    cell = next(c for c in data["cells"] if c["opinfo"] == "maximum (own cases)" and c["dtype"] == "float32")
    assert any("nan" in line for line in cell["changed"])
    assert data["old_vs_cpu"] == []  # the old graph propagated NaN, as torch CPU does


def test_the_emulation_coverage_table_is_generated_from_the_shared_tree():
    """docs/mpsgraph-emulation.md is `python -m migrate.host_code.graph_coverage` on the 2.7.0a0 tree: regenerate
    it when the table or the shim changes."""
    from pathlib import Path

    from migrate.host_code.graph_coverage import table
    from tests.corpus import pytorch_270a0_root
    from tests.host_trees import toolchain_or_skip

    toolchain_or_skip()  # GNUstep's headers name NSObject's selectors
    text = table("2.7.0a0", pytorch_270a0_root())
    assert (Path(__file__).resolve().parents[1] / "docs/mpsgraph-emulation.md").read_text() == text
    rows = {ln.split("`")[1]: ln for ln in text.splitlines() if ln.startswith("| `")}
    assert rows["sinWithTensor:name:"].endswith("| 1 | emulated (ops.sin) |")  # pasted by UnaryOps.mm's macro
    assert rows["reductionSumWithTensor:axes:name:"].endswith("emulated (graph: sum) |")
    assert rows["LSTMWithSourceTensor:recurrentWeight:inputWeight:bias:initState:initCell:descriptor:name:"].endswith(
        "| 1 | not emulated |"
    )


def test_macro_pasted_sends_count_once_per_invocation():
    from migrate.host_code.graph_coverage import macro_sends

    text = (
        "#define UNARY(name, sel) \\\n  void name() { [g sel##WithTensor:t name:nil]; }\n"
        "UNARY(a, sin)\nUNARY(b, cos)\nUNARY(c, sin)\n"
    )
    assert macro_sends(text) == {"sinWithTensor:name:": 2, "cosWithTensor:name:": 1}


def test_the_report_names_old_mpsgraph_only_when_a_graph_ran_and_lists_where_it_and_cpu_disagree():
    from migrate.host_code.run import Cell, HostReport

    metal = Cell("exp", "float32", passed=3)
    graph_ok = Cell("sin", "float32", passed=3, graph_cases=3)
    graph_bad = Cell("hypot", "float16", passed=1, failed=["own 4: not close"], graph_cases=2)
    stale = Cell("sin", "complex64", passed=1, graph_cases=1, expected={"kind": "xfail"})  # XPASS: they agree

    def report(*cells, **kw):
        return HostReport("f", [], [], list(cells), [], [], set(), 0.0, **kw)

    assert report(metal).references == ["torch-cpu"]
    r = report(metal, graph_ok, graph_bad, stale)
    assert r.references == ["torch-cpu", "old-mpsgraph"] and r.old_vs_cpu == ["hypot float16"]
    changed = Cell("maximum", "float32", passed=2, changed=["own 1: nan"], old_cases=2, old_graph_cases=2)
    r = report(changed, old="HEAD (abc)", old_disagree=["maximum int8"])
    assert r.references == ["torch-cpu", "old-mpsgraph (HEAD (abc))"]
    assert r.behaviour_changes == ["maximum float32"] and r.verdict == "FAIL" and r.old_vs_cpu == ["maximum int8"]


def test_old_revision_tree_holds_the_revisions_files_and_links_the_rest(tmp_path, monkeypatch):
    import subprocess

    from migrate.host_code import old_tree

    monkeypatch.setattr(old_tree, "cache_root", lambda: tmp_path / "cache")
    root = tmp_path / "tree"
    mps = root / "aten/src/ATen/native/mps"
    (mps / "operations").mkdir(parents=True)
    (mps / "operations/Binary.mm").write_text("old graph\n")
    (root / "other.txt").write_text("same\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "old"], check=True)
    assert old_tree.default_old(root) is None  # a clean tree: no default old reference
    (mps / "operations/Binary.mm").write_text("ported kernel launch\n")
    (mps / "kernels").mkdir()
    (mps / "kernels/Binary.metal").write_text("kernel\n")
    assert old_tree.default_old(root) == "HEAD"
    old, label = old_tree.old_root(root, "HEAD")
    assert label.startswith("HEAD (")
    assert (old / "aten/src/ATen/native/mps/operations/Binary.mm").read_text() == "old graph\n"
    assert not (old / "aten/src/ATen/native/mps/kernels/Binary.metal").exists()  # added since: absent
    assert (old / "other.txt").is_symlink() and (old / "other.txt").read_text() == "same\n"
    assert (root / "aten/src/ATen/native/mps/operations/Binary.mm").read_text() == "ported kernel launch\n"
    from migrate.errors import UsageError

    with pytest.raises(UsageError, match="--old: git rev-parse"):
        old_tree.old_root(root, "no-such-rev")


def test_a_resized_output_grows_its_buffer_so_a_broadcasting_graph_writes_inside_it(tree):
    """floor_divide allocates its output like self and resizes it to the broadcast shape: the shim's resize_ once
    memcpy'd from buffer objects (a heap overflow: SIGABRT) and left the buffer at the old size."""
    rc, data = _verify_json("floor_divide", "--root", str(tree))
    cell = next(c for c in data["cells"] if c["opinfo"] == "floor_divide" and c["dtype"] == "float32")
    assert cell["failed"] == [] and cell["passed"] == 9, cell


def test_transcendental_selectors_are_recorded_and_named_in_the_report_notes(monkeypatch):
    """The emulation computes exp, log, ... with torch CPU: where a graph used one, the report says Apple's
    precision of it is not reproduced (the honest limit, named where it could matter)."""
    from migrate.host_code.run import collect_cells

    monkeypatch.setattr(ge, "APPROXIMATED", set())
    x = torch.tensor([0.5, 1.0])
    _run("additionWithPrimaryTensor:secondaryTensor:name:", x, x, extra=[None])
    assert ge.APPROXIMATED == set()
    _run("exponentWithTensor:name:", x, extra=[None])
    assert ge.APPROXIMATED == {"exp"}
    notes: list[str] = []
    collect_cells([["f", "float32", ""]], {0: {"approximated": ["exp", "log"]}}, notes)
    assert any(n.startswith("the emulated MPSGraph computed exp, log with torch CPU's kernels") for n in notes), notes
    notes = []
    collect_cells([["f", "float32", ""]], {0: {"approximated": []}}, notes)
    assert not any("emulated MPSGraph" in n for n in notes)


def test_an_own_case_the_host_code_refuses_by_name_is_listed_apart_not_failed():
    """'MPS does not support atan2 op with int64 input' is the tree's own clean refusal of a dtype: the own case is
    listed as refused, not as a failure of the host code."""
    from migrate.host_code.run import collect_cells

    refusal = "the host code raised RuntimeError: MPS does not support atan2 op with int64 input"
    rows = {0: {"failure": refusal}, 1: {}, 2: {"failure": "Tensor-likes are not close!"}}
    (cell,), _ = collect_cells([["atan2 (own cases)", "int64", "contiguous"]] * 3, rows, [])
    assert cell.refused_cases == ["contiguous 0: RuntimeError: MPS does not support atan2 op with int64 input"]
    assert cell.failed == ["contiguous 2: Tensor-likes are not close!"] and cell.passed == 1

"""The host path beyond OpInfo samples, on the real 2.7.0a0 tree: verify's own cases (layouts, CPU and Python
scalars, mixed dtypes, out= casts) through the tree's launchers, more planted host bugs (a grid one thread short, a
dtype branch picking the wrong kernel), and a port's generated host code compiled and run through the host path."""

from __future__ import annotations

import json

import pytest

from migrate.host_code.run import collect_cells
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.helpers import REPO
from tests.host_trees import cli, mps_copy, toolchain_or_skip, tree_with


@pytest.fixture(scope="module")
def tree():
    toolchain_or_skip()
    return pytorch_270a0_root()


def _host_json(family: str, root) -> tuple[int, dict]:
    p = cli("verify", family, "--root", str(root), "--host", "--format", "json")
    assert p.stdout, p.stderr
    return p.returncode, json.loads(p.stdout)


def _cell(data: dict, opinfo: str, dtype: str) -> dict:
    return next(c for c in data["cells"] if c["opinfo"] == opinfo and c["dtype"] == dtype)


def test_own_cases_find_the_wrapped_scalar_and_mixed_dtype_bugs_of_binary_mps_impl(tree):
    """2.7.0a0's binary_mps_impl binds a CPU scalar by its raw bytes (a Python float is a double) and reads both
    inputs in input(0)'s dtype: upstream's pytorch/pytorch#152582 (copysign(t, -2.0) wrong on MPS)."""
    rc, data = _host_json("copysign", tree)
    assert rc == 1 and data["verdict"] == "FAIL" and data["path"] == "host"
    own = _cell(data, "copysign (own cases)", "float32")
    failed = {f.split(" ", 1)[0] for f in own["failed"]}
    assert {"python_scalar", "cpu_scalar_offset"} <= failed
    assert not failed & {"contiguous", "strided", "transposed", "broadcast", "zero_dim_offset"}
    assert {"mixed_dtype", "mixed_strided"} <= {f.split(" ", 1)[0] for f in _cell(data, "copysign (own cases)",
                                                                                   "int32")["failed"]}  # fmt: skip
    assert _cell(data, "copysign", "float32")["failed"][0].startswith("sample 9: ")  # copysign(x, -3.14)


def test_an_out_cast_the_launcher_has_no_kernel_for_is_listed_as_refused_not_hidden(tree):
    """exec_unary_kernel names the kernel {name}_{out}_{in}: exp(float32, out=float16) asks for exp_half_float,
    which 2.7.0a0 does not register. A clean error where torch CPU computes: listed, the verdict stays PASS."""
    rc, data = _host_json("exp", tree)
    assert rc == 0 and data["verdict"] == "PASS"
    own = _cell(data, "exp (own cases)", "float32")
    assert own["failed"] == [] and own["passed"] >= 7
    assert len(own["refused_cases"]) == 1 and own["refused_cases"][0].startswith("out_cast ")
    assert own["refused_cases"][0].endswith("Failed to create function state object for: exp_half_float")
    p = cli("verify", "exp", "--root", str(tree), "--host")
    assert "refused (a clean error; torch CPU computes it): out_cast " in p.stdout


def test_verify_host_catches_a_grid_one_thread_short(tree, tmp_path):
    short = tree_with(
        tree, tmp_path, "CrossKernel.mm",
        lambda t: t.replace("mtl_dispatch1DJob(computeEncoder, crossPSO, numThreads);",
                            "mtl_dispatch1DJob(computeEncoder, crossPSO, numThreads - 1);"),
    )  # fmt: skip
    rc, data = _host_json("linalg_cross", short)
    assert rc == 1 and data["verdict"] == "FAIL"
    failing = [c for c in data["cells"] if c["failed"]]
    assert {c["dtype"] for c in failing} >= {"float32", "int64"}
    # the last thread's vector (3 elements) keeps the allocator's sentinel bytes (0xA5: rules/verify.yaml)
    assert all("Mismatched elements: 3 /" in f for c in failing for f in c["failed"])
    assert any("6510615555426900" in f for c in failing if c["dtype"] == "int64" for f in c["failed"])


def test_verify_host_catches_a_dtype_branch_picking_the_wrong_kernel(tree, tmp_path):
    def swap(text: str) -> str:  # bucketize_mps only (searchsorted_mps keeps its branch)
        head, _, tail = text.partition("Tensor bucketize_mps(")
        return (
            head
            + "Tensor bucketize_mps("
            + tail.replace(
                "out_int32 ? ScalarType::Int : ScalarType::Long", "out_int32 ? ScalarType::Long : ScalarType::Int"
            )
        )

    rc, data = _host_json("bucketize", tree_with(tree, tmp_path, "Bucketization.mm", swap))
    assert rc == 1 and data["verdict"] == "FAIL"
    failures = [f for c in data["cells"] for f in c["failed"]]
    assert failures and all("dtype" in f for f in failures)
    assert all(c["failed"] for c in data["cells"] if c["opinfo"] == "bucketize")  # either branch now picks wrong


def test_ported_host_code_compiles_and_agrees_with_torch_cpu_through_the_host_path(tree, tmp_path):
    """port writes atan2 (binary_mps_impl behind a promoting wrapper) and leaky_relu (a launcher binding a run-time
    scalar) into a copy of the tree; the tree's own OperationUtils.mm then runs the generated host code. This caught
    port bugs that only a compiler sees: TensorIteratorConfig::add_input of a temporary (deleted), mtl_setBytes
    instantiated for double (AT_DISPATCH_ALL_TYPES), a missing Dispatch header, and a host function taking
    const Scalar& for a stub declared with Scalar by value (clamp_max_scalar_stub). clamp ports its chain."""
    root = mps_copy(tree, tmp_path)
    for family in ("atan2", "leaky_relu", "clamp"):  # clamp: minimum, clamp_max, maximum, clamp_min, then clamp
        p = cli("port", family, "--root", str(root), "--write")
        assert p.returncode == 0, p.stderr
    assert "the patch holds 5 ports" in p.stderr
    ops = root / "aten/src/ATen/native/mps/operations"
    assert "#include <ATen/Dispatch_v2.h>" in (ops / "UnaryKernel.mm").read_text()
    assert "clamp_max_mps_kernel(TensorIteratorBase& iter, Scalar max)" in (ops / "UnaryKernel.mm").read_text()
    cases = (("atan2", "atan2 (own cases)"), ("leaky_relu", "nn_functional_leaky_relu"), ("clamp", "clamp"))
    for family, cell in cases:
        rc, data = _host_json(family, root)
        assert not data["build_errors"] and not [c for c in data["cells"] if c["failed"]], (family, data["cells"])
        stale = [c["dtype"] for c in data["cells"] if c["passed"] and (c["expected"] or {}).get("kind") == "xfail"]
        if family == "atan2":  # the port registers int64, which 2.7.0a0's test_mps expects to fail: a stale entry
            assert (rc, data["verdict"], stale) == (1, "FAIL", ["int64"])
        else:
            assert (rc, data["verdict"], stale) == (0, "PASS", [])
        assert _cell(data, cell, "float16")["passed"] > 0


def test_collect_cells_keeps_layout_names_and_separates_clean_refusals():
    listed = [["op", "float32", ""], ["op (own cases)", "float32", "strided"], ["op (own cases)", "float32", "out_cast"],
              ["op (own cases)", "float32", "contiguous"], ["op", "bool", ""]]  # fmt: skip
    refusal = "the host code raised RuntimeError: Failed to create function state object for: x"
    rows = {
        0: {"index": 0},
        1: {"index": 1, "failure": "Tensor-likes are not close!"},
        2: {"index": 2, "failure": refusal},
        3: {"index": 3, "fallbacks": ["aten::maximum.out"]},
        4: {"index": 4, "failure": refusal},
    }
    notes: list[str] = []
    cells, fallbacks = collect_cells(listed, rows, notes)
    opinfo, own, refused_dtype = cells
    assert refused_dtype.refused.startswith("RuntimeError: Failed") and refused_dtype.refused_cases == []
    assert (opinfo.passed, opinfo.failed) == (1, [])
    assert own.failed == ["strided 1: Tensor-likes are not close!"] and own.passed == 1
    assert own.refused_cases == ["out_cast 2: RuntimeError: Failed to create function state object for: x"]
    assert not own.refused and fallbacks == {"maximum.out"}


def test_the_shim_coverage_list_is_generated_from_the_shipped_trees_sends():
    """docs/host-shim-coverage.md is `python -m migrate.host_code.coverage` on the shipped trees: regenerate it when
    the shim or the trees change. Every selector the trees send is declared somewhere (only a debugging method
    is not)."""
    toolchain_or_skip()  # GNUstep's Foundation headers classify the Foundation sends
    from migrate.host_code.coverage import table

    text = table({"2.6.0": pytorch_260_root(), "2.7.0a0": pytorch_270a0_root()})
    assert (REPO / "docs/host-shim-coverage.md").read_text() == text
    missing = [ln for ln in text.splitlines() if ln.endswith("| missing |")]
    assert missing == ["| `printNDArray` | 1 | 1 | missing |"]


def test_sends_are_read_through_ternaries_preprocessor_branches_and_cxx_brackets():
    from migrate.host_code.coverage import sends

    text = """
    auto f = [&](int i) { return v[i + 1]; };          // a lambda, a subscript
    auto [a, b] = pair;                                 // a structured binding
    id x = [enc setBuffer:buf offset:(ok ? 0 : n) atIndex:2];
    [graph castTensor:t toType:isHalf ? MPSDataTypeFloat16 : MPSDataTypeFloat32 name:@"cast"];
    [graph resize:t
    #if defined(__MAC_13_2)
         mode:one
    #else
         mode:other
    #endif
         name:nil];
    [[queue commandBuffer] commit];
    """
    assert sends(text) == {"setBuffer:offset:atIndex:": 1, "castTensor:toType:name:": 1, "resize:mode:name:": 1,
                           "commandBuffer": 1, "commit": 1}  # fmt: skip


def test_the_trees_expectations_make_a_failing_cell_xfail_and_a_passing_xfail_stale():
    from migrate.host_code.run import HostReport, render

    xfail = {"kind": "xfail", "table": "XFAILLIST", "path": "test/test_mps.py", "line": 7, "reason": "not precise"}
    listed = [["op", "complex64", ""], ["op", "float16", ""], ["op", "float32", ""]]
    rows = {
        0: {"index": 0, "failure": "Tensor-likes are not close!", "expected": xfail},
        1: {"index": 1, "expected": xfail},
        2: {"index": 2},
    }
    cells, _ = collect_cells(listed, rows, [])
    assert [c.status for c in cells] == ["XFAIL", "XPASS", "PASS"]
    report = HostReport("op", [], [], cells, [], [], set(), 0.0)
    assert report.verdict == "FAIL"  # a stale expectation fails, as an unexpected success fails test_mps
    text = render(report)
    assert "XFAIL op complex64: 0/1 samples\n       the tree expects it: XFAILLIST (test/test_mps.py:7)" in text
    assert "XPASS op float16: 1/1 samples\n       stale: the tree expects a failure: XFAILLIST" in text
    report.cells = cells[:1] + cells[2:]
    assert report.verdict == "PASS"  # the expected failure alone does not fail the run

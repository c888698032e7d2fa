"""Ports with several run-time scalars: a parameter struct (migrate/port/params.py), the 2.7-era launch the port
writes (exec_params_kernel) and its emulation by verify (migrate/verify/params_host.py), on the 2.7.0a0 tree's
own graph code and on fixtures/port27."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.index import Index
from migrate.port.locate import family_impls, graph_dag
from migrate.port.patch import plan_port
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root
from tests.helpers import FIXTURES
from tests.test_port_era27 import build_tree


@pytest.fixture(scope="module")
def ix27():
    return Index(load_tree(pytorch_270a0_root()))


@pytest.mark.parametrize(
    "family, names",
    [
        ("hardtanh_backward", ["min", "max"]),
        ("threshold", ["threshold", "value"]),  # the graph's order follows the signature, not the constants'
    ],
)
def test_real_graphs_with_two_scalars_translate_to_struct_fields(ix27, family, names):
    dag = graph_dag(ix27, family_impls(ix27, family)[0].function)
    assert dag.alpha is None and [p.name for p in dag.params] == names


def test_real_hardtanh_backward_ports_to_the_2_7_params_launch(ix27):
    port = plan_port(ix27, "hardtanh_backward", cleanup=False)
    text = "".join(e.replacement for e in port.edits)
    assert "struct HardtanhBackwardParams {\n  T min;\n  T max;\n};" in text
    assert 'template [[host_name("hardtanh_backward_" #DTYPE0 "_" #DTYPE1)]] kernel void' in text
    # the stub has the declared function type's iterator (TensorIterator&, not TensorIteratorBase&)
    assert (
        "static void hardtanh_backward_mps_kernel(TensorIterator& iter, const Scalar& min, const Scalar& max)" in text
    )
    assert "static void exec_params_kernel(TensorIteratorBase& iter," in text  # the launch, written once
    assert 'exec_params_kernel(iter, "hardtanh_backward", 2, std::array<scalar_t, 2>{' in text
    assert any("hardtanh_backward_bounds" in n for n in port.notes)


def test_threshold_binds_only_the_input_its_kernel_reads(ix27):
    # threshold_stub's iterator is binary (self, self) on CPU; the unary kernel reads operand 0 only
    port = plan_port(ix27, "threshold", cleanup=False)
    text = "".join(e.replacement for e in port.edits)
    assert 'exec_params_kernel(iter, "threshold", 1, std::array<scalar_t, 2>{threshold.to<scalar_t>(), ' in text
    assert any("threshold_nan" in n for n in port.notes)


def test_threshold_stub_shared_with_a_binary_iterator_is_refused(ix27):
    # threshold_stub's CPU kernel runs a binary iterator (self, other) shared with threshold_backward:
    # threshold's unary graph cannot implement it
    with pytest.raises(PortBlocked, match="threshold_stub"):
        plan_port(ix27, "threshold_backward", cleanup=False)


def _verify_json(root: Path, family: str, patch: str) -> dict:
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "migrate",
            "verify",
            family,
            "--root",
            str(root),
            "--patch",
            "-",
            "--dtypes",
            "float32",
            "--layouts",
            "contiguous,odd_size,strided,broadcast,mixed_dtype,out_cast",
            "--no-opinfo",
            "--format",
            "json",
        ],
        input=patch,
        capture_output=True,
        text=True,
    )
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def test_params_port_verifies_against_cpu_except_where_cpu_disagrees_with_itself(tmp_path):
    """The port computes torch's scalar path (and CUDA's): self <= min or self >= max ? 0 : grad.  torch CPU's
    vectorized path gives 0 for self = NaN, its scalar tail gives grad: the only failures are self = NaN."""
    root = build_tree(tmp_path / "tree")
    patch = subprocess.run(
        [sys.executable, "-m", "migrate", "port", "hardtanh_backward", "--root", str(root)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    report = _verify_json(root, "hardtanh_backward", patch)
    cells = [c for c in report["cells"] if c["layout"] != "coverage"]
    assert sum(c["cases"] for c in cells) >= 4
    assert {k for c in cells for k in c["kernels"]} == {"hardtanh_backward_float_float"}
    failing = [c for c in cells if c["status"] == "FAIL"]
    assert any(c["layout"] == "mixed_dtype" and c["status"] == "pass" for c in cells)  # converted to the common dtype
    for c in failing:
        first = c["stats"]["first_failure"]
        assert first["inputs"][1] == "nan" and first["expected"] == 0.0, c
    assert any("min_val=-1.0, max_val=1.0" in n for n in report["notes"])


def test_modern_fixture_writes_upstreams_shape(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "port", root, ignore=shutil.ignore_patterns("golden"))
    port = plan_port(Index(load_tree(root)), "hardtanh_backward", cleanup=False)
    text = "".join(e.replacement for e in port.edits)
    assert "typedef HardtanhBackwardParams<half> HardtanhBackwardParams_half;" in text
    assert "REGISTER_BINARY_ALPHA_OP(hardtanh_backward, half, HardtanhBackwardParams_half, half);" in text
    assert 'lib.exec_binary_kernel_with_params(iter, "hardtanh_backward", std::array<scalar_t, 2>{' in text


def test_modern_tree_without_the_params_launcher_is_refused(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "port", root, ignore=shutil.ignore_patterns("golden"))
    (root / "aten/src/ATen/native/mps/OperationUtils.h").unlink()
    with pytest.raises(PortBlocked, match="exec_binary_kernel_with_params"):
        plan_port(Index(load_tree(root)), "hardtanh_backward", cleanup=False)

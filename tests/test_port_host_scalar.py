"""A port with a run-time scalar on a binary op (leaky_relu_backward's negative_slope) adds a launcher beside
binary_mps_impl; the tree's own host code built with it must compile (its mixed-dtype branch once passed
temporaries to TensorIteratorConfig::add_input, which the headers delete) and agree with torch CPU on the cases
autograd draws from nn.functional.leaky_relu's samples (migrate/host_code/derived.py)."""

from __future__ import annotations

import json

from tests.corpus import pytorch_270a0_root
from tests.host_trees import cli, mps_copy, toolchain_or_skip


def test_ported_leaky_relu_backward_builds_and_passes_on_the_host_path(tmp_path):
    toolchain_or_skip()
    root = mps_copy(pytorch_270a0_root(), tmp_path)
    port = cli("port", "leaky_relu_backward", "--root", str(root), "--write")
    assert port.returncode == 0, port.stderr
    assert "test_output_grad_match_nn_functional_leaky_relu" in port.stderr  # the test that reaches it on a Mac
    ver = cli("verify", "leaky_relu_backward", "--root", str(root), "--host", "--format", "json")
    data = json.loads(ver.stdout)
    assert data["verdict"] == "PASS" and ver.returncode == 0, (data.get("build_errors"), ver.stderr[-2000:])
    cells = {(c["opinfo"], c["dtype"]) for c in data["cells"] if c["passed"]}
    assert ("leaky_relu_backward (from nn.functional.leaky_relu)", "float32") in cells, cells

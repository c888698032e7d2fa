"""Ports on the modern-layout fixture (fixtures/port: today's REGISTER_*_OP functors) verified end to end:
run-time scalars through exec_*_kernel(iter, name, alpha), a parameter struct on mixed dtypes, and an idiom
that makes remainder torch's."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.verify.run import Options, verify
from tests.helpers import FIXTURES


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("modern") / "tree"
    shutil.copytree(FIXTURES / "port", root, ignore=shutil.ignore_patterns("golden"))
    return root


def _port_and_verify(tree: Path, family: str, capsys, dtypes, layouts):
    assert main(["port", family, "--root", str(tree)]) == 0
    patch, err = capsys.readouterr()
    rep = verify(tree, family, (patch, f"<port {family}>"), Options(dtypes=dtypes, layouts=layouts))
    return rep, err


@pytest.mark.parametrize("family, scalar", [
    ("leaky_relu", "negative_slope = 0.01"),
    ("softshrink", "lambd = 0.5"),
    ("add", "alpha = 2"),
])
def test_an_alpha_launch_binds_the_scalar(tree, capsys, family, scalar):
    """REGISTER_*_ALPHA_OP kernels are named <op>_<flavor>_<out>_<in>_<alpha type> and take the scalar after
    the tensors; the reference gets the same value."""
    dtypes = [torch.float32, torch.int32] if family == "add" else [torch.float32]
    rep, _ = _port_and_verify(tree, family, capsys, dtypes, ["contiguous", "transposed", "broadcast", "python_scalar"])
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    assert any(scalar in n for n in rep.notes), rep.notes
    kernels = {k for c in rep.cells for k in c.kernels}
    assert any(k.endswith("_float_float_float") for k in kernels), kernels
    if family == "add":  # integral inputs take an integral alpha
        assert {c.dtype for c in rep.cells if c.status == "pass"} == {"float32", "int32"}


def test_a_parameter_struct_on_mixed_dtypes_finds_the_trees_cast_kernel(tree, capsys):
    rep, _ = _port_and_verify(tree, "hardtanh_backward", capsys, [torch.float32], ["mixed_dtype", "contiguous"])
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    assert "hardtanh_backward_dense_cast_float_float_HardtanhBackwardParams_float" in {
        k for c in rep.cells for k in c.kernels}


def test_remainder_ports_as_torchs_fmod_formula(tree, capsys):
    rep, err = _port_and_verify(tree, "remainder", capsys, [torch.float32, torch.int32], ["contiguous"])
    assert "behaviour change (remainder_fmod)" in err
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]


@pytest.mark.parametrize("family, dtypes", [
    ("sign", [torch.float32, torch.int64, torch.int32]),  # a dtype branch: int64 clamps, the rest signs
    ("frac", [torch.float32, torch.float16]),
    ("mish", [torch.float32]),  # idiom tanh_softplus
])
def test_modern_unary_families_port_and_verify(tree, capsys, family, dtypes):
    rep, _ = _port_and_verify(tree, family, capsys, dtypes, ["contiguous", "transposed", "zero_dim"])
    assert rep.ran and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    assert {c.dtype for c in rep.cells if c.status == "pass"} == {str(d).removeprefix("torch.") for d in dtypes}

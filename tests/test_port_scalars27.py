"""Run-time scalars, string switches, OS branches and stub-registered graphs on 2.7-era trees:
port writes a launcher in the tree's own style (rules/launch_conventions.yaml unary_1d_scalar,
binary_offsets_scalar), verify detects it from the tree's code and runs it against torch CPU with the
same scalar; and the real 2.7.0a0 tree's families these unlock (goldens: tests/test_port_era27.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.index import Index
from migrate.port.listing import verdict
from migrate.tree import load_tree
from migrate.verify.run import Options, verify
from tests.corpus import pytorch_270a0_root
from tests.test_port_era27 import build_tree

OPS = "aten/src/ATen/native/mps/operations"


@pytest.fixture()
def tree(tmp_path) -> Path:
    return build_tree(tmp_path / "tree")


def port(capsys, *args) -> tuple[int, str, str]:
    rc = main(["port", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def check(root: Path, family: str, patch: str, dtypes=(torch.float32,), **kw):
    opts = Options(opinfo=False, dtypes=list(dtypes), layouts=["contiguous", "transposed"], **kw)
    return verify(root, family, (patch, f"<port {family}>"), opts)


# ------------------------------------------------------------------ the launcher
def test_the_unary_launcher_is_written_once(tree, capsys):
    for family in ("leaky_relu", "softshrink"):
        assert port(capsys, family, "--root", str(tree), "--write")[0] == 0
    host = (tree / OPS / "UnaryKernel.mm").read_text()
    assert len(re.findall(r"static void exec_unary_kernel_with_scalar\(", host)) == 1
    assert 'exec_unary_kernel_with_scalar(iter, "leaky_relu", negative_slope);' in host
    assert 'exec_unary_kernel_with_scalar(iter, "softshrink", lambd);' in host
    assert "mtl_setArgs(computeEncoder, outputTensor, inputTensor);" in host
    assert "mtl_setBytes(computeEncoder, scalar.to<scalar_t>(), 2);" in host  # in the input's dtype: exact for int64


@pytest.mark.parametrize(
    "family, scalar, convention",
    [
        ("leaky_relu", "negative_slope = 0.01 (the schema default", "unary_1d_scalar"),
        # torch CPU adds with alpha as a fused multiply-add (inf + 2 * -3.4e38 is inf): the fused_alpha idiom
        ("add", "alpha = 2 (the schema default 1 would not show it", "binary_offsets_scalar"),
    ],
)
def test_verify_runs_the_scalar_launch_against_torch_cpu(tree, capsys, family, scalar, convention):
    rc, patch, _ = port(capsys, family, "--root", str(tree))
    assert rc == 0
    rep = check(tree, family, patch)
    assert rep.source.convention == convention
    assert any(scalar in n for n in rep.notes), rep.notes
    assert rep.ran > 0 and rep.ok, [c.failures or c.stats.first for c in rep.cells if c.status == "FAIL"]
    if family == "add":  # the dense kernel for contiguous iterators, the offsets one otherwise
        assert {k.rsplit("_", 1)[0] for c in rep.cells for k in c.kernels} == {"add_dense", "add"}


def test_a_kernel_ignoring_the_scalar_fails(tree, capsys):
    rc, patch, _ = port(capsys, "leaky_relu", "--root", str(tree))
    broken = patch.replace("(input[index], negative_slope)", "(input[index], T1(0.5f))")
    assert broken != patch
    rep = check(tree, "leaky_relu", broken)
    assert not rep.ok and rep.exit_code == 1


def test_a_launcher_binding_something_else_is_not_this_convention(tree, capsys):
    """The convention is read from the launcher's code: one that binds the scalar differently is not emulated."""
    rc, patch, _ = port(capsys, "leaky_relu", "--root", str(tree))
    odd = patch.replace("inputTensor);\n", "inputTensor, scalar.to<double>());\n")
    assert odd != patch
    with pytest.raises(Exception) as exc:
        check(tree, "leaky_relu", odd)
    assert "leaky_relu" in str(exc.value)


def test_the_kernel_reads_the_scalar_in_the_inputs_dtype(tree, capsys):
    """The launcher binds the scalar as scalar_t (a float would round an int64 bound past 2^24); a kernel
    reading those bytes as a float gets garbage for half and fails."""
    rc, patch, _ = port(capsys, "leaky_relu", "--root", str(tree))
    assert "constant T1& negative_slope [[buffer(2)]]" in patch
    broken = (
        patch.replace("constant T1& negative_slope", "constant float& negative_slope")
        .replace("constant DTYPE1& negative_slope", "constant float& negative_slope")
        .replace("(input[index], negative_slope)", "(input[index], T1(negative_slope))")
    )
    assert broken != patch
    assert check(tree, "leaky_relu", patch, dtypes=[torch.float16]).ok
    assert not check(tree, "leaky_relu", broken, dtypes=[torch.float16]).ok


# ----------------------------------------------------------- the real 2.7.0a0 tree
@pytest.fixture(scope="module")
def real_ix():
    return Index(load_tree(pytorch_270a0_root()))


NEW27 = [
    "leaky_relu",
    "leaky_relu_backward",
    "softshrink",
    "softshrink_backward",
    "maximum",
    "minimum",
    "ceil",
    "floor",
    "trunc",
    "round",
    "rsqrt",
    "isposinf",
    "isneginf",
    "_prelu_kernel",
    "add",
    "softplus",
    "softplus_backward",
    "nan_to_num",  # struct fields the host computes from optional doubles (migrate/conventions/host_expr.py)
    "fmod",  # div_mode_template: its float-bit dtype test of the input is decided per dtype
    "remainder",
]


def test_a_run_time_choice_of_stubs_is_named_as_the_blocker(real_ix):
    """clamp_out calls clamp_scalar_stub or a one-bound stub by which bounds are present: each stub is a part
    of the port (migrate/port/multi.py), and the first one waiting for another family's port is the blocker,
    not the graph helper's `if (has_min)` it shows up as."""
    v = verdict(real_ix, "clamp")
    assert v.status == "blocked" and v.construct == "another family's stub", v
    assert "clamp_max_scalar_stub (min empty, max given), the stub of clamp_max" in v.detail and v.where
    assert verdict(real_ix, "aminmax").construct != "several stubs"  # a reduction stays refused as one


@pytest.mark.parametrize("family", NEW27)
def test_real_tree_families_are_portable(real_ix, family):
    v = verdict(real_ix, family)
    assert v.status == "portable", v


@pytest.mark.parametrize(
    "family, why",
    [
        (
            "relu",
            "relu, the CPU kernel MPS would share, reaches no stub (relu_stub is not declared): it calls at::clamp_min",
        ),
        ("sub", "sub's CPU kernel reaches add_stub, the stub of add"),
    ],
)
def test_real_tree_blockers_say_what_is_left(real_ix, family, why):
    v = verdict(real_ix, family)
    assert v.status in ("blocked", "translatable") and why in v.detail, v


def test_shared_line_port_drops_the_macro_registration(capsys):
    """ceil's MPS line is shared with CPU; its MPSGraph kernel comes from REGISTER_MPS_UNARY_STUB(ceil, ceil)."""
    rc, out, err = port(capsys, "round", "--root", str(pytorch_270a0_root()))
    assert rc == 0
    assert (
        "-REGISTER_MPS_UNARY_STUB(round, round);" in out and "+REGISTER_DISPATCH(round_stub, round_mps_kernel);" in out
    )
    assert "native_functions.yaml" not in out  # the dispatch line already shares the CPU kernel
    assert "::metal::rint(" in out and "behaviour change (round_half_even)" in err


def test_specialisation_notes_name_the_choice(tree, capsys):
    rc, out, err = port(capsys, "add", "--root", str(tree))
    assert rc == 0 and "took the general branch of `if (alpha_has_value)`" in err
    assert "struct add_functor" in out and "sub" not in out.split("struct add_functor")[1].split("};")[0]


def test_callers_literal_decides_a_conditional_expression(real_ix):
    """is_posneginf_helper(iter, true) picks -inf in `is_neg ? -inf : inf`."""
    from migrate.port.patch import translate_family

    assert repr(translate_family(real_ix, "isneginf")[1].output).startswith("eq(")
    assert "-inf" in repr(translate_family(real_ix, "isneginf")[1].output)
    assert "-inf" not in repr(translate_family(real_ix, "isposinf")[1].output)


def test_flag_without_default_reaches_the_reference(real_ix):
    from migrate.conventions.scalar_launch import required_flags, scalar_value

    assert required_flags(real_ix, "leaky_relu_backward") == (("self_is_result", False),)
    assert scalar_value(real_ix, "leaky_relu", "negative_slope")[0] == 0.01
    assert scalar_value(real_ix, "leaky_relu_backward", "negative_slope")[0] == 2.0


@pytest.mark.parametrize(
    "family, idiom",
    [
        ("softshrink_backward", "softshrink_backward_band"),
        ("_prelu_kernel", "prelu_select"),
        ("leaky_relu", "leaky_relu_select"),
    ],
)
def test_real_tree_ports_use_torchs_formulation(capsys, family, idiom):
    rc, out, err = port(capsys, family, "--root", str(pytorch_270a0_root()))
    assert rc == 0 and f"behaviour change ({idiom})" in err


# ------------------------------------------- OpInfo samples with their own run-time scalars
@pytest.mark.parametrize(
    "family, uses, hardwired, samples",
    [
        # nn.functional.softshrink's samples pass lambd=0.0, 0.5 and the default (0.5, verify's own value)
        ("softshrink", "(input[index], lambd)", "(input[index], T1(0.5f))", 5),
        # add's pass alpha=2 (verify's own value), -3.125 and the default 1
        ("add", "float(b), float(alpha), float(a)", "float(b), 2.0f, float(a)", 11),
        # a parameter struct: nn.functional.softplus's samples pass beta=3, threshold=0.2 (verify's: 2.0, 3.0)
        ("softplus", "float(x) * float(params.beta)", "float(x) * 2.0f", 3),
    ],
)
def test_opinfo_samples_run_with_their_own_scalars_on_the_real_tree(capsys, family, uses, hardwired, samples):
    """A run-time scalar launch binds each OpInfo sample's own scalar (as the operator receives it): every sample of
    the real 2.7.0a0 tree's port runs and agrees; a kernel hardwired to verify's own value passes the generated cases
    and fails the samples passing another one."""
    root = pytorch_270a0_root()
    rc, patch, _ = port(capsys, family, "--root", str(root))
    assert rc == 0 and uses in patch
    opts = lambda: Options(dtypes=[torch.float32], layouts=["contiguous", "opinfo"])  # noqa: E731
    rep = verify(root, family, (patch, f"<port {family}>"), opts())
    sampled = [c for c in rep.cells if c.layout.startswith("opinfo:")]
    assert rep.ok and sum(c.cases for c in sampled) == samples and all(c.passed == c.cases for c in sampled)
    rep = verify(root, family, (patch.replace(uses, hardwired), f"<port {family}>"), opts())
    by_layout = {c.layout: c.status for c in rep.cells}
    assert by_layout["contiguous"] == "pass" and rep.exit_code == 1
    assert [s for k, s in by_layout.items() if k.startswith("opinfo:")] == ["FAIL"]

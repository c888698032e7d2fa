"""port on fixtures/port27 (an overlay on fixtures/port, see build_tree), a tree in the 2.7-era shape (template kernels + [[host_name]] instantiation
macros, exec_unary_kernel naming, binary_mps_impl): golden patches, the style detected from the
tree's files, the patched kernel files compile and export what the host launches, the torch-faithful
idioms and their behaviour-change notes, port --all and --list's format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.index import Index
from migrate.port.patch import plan_port
from migrate.port.text_edits import apply_edits
from migrate.port.style import detect
from migrate.tree import load_tree
from tests.helpers import FIXTURES

PORT27 = FIXTURES / "port27"
GOLDEN = PORT27 / "golden"
GOLDENS = {
    "sqrt": "unary math, integers computed in float (float_int instantiations)",
    "neg": "unary arithmetic, integers stay integers",
    "floor": "unary rounding, identity on integers",
    "atan2": "binary through binary_mps_impl, the file's registration macro, bfloat under its guard",
    "lt": "comparison to bool (result_of<T, F> is bool)",
    "logical_and": "logical, operands cast to bool",
    "logaddexp": "idiom rewrite: stable logaddexp",
    "hardsigmoid": "idiom rewrite: NaN-propagating clamp",
    "hardtanh_backward": "two run-time scalars: a parameter struct, the port-written exec_params_kernel launch",
    "nan_to_num": "struct fields computed from optional doubles by the host's own expressions, floating dtypes only",
    "sign": "dtype branch ([t dataType] == MPSDataTypeInt64) -> per-dtype specialisation on T",
    "leaky_relu": "run-time scalar: the file-local launcher binding it in the input's dtype (unary_1d_scalar)",
    "add": "string switch on op_name specialised for its caller; alpha through binary_mps_impl_with_scalar",
    "clamp_max": "optional bounds: the shared clamp helper (a void helper filling the cached graph) specialised "
    "for an absent min and a present max; integers through the dtype branch; the Tensor overload rides minimum_stub",
    "rsqrt": "OS-version #ifdef / if inside the graph: the newest macOS's branch",
    "_prelu_kernel_backward": "two outputs (one functor each, both written by one thread), the stub's TensorIterator& "
    "type, operands in the CPU iterator's order",
    "addcmul": "ternary with a run-time scalar: the casts to every input's promoted dtype are the kernel's own, "
    "the scalar a one-field parameter struct (exec_params_kernel), CPU's order of the products",
    "addcdiv": "addcmul's helper specialised for division: floating dtypes only, as CPU",
}


def build_tree(root: Path) -> Path:
    """fixtures/port27 is an overlay on fixtures/port: the same MPSGraph host code, with 2.7-era kernel
    files, host stubs, c10/metal headers, yaml and .clang-format on top."""
    shutil.copytree(FIXTURES / "port", root, ignore=shutil.ignore_patterns("golden"))
    shutil.copytree(PORT27, root, ignore=shutil.ignore_patterns("golden"), dirs_exist_ok=True)
    return root


def copy_tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "tree")


@pytest.fixture(scope="module")
def tree27(tmp_path_factory) -> Path:
    return build_tree(tmp_path_factory.mktemp("t27") / "tree")


def test_goldens_cover_the_kinds_of_op():
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(f"{f}.diff" for f in GOLDENS)


@pytest.mark.parametrize("family", sorted(GOLDENS))
def test_port_prints_the_golden_patch(tmp_path, capsys, family):
    root = copy_tree(tmp_path)
    assert main(["port", family, "--root", str(root)]) == 0
    assert capsys.readouterr().out == (GOLDEN / f"{family}.diff").read_text()


def test_style_is_read_from_the_tree(tree27):
    ix = Index(load_tree(tree27))
    assert detect(ix, 1).convention == "unary_1d"
    b = detect(ix, 2)
    assert (b.convention, b.register_macro, b.impl_call) == (
        "binary_offsets",
        "REGISTER_BINARY_INDEXING_OP",
        "mps::binary_mps_impl",
    )
    assert b.bfloat_guard == "#if __METAL_VERSION__ >= 310"
    assert "is_scalar" not in b.traits.floating  # this era's utils.h has no is_scalar_* traits
    modern = Index(load_tree(FIXTURES / "port"))
    assert detect(modern, 1).convention == detect(modern, 2).convention == "functor_registry"


def test_run_time_scalar_gets_a_launcher_in_this_era(tmp_path, capsys):
    """2.7's exec_unary_kernel carries no float: the port adds the launcher once (tests/test_port_scalars27.py)."""
    root = copy_tree(tmp_path)
    assert main(["port", "leaky_relu", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert 'exec_unary_kernel_with_scalar(iter, "leaky_relu", negative_slope);' in out


def test_behaviour_changes_are_printed_with_an_example(tmp_path, capsys):
    root = copy_tree(tmp_path)
    assert main(["port", "logaddexp", "--root", str(root)]) == 0
    err = capsys.readouterr().err
    assert "behaviour change (stable_logaddexp)" in err
    assert "a=1000, b=1000: old graph inf, port 1000.6932" in err


@pytest.fixture(scope="module")
def patched_libraries(tmp_path_factory):
    """Every golden family ported into one copy of the tree, both kernel files compiled by the CPU backend."""
    from migrate.device import get_backend

    root = build_tree(tmp_path_factory.mktemp("p27") / "tree")
    ix = Index(load_tree(root))
    edits = [e for fam in GOLDENS for e in plan_port(ix, fam).edits if e.path.endswith(".metal")]
    new = apply_edits(ix.tree.sources, edits)
    be = get_backend("cpu", root=root)
    return {p.rsplit("/", 1)[-1]: be.compile_shader(t.decode(), opt=0) for p, t in new.items()}


def test_patched_kernels_export_the_names_the_host_builds(patched_libraries):
    unary = patched_libraries["UnaryKernel.metal"]
    binary = patched_libraries["BinaryKernel.metal"]
    names = set(unary.kernel_names) | set(binary.kernel_names)
    for want in (
        "sqrt_float_float",
        "sqrt_float_int",
        "sqrt_float_bool",
        "neg_int_int",
        "floor_long_long",
        "hardsigmoid_half_half",
        "atan2_float",
        "atan2_dense_bfloat",
        "lt_dense_long",
        "lt_half",
        "logaddexp_float",
        "logical_and_dense_bool",
        "sign_long_long",
        "sign_float_float",
    ):
        assert want in names, want


def test_port_all_table_and_json(tmp_path, capsys):
    root = copy_tree(tmp_path)
    pd = tmp_path / "patches"
    rc = main(["port", "--all", "--root", str(root), "--format", "json", "--patch-dir", str(pd)])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    rows = {r["family"]: r for r in doc["families"]}
    assert rows["leaky_relu"]["convention"] == "unary_1d_scalar", rows["leaky_relu"]
    assert rows["sqrt"]["verify"] in ("pass", "pass*"), rows["sqrt"]
    assert rows["logaddexp"]["behaviour_changes"][0].startswith("behaviour change (stable_logaddexp)")
    assert (pd / "sqrt.diff").read_text() == (GOLDEN / "sqrt.diff").read_text()
    assert "ported and verified" in err and rc in (0, 1)


def test_list_lines_stay_within_160_columns(capsys, tree27):
    assert main(["port", "--list", "--root", str(tree27)]) == 0
    out = capsys.readouterr().out
    assert max(len(x) for x in out.splitlines()) <= 160
    assert main(["port", "--list", "--root", str(tree27), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    blocked = [r for r in rows if r["status"] != "portable"]
    assert blocked and all(r["where"] or r["construct"] in ("half-ported",) for r in blocked)


def test_dtype_branch_becomes_a_choice_on_the_functor_type(tree27):
    ix = Index(load_tree(tree27))
    port = plan_port(ix, "sign")
    assert repr(port.dag.output) == "if_dtype<long>(inputTensor, clamp(inputTensor, -1, 1), sign(inputTensor))"
    text = "".join(e.replacement for e in port.edits if e.path.endswith(".metal"))
    assert "::metal::is_same_v<T, long>" in text
    assert not [n for n in port.notes if n.startswith("behaviour change")]  # the clamp arm is int64 only


def test_ports_planned_on_an_overlay_keep_each_others_cleanup(tree27):
    """port --all --write plans each family on the tree with the previous ports applied in memory: the
    fix loop's cleanup must start from that overlay, not from the disk (or it restores removed code)."""
    root = tree27
    overlay: dict[str, bytes] = {}
    for fam in ("sqrt", "neg"):
        tree = load_tree(root, overlay)
        overlay.update(apply_edits(tree.sources, plan_port(Index(tree), fam).edits))
    ops = overlay["aten/src/ATen/native/mps/operations/UnaryOps.mm"].decode()
    assert "<ATen/ops/sqrt_native.h>" not in ops and "<ATen/ops/neg_native.h>" not in ops


def test_binary_stubs_call_one_promoting_wrapper_that_verify_recognises(tree27):
    """2.7's binary_mps_impl reads both inputs as input(0)'s dtype; the port adds, once, a wrapper that
    casts to the common dtype on MPS, stubs call it, and verify's convention detection sees it (by body)."""
    from migrate.port.host_name_kernels import PROMOTING_WRAPPER
    from migrate.verify.conventions import find_site

    overlay: dict[str, bytes] = {}
    for fam in ("atan2", "lt"):
        tree = load_tree(tree27, overlay)
        overlay.update(apply_edits(tree.sources, plan_port(Index(tree), fam).edits))
    host = overlay["aten/src/ATen/native/mps/operations/BinaryKernel.mm"].decode()
    assert host.count(f"static void {PROMOTING_WRAPPER}(") == 1
    assert f'mps::{PROMOTING_WRAPPER}(iter, "atan2");' in host and f'mps::{PROMOTING_WRAPPER}(iter, "lt");' in host
    site = find_site(Index(load_tree(tree27, overlay)), "lt")
    assert (site.convention, site.name, site.promotes, site.dense) == ("binary_offsets", "lt", PROMOTING_WRAPPER, True)


def test_unary_instantiates_every_floating_out_dtype(tree27):
    """exec_unary_kernel asks for NAME_{out}_{in} and never casts; the old graph cast to any out=."""
    from migrate.port.host_name_kernels import out_cast_pairs

    text = "".join(
        e.replacement for e in plan_port(Index(load_tree(tree27)), "sqrt").edits if e.path.endswith(".metal")
    )
    for out, inp in (("half", "float"), ("float", "half"), ("float", "bfloat"), ("half", "int")):
        assert f"INSTANTIATE_SQRT_KERNEL({out}, {inp});" in text
    assert out_cast_pairs([("float", "bool"), ("long", "bool")]) == [
        ("float", "bool"),
        ("float", "float"),
        ("float", "half"),
        ("float", "bfloat"),
        ("long", "bool"),
        ("long", "long"),
        ("long", "float"),
        ("long", "half"),
        ("long", "bfloat"),
    ]
    assert out_cast_pairs([("long", "long")]) == [("long", "long")]  # integer arithmetic: no float outs


def test_stable_hypot_idiom():
    import torch

    from migrate.port.dag import evaluate_with_torch
    from migrate.port.idioms import idioms

    hyp = next(i for i in idioms() if i.name == "stable_hypot")
    from migrate.port.dag import Dag, Node
    from migrate.port.idioms import _build

    a, b = Node("input", name="a"), Node("input", name="b")
    dag = Dag([a, b], _build(hyp.emit, {"a": a, "b": b}, a))
    x = torch.tensor([3e38, 0.0, float("inf"), float("nan"), -3.0, 1e-30], dtype=torch.float32)
    y = torch.tensor([3e38, 0.0, float("nan"), float("-inf"), 4.0, 1e-30], dtype=torch.float32)
    got = evaluate_with_torch(dag, {"a": x, "b": y})
    torch.testing.assert_close(got, torch.hypot(x, y), equal_nan=True)


def test_tanh_softplus_idiom_is_accurate_where_mish_backward_cancels():
    import torch

    from migrate.port.dag import Dag, Node, evaluate_with_torch
    from migrate.port.idioms import _build, idioms

    idiom = next(i for i in idioms() if i.name == "tanh_softplus")
    x = Node("input", name="x")
    new = Dag([x], _build(idiom.emit, {"x": x}, x))
    old = Dag([x], _build(idiom.match, {"x": x}, x))
    v = torch.tensor([-5.191557, -1.0, 0.0, 3.0, 25.0, 100.0, float("-inf"), float("inf"), float("nan")])
    exact = torch.tanh(torch.log1p(torch.exp(v.double())))
    got = evaluate_with_torch(new, {"x": v})
    torch.testing.assert_close(got.double(), exact, rtol=3e-7, atol=0.0, equal_nan=True)
    naive = evaluate_with_torch(old, {"x": v})  # log(e^x + 1) in float32: 1e-5 off at x = -5.19
    assert abs(naive[0].item() / exact[0].item() - 1) > 5e-6

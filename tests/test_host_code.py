"""The tree's own host code on Linux: compile --host and verify --host on the real 2.7.0a0 tree, with host bugs
planted in a copy of a host file; the pure parts (registration cut, class stubs, the toolchain message)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from migrate.host_code import registrations, stubs, toolchain
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.host_trees import cli, toolchain_or_skip, tree_with


_toolchain_or_skip = toolchain_or_skip


def test_the_toolchain_is_installed_in_ci():
    if not os.environ.get("CI"):
        pytest.skip("only CI must have the host toolchain")
    toolchain.find.cache_clear()
    assert toolchain.find().cxx


_cli = cli


def test_a_missing_toolchain_is_one_line_with_the_apt_command_and_exit_2():
    root = pytorch_270a0_root()
    env = dict(os.environ, MPS_MIGRATE_HOST_CXX="/nonexistent/clang++-19")
    p = _cli("compile", "--host", str(root / "aten/src/ATen/native/mps/operations/CrossKernel.mm"), env=env)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "clang-19" in lines[0]
    assert "apt-get install -y clang-19 libobjc-12-dev libblocksruntime-dev libgnustep-base-dev" in lines[0]


REGISTER = """head
namespace at {
// NB: TORCH_LIBRARY_IMPL must be in an anonymous namespace to avoid
TORCH_LIBRARY_IMPL(aten, MPS, m) {
    m.impl("abs.out",
TORCH_FN(wrapper_MPS_out_abs_out));
}
}
namespace at {
// NB: TORCH_LIBRARY_IMPL must be in an anonymous namespace to avoid
TORCH_LIBRARY_IMPL(aten, MPS, m) {
    m.impl("angle",
TORCH_FN(a));
m.impl("angle.out",
TORCH_FN(b));
}
}
"""


def test_registrations_keep_only_the_chosen_operators_blocks():
    text, registered = registrations.select(REGISTER, {"angle"})
    assert registered == {"angle", "angle.out"}
    assert text.startswith("head\n") and '"angle.out"' in text and "abs.out" not in text
    assert registrations.select(REGISTER, {"ang"})[1] == set()  # whole names only
    text, registered = registrations.select(REGISTER, {"abs", "angle"})
    assert text == REGISTER and registered == {"abs.out", "angle", "angle.out"}


def test_stubs_implement_every_declared_class_the_runtime_lacks(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "a.h").write_text(
        "@interface Root : NSObject\n@end\n@interface Leaf : Root\n@end\n@interface Own : NSObject\n@end\n"
    )
    rt = tmp_path / "rt.mm"
    rt.write_text("@implementation Own\n@end\n")
    src = stubs.stub_source([inc], [rt])
    assert src.index("@implementation Root") < src.index("@implementation Leaf")  # superclass first
    assert "@implementation Own" not in src
    root_part = src[src.index("@implementation Root") : src.index("@implementation Leaf")]
    assert "resolveInstanceMethod" in root_part  # a root of the shim's classes raises for unknown selectors
    assert "resolveInstanceMethod" not in src[src.index("@implementation Leaf") :]


@pytest.fixture(scope="module")
def tree():
    _toolchain_or_skip()
    return pytorch_270a0_root()


def test_compile_host_reports_per_file_and_a_compile_error_with_file_and_line(tree, tmp_path):
    ops = tree / "aten/src/ATen/native/mps/operations"
    bad = tmp_path / "Broken.mm"
    text = (ops / "CrossKernel.mm").read_text()
    bad.write_text(text.replace("const uint32_t nDim = iter.ndim();", "const uint32_t nDim = iter.no_such_member();"))
    line = 1 + bad.read_text().splitlines().index("  const uint32_t nDim = iter.no_such_member();")
    p = _cli("compile", "--host", "--root", str(tree), str(ops / "CrossKernel.mm"), str(bad), "--format", "json")
    import json

    rows = json.loads(p.stdout)
    assert p.returncode == 1
    assert [r["ok"] for r in rows] == [True, False]
    assert rows[1]["error"].startswith(f"{bad}:{line}:") and "no_such_member" in rows[1]["error"]


def _tree_with(tree: Path, tmp_path: Path, edit) -> Path:
    return tree_with(tree, tmp_path, "Bucketization.mm", edit)


def _verify(root: Path, *extra):
    return _cli("verify", "bucketize", "--root", str(root), "--host", *extra)


def test_verify_host_runs_the_trees_host_code_and_agrees_with_torch_cpu(tree):
    p = _verify(tree)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("bucketize: PASS")
    assert "PASS bucketize float32: 24/24 samples" in p.stdout and "PASS bucketize int64: 24/24 samples" in p.stdout
    assert "CPU fallback" not in p.stdout  # the family's own overloads ran through Bucketization.mm


def test_verify_host_catches_swapped_launch_arguments(tree, tmp_path):
    swapped = _tree_with(
        tree,
        tmp_path,
        lambda t: t.replace("result, idim_in, idim_bd, numel_in", "result, idim_bd, idim_in, numel_in"),
    )
    p = _verify(swapped)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("bucketize: FAIL")
    assert "FAIL bucketize " in p.stdout and "sample " in p.stdout and "Expected" in p.stdout


def test_verify_host_turns_a_host_crash_into_fail_with_the_signal(tree, tmp_path):
    crashing = _tree_with(
        tree,
        tmp_path,
        lambda t: t.replace(
            "  int64_t numel_in = input.numel();", "  int64_t numel_in = input.numel();\n  *(volatile int*)8 = 1;", 1
        ),
    )
    p = _verify(crashing)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "SIGSEGV" in p.stdout


def test_a_dtype_the_host_code_refuses_for_every_sample_is_reported_apart():
    from migrate.host_code.run import Cell, _mark_refused

    refused = Cell(
        "histc",
        "float16",
        0,
        [
            f"sample {i}: the host code raised NotImplementedError: \"histogram_mps\" not implemented for 'Half'"
            for i in range(3)
        ],
    )
    _mark_refused(refused)
    assert refused.failed == [] and refused.refused.startswith("NotImplementedError")
    partly = Cell(
        "u",
        "int64",
        7,
        [
            "sample 9: the host code raised RuntimeError: Failed to create function state "
            "object for: unfold_backward_long"
        ],
    )
    _mark_refused(partly)  # the samples that never reach the kernel agree: the dtype is still refused
    assert not partly.failed and partly.refused.startswith("RuntimeError: Failed to create")
    mixed = Cell(
        "h",
        "float16",
        0,
        [
            "sample 0: the host code raised NotImplementedError: not implemented for 'Half'",
            "sample 1: Tensor-likes are not close!",
        ],
    )
    _mark_refused(mixed)  # a wrong value among them: the cell stays a failure
    assert mixed.failed and not mixed.refused
    wrong = Cell("x", "float32", 0, ["sample 0: Tensor-likes are not close!", "sample 1: Tensor-likes are not close!"])
    _mark_refused(wrong)
    assert wrong.failed and not wrong.refused
    graph = Cell(
        "x",
        "float32",
        0,
        [
            "sample 0: the host code raised RuntimeError: MPSGraph and MPS kernels are "
            "not run off-Apple: -[MPSGraph placeholderWithShape:dataType:name:]"
        ],
    )
    _mark_refused(graph)
    assert not graph.failed and graph.refused.startswith("MPSGraph (not run off-Apple)")
    variants = Cell(
        "minimum",
        "bool",
        0,
        [
            "sample 0: the host code raised RuntimeError: Failed to create function state object for: minimum_dense_bool",
            "sample 1: the host code raised RuntimeError: Failed to create function state object for: minimum_bool",
        ],
    )
    _mark_refused(variants)  # the dense and the strided kernel of one dtype: one refusal
    assert not variants.failed and variants.refused.endswith("minimum_bool (and 1 other variant(s))")


def test_views_with_a_shared_kernel_are_registered_and_the_fake_devices_own_ops_are_not(tree):
    from migrate.host_code.run import plan, runtime_operators
    from migrate.index import Index
    from migrate.tree import load_tree

    index = Index(load_tree(tree))
    files, operators = plan(index, "unfold_backward")
    assert [f.name for f in files] == ["UnfoldBackward.mm"]
    assert {"unfold_backward", "unfold", "view_as_real"} <= operators  # unfold must stay a view on MPS
    assert {"view", "_reshape_alias", "copy_", "empty"} <= runtime_operators()
    assert not operators & runtime_operators()


def test_verify_host_runs_exec_unary_kernel_of_the_trees_operation_utils(tree):
    p = _cli("verify", "exp", "--root", str(tree), "--host")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("exp: PASS") and "UnaryKernel.mm" in p.stdout
    for dtype in ("float32", "float16", "bfloat16", "int64", "bool"):
        assert f"PASS exp {dtype}: 3/3 samples" in p.stdout


def test_verify_host_compiles_a_2_6_era_inline_metal_library_through_new_library_with_source():
    """2.6.0's Gamma.mm formats its Metal source per dtype pair (MetalShaderLibrary with 2 parameters) and hands it
    to newLibraryWithSource: through NSASCIIStringEncoding, with a non-ASCII comment (Apple keeps such bytes)."""
    _toolchain_or_skip()
    p = _cli("verify", "lgamma", "--root", str(pytorch_260_root()), "--host")
    assert "PASS lgamma float16: 3/3 samples" in p.stdout and "PASS lgamma int64: 3/3 samples" in p.stdout, p.stderr
    # verify's own cases: Gamma.mm binds `self` as it is, so a strided input is read as dense (upstream's fix:
    # pytorch/pytorch#175603, "Fix lgamma/digamma/polygamma noncontiguous behavior")
    assert p.returncode == 1 and p.stdout.startswith("lgamma: FAIL")
    assert "FAIL lgamma (own cases) int32: 7/8 cases\n       strided " in p.stdout


def test_a_family_op_answered_by_the_cpu_fallback_is_named_not_passed_off_as_host_code(tree, monkeypatch):
    """A build without the family's own registrations still agrees with CPU (the fallback computes on CPU): the
    report must say that the host code did not run."""
    from migrate.host_code import run
    from migrate.index import Index
    from migrate.tree import load_tree

    real_plan = run.plan

    def plan_without_the_family(index, family):
        files, operators = real_plan(index, family)
        return files, operators - {family}

    monkeypatch.setattr(run, "plan", plan_without_the_family)
    report = run.verify_host(tree, Index(load_tree(tree)), "renorm")
    assert "renorm" not in report.registered
    assert any(n.startswith("ran on the CPU fallback, not the host code: renorm") for n in report.notes), report.notes
    assert "renorm.out" in report.fallbacks and report.verdict == "INCOMPLETE"

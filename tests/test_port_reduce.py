"""Reduction, softmax, norm and loss ports (migrate/port/reduce, rules/reductions.yaml) on the shared 2.7.0a0 tree:
they port, the generated code is lint clean and passes the review rules, the tree's own host code runs it through
the host path on OpInfo samples and verify's own reduction cases, and verify catches planted reduction bugs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.index import Index
from migrate.port.listing import list_families
from migrate.port.reduce.kernel import Library, section
from migrate.port.reduce.recipes import families, recipe
from migrate.tree import load_tree
from tests.corpus import pytorch_270a0_root
from tests.host_trees import cli, mps_copy, toolchain_or_skip

GENERATED = (
    "aten/src/ATen/native/mps/kernels/ReduceOps.metal",
    "aten/src/ATen/native/mps/kernels/SoftMax.metal",
    "aten/src/ATen/native/mps/kernels/LossOps.metal",
    "aten/src/ATen/native/mps/operations/ReduceLaunch.h",
)


@pytest.fixture(scope="module")
def ported(tmp_path_factory) -> Path:
    """A copy of the 2.7.0a0 tree with every recipe family ported and written."""
    root = mps_copy(pytorch_270a0_root(), tmp_path_factory.mktemp("reduce"))
    for family in families():
        assert main(["port", family, "--root", str(root), "--write"]) == 0, family
    return root


def test_every_recipe_family_is_portable_on_the_shared_tree():
    verdicts = {v.family: v for v in list_families(Index(load_tree(pytorch_270a0_root())))}
    for family in families():
        assert verdicts[family].status == "portable", (family, verdicts[family].detail)
        assert verdicts[family].detail.startswith(("reduction: ", "gather: ", "composite: "))


def test_a_graph_that_reduces_otherwise_is_refused(tmp_path, capsys):
    """The recipe is checked against the old graph: amax's port needs a NaN-propagating maximum reduction."""
    root = mps_copy(pytorch_270a0_root(), tmp_path)
    host = root / "aten/src/ATen/native/mps/operations/ReduceOps.mm"
    text = host.read_text()  # amax's branch of the shared helper, specialised for MPSReductionType::AMAX
    host.write_text(text.replace("reductionMaximumPropagateNaNWithTensor", "reductionSumWithTensor"))
    assert main(["port", "amax", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "also reduces with sum" in err and "ReduceOps.mm:" in err


def test_generated_kernels_use_the_trees_library_and_never_a_bare_max(ported):
    metal = (ported / GENERATED[0]).read_text()
    assert "#include <c10/metal/reduction_utils.h>" in metal
    assert "threadgroup_sum(partial, threads)" in metal  # the tree's library, not a new one
    assert "threadgroup_sum_all" not in metal  # ... so no helper of our own for what it has
    assert "threadgroup_and_all" in metal  # all(): the library has no and-combine
    assert re.search(r"(?<!c10)::metal::(max|min)\(", metal.replace("::c10::metal::", "")) is None
    assert "using acc_t = opmath_t<T>;" in metal  # half and bfloat accumulate in float
    assert "long offset = 0;" in metal and "const long base0" in metal  # 64-bit offsets
    assert metal.count("kernel void mean_kernel(") == 1  # not hidden by var_mean_kernel's name


def test_the_library_is_read_from_the_tree():
    none = Library(header=None, combines=frozenset(), bfloat_guard=None)
    text = section(recipe("sum"), none, "")
    assert "threadgroup_sum_all(partial, threads)" in text
    assert "::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);" in text
    assert "#if" not in text and "REGISTER_REDUCE_1_1(sum, bfloat, bfloat);" in text


def _findings(root: Path) -> set[tuple[str, str, str]]:
    r = cli("lint", "--format", "json", "--exit-zero", str(root))
    out = {(f["path"], f["code"], re.sub(r"\d+", "N", f["message"])) for f in json.loads(r.stdout)}
    assert out, r.stderr  # the tree's own findings are there: lint ran
    return out


def test_generated_code_is_lint_clean_and_the_review_rules_are_silent(ported):
    """Every port together brings no new finding (the review rules MPS016-MPS021 included) into any file."""
    new = _findings(ported) - _findings(pytorch_270a0_root())
    assert not new, sorted(new)
    ix = Index(load_tree(ported))
    for family in families():  # every overload the port rewrote now runs Metal (or the composite kernel)
        for e in ix.families[family]:
            assert ix.routes[e.overload_name].impl not in ("mpsgraph", "mixed"), (family, e.overload_name)


def _verify(root: Path, family: str) -> tuple[int, str]:
    r = cli("verify", family, "--host", "--root", str(root))
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("family", ["sum", "amax", "var", "_softmax", "linalg_vector_norm", "mse_loss"])
def test_ported_family_verifies_on_the_host_path(ported, family):
    toolchain_or_skip()
    rc, out = _verify(ported, family)
    assert rc == 0, out
    assert f"{family} (own cases)" in out or "own cases" in out
    assert "PASS" in out and "old-mpsgraph" not in out  # the new kernel ran, not the old graph


def _planted(ported: Path, tmp_path: Path, old: str, new: str) -> Path:
    root = mps_copy(ported, tmp_path)
    metal = root / GENERATED[0]
    text = metal.read_text()
    assert old in text
    metal.write_text(text.replace(old, new))
    return root


def test_verify_catches_a_bare_max_that_drops_nan(ported, tmp_path):
    toolchain_or_skip()
    root = _planted(ported, tmp_path, "acc = ::c10::metal::max(acc, x0);", "acc = ::metal::max(acc, x0);")
    rc, out = _verify(root, "amax")
    assert rc == 1 and "FAIL amax (own cases) float32" in out and "nan and inf" in out, out


def test_verify_catches_half_accumulation(ported, tmp_path):
    toolchain_or_skip()
    old = "kernel void sum_kernel(\n"
    root = _planted(ported, tmp_path, old, old)  # a copy; the edit is in the sum kernel's body below
    metal = root / GENERATED[0]
    text = metal.read_text()
    start = text.index("kernel void sum_kernel(")
    body = text[start:].replace("using acc_t = opmath_t<T>;", "using acc_t = T;", 1)
    metal.write_text(text[:start] + body)
    rc, out = _verify(root, "sum")
    assert rc == 1 and "FAIL sum (own cases) float16" in out and "long rows" in out, out
    assert "FAIL sum (own cases) float32" not in out


def test_verify_catches_a_missing_barrier(ported, tmp_path):
    """welford's own combine: thread 0 reads the other threads' partials; without the barrier it reads them
    before they are written (the CPU backend runs a threadgroup's threads in turn up to each barrier)."""
    toolchain_or_skip()
    root = _planted(
        ported, tmp_path, "  partial[tid] = acc;\n  ::metal::threadgroup_barrier", "  partial[tid] = acc;\n  //"
    )
    rc, out = _verify(root, "var")
    assert rc == 1 and "FAIL var" in out and "float32" in out, out


def test_port_all_verifies_reduction_ports_through_the_host_path(tmp_path):
    """port --all: reduction ports are applied to a scratch copy and verified with the tree's host code; a pass is
    what --write writes."""
    toolchain_or_skip()
    from migrate.batch_verify import verify_all
    from migrate.port.batch import plan_all

    root = mps_copy(pytorch_270a0_root(), tmp_path)
    ix = Index(load_tree(root))
    rows = plan_all(ix, ["amin", "argmin"])
    verify_all(root, ix, rows)
    assert {r.family: r.verify for r in rows} == {"amin": "pass", "argmin": "pass"}, [
        (r.family, r.detail) for r in rows
    ]
    assert all(r.convention == "reduction kernel + ReduceLaunch.h" for r in rows)

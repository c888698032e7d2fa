"""Host scalars a function computes from its optional arguments (migrate/conventions/host_expr.py), the inline stub
types they reach the kernel through, and the nan_to_num port built on them."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.conventions.host_expr import evaluate, host_scalars

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

BODY = """
void f(const Tensor& self, std::optional<double> nan, std::optional<double> posinf, double scale, Tensor& out) {
  AT_DISPATCH_FLOATING_TYPES_AND2(kHalf, kBFloat16, self.scalar_type(), "f", [&]() {
    scalar_t a = static_cast<scalar_t>(nan.value_or(0.));
    scalar_t b = posinf ? static_cast<scalar_t>(*posinf) : std::numeric_limits<scalar_t>::max();
    scalar_t c = posinf.has_value() ? static_cast<scalar_t>(posinf.value()) : std::numeric_limits<scalar_t>::lowest();
    scalar_t d = static_cast<scalar_t>(out.numel());
  });
  double e = scale;
}
"""
ARGS = ["self", "nan", "posinf", "scale", "out"]


def test_locals_computed_from_arguments_are_read_with_what_they_read():
    found = host_scalars(BODY, 1, ARGS)
    assert found["a"].expr == "static_cast<scalar_t>(nan.value_or(0.))"
    assert found["a"].reads == ("nan",)
    assert found["b"].reads == ("posinf",)
    assert found["e"].reads == ("scale",)
    assert "d" not in found  # out.numel(): not a form the evaluator knows


def test_a_local_inside_a_floating_dispatch_is_for_floating_dtypes_only():
    found = host_scalars(BODY, 1, ARGS)
    assert found["a"].floating and found["c"].floating
    assert not found["e"].floating


@pytest.mark.parametrize(
    ("dtype", "largest"), [(torch.float32, 3.4028234663852886e38), (torch.float16, 65504.0), (torch.bfloat16, None)]
)
def test_an_empty_optional_takes_the_dtypes_limit(dtype, largest):
    found = host_scalars(BODY, 1, ARGS)
    big = evaluate(found["b"].expr, {"posinf": None}, dtype)
    assert big == (largest if largest is not None else torch.finfo(dtype).max)
    assert evaluate(found["c"].expr, {"posinf": None}, dtype) == -torch.finfo(dtype).max
    assert evaluate(found["a"].expr, {"nan": None}, dtype) == 0.0


def test_a_present_zero_is_present():
    """``posinf ? ... : ...`` tests presence, not the value: 0.0 passed is 0.0, not the limit."""
    found = host_scalars(BODY, 1, ARGS)
    assert evaluate(found["b"].expr, {"posinf": 0.0}, torch.float32) == 0.0
    assert evaluate(found["c"].expr, {"posinf": 0.0}, torch.float32) == 0.0
    assert evaluate(found["a"].expr, {"nan": -2.5}, torch.float32) == -2.5


def test_infinity_and_nan_limits():
    assert evaluate("std::numeric_limits<scalar_t>::infinity()", {}, torch.half) == math.inf
    assert math.isnan(evaluate("std::numeric_limits<scalar_t>::quiet_NaN()", {}, torch.float32))


def _tree27(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "port", root, ignore=shutil.ignore_patterns("golden"))
    shutil.copytree(FIXTURES / "port27", root, ignore=shutil.ignore_patterns("golden"), dirs_exist_ok=True)
    return root


def test_the_stub_takes_the_functions_optional_arguments_with_the_headers_types(tmp_path, capsys):
    """nan_to_num_stub's type is written inline over several lines in the header; the generated stub takes
    those types, computes the fields as the old host code did, and registers floating dtypes only."""
    assert main(["port", "nan_to_num", "--root", str(_tree27(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "static void nan_to_num_mps_kernel(TensorIteratorBase& iter,\n" in out
    assert "std::optional<double> posinf," in out
    assert "const scalar_t pos_value = posinf ? static_cast<scalar_t>(*posinf) : std::numeric_limits" in out
    assert "AT_DISPATCH_FLOATING_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype()" in out
    assert "INSTANTIATE_NAN_TO_NUM_KERNEL(float, float);" in out
    assert "INSTANTIATE_NAN_TO_NUM_KERNEL(int, int);" not in out  # integers never reach the stub


def test_the_ported_kernel_passes_verify_against_both_references(tmp_path, capsys):
    root = _tree27(tmp_path)
    assert main(["port", "nan_to_num", "--root", str(root)]) == 0
    patch = tmp_path / "p.diff"
    patch.write_text(capsys.readouterr().out)
    rc = main(["verify", "nan_to_num", "--root", str(root), "--patch", str(patch), "--dtypes", "float32,float16"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "references: torch-cpu, old-mpsgraph" in out
    assert "pos_value=65504.0" in out or "posinf=None" in out


def test_a_call_the_shared_kernel_refuses_on_cpu_is_not_the_kernels_fault():
    """After the port MPS runs the shared CPU kernel, whose out= dtype check raises before the stub; such a
    cell (the modern fixture's out_cast of nan_to_num) is not a failure of the generated kernel."""
    from types import SimpleNamespace

    from migrate.batch_verify import _cpu_refuses

    def cell(note):
        return SimpleNamespace(skipped=[note])

    assert _cpu_refuses(cell("torch-cpu: nan_to_num: dtype of out: Half should be same as input: Float"))
    assert _cpu_refuses(cell("torch-cpu: result type Float can't be cast to the desired output type Long"))
    assert not _cpu_refuses(cell("torch-cpu: \"nan_to_num\" not implemented for 'Half'"))
    assert not _cpu_refuses(cell("old-mpsgraph: dtype of out: Half should be same as input: Float"))


def test_stub_parameter_types_split_on_top_level_commas_only():
    from migrate.source.params import split_params

    text = b"TensorIteratorBase&,\n    std::optional<double>, std::tuple<int, int> t, const Scalar& a"
    assert split_params(text) == [
        "TensorIteratorBase&",
        "std::optional<double>",
        "std::tuple<int, int> t",
        "const Scalar& a",
    ]
    assert split_params(b"a, f(b, c), std::array<T, 2>{d, e}") == ["a", "f(b, c)", "std::array<T, 2>{d, e}"]


def test_a_shared_kernels_out_dtype_check_makes_the_case_not_applicable():
    """nan_to_num's shared kernel checks the out= dtype before its stub: on MPS too the call fails before
    any kernel runs, so verify skips the case instead of judging the kernel by the old graph alone."""
    from migrate.verify.cases import Case
    from migrate.verify.references import NotApplicable, TorchCpuReference

    x = torch.tensor([1.0, float("nan")])
    ref = TorchCpuReference("nan_to_num")
    assert ref.compute(Case(torch.float32, "contiguous", (x,), out=torch.empty(2))).tolist()[0] == 1.0
    with pytest.raises(NotApplicable, match="dtype of out"):
        ref.compute(Case(torch.float32, "out_cast", (x,), out=torch.empty(2, dtype=torch.float16)))


def test_coverage_knows_the_dtypes_the_shared_kernel_handles_before_its_stub():
    """nan_to_num_out copies integer (and bool) tensors itself; no integer kernel is a coverage gap."""
    from migrate.index import Index
    from migrate.conventions.stub_choice import dtype_shortcuts
    from migrate.tree import load_tree
    from migrate.verify.references import TorchCpuReference
    from migrate.verify.run import coverage, handled_before_stub

    body = "TORCH_CHECK(a, b);\nif (c10::isIntegralType(self.scalar_type(), true)) { result.copy_(self); return result; }\n"
    assert dtype_shortcuts(body + "nan_to_num_stub(iter.device_type(), iter);", 1, {"nan_to_num_stub"}) == [
        ("integral", True, "c10::isIntegralType(...)")
    ]
    late = "nan_to_num_stub(iter.device_type(), iter);\n" + body  # after the stub: not a shortcut
    assert dtype_shortcuts(late, 1, {"nan_to_num_stub"}) == []
    handled = handled_before_stub(Index(load_tree(FIXTURES / "port")), "nan_to_num")
    assert set(handled) == {"int64", "int32", "int16", "int8", "uint8", "bool"}
    ref = TorchCpuReference("nan_to_num")
    ref.arity = 1
    notes, cells = coverage(ref, [torch.float32], None, [torch.int32], handled)
    assert notes == [f"coverage: no int32 kernel is needed: {handled['int32']}"] and not cells
    notes, _ = coverage(ref, [torch.float32], None, [torch.int32])
    assert notes == ["coverage: torch CPU supports int32 but no int32 kernel is registered"]

"""Cases that must and must not be reported, on small trees built from fixtures/mini:
MPS001 across mechanisms, MPS006 following what the shared kernel does, files that cannot
be read, and columns on non-ASCII lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import OPS, YAML, lint_json, mini_copy, run_cli

NATIVE = "aten/src/ATen/native"


def append(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.write_text((p.read_text() if p.exists() else "") + text)


def cpp_kernels(root: Path, body: str) -> None:
    """Add definitions to the fixture's CPU-side BinaryOps.cpp (inside its namespace)."""
    p = root / NATIVE / "BinaryOps.cpp"
    src = p.read_text()
    end = src.rindex("} // namespace at::native")
    p.write_text(src[:end] + body + src[end:])


def entry(func: str, line: str) -> str:
    return f"\n- func: {func}\n  dispatch:\n    {line}\n"


def by(findings: list[dict], code: str) -> dict[str, dict]:
    return {f["overload"]: f for f in findings if f["code"] == code}


# ------------------------------------------------------------------ MPS006
def test_mps006_composite_wrapper_is_not_stub_backed(tmp_path):
    root = mini_copy(tmp_path)
    append(root, YAML, entry("fmax.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", "CPU, CUDA, MPS: fmax"))
    cpp_kernels(
        root,
        "Tensor fmax(const Scalar& self, const Tensor& other) {\n"
        "  return at::fmax(wrapped_scalar_tensor(self), other);\n}\n\n",
    )
    found = lint_json(root)
    assert "fmax.Scalar_Tensor" not in by(found, "MPS006")
    assert "fmax.out" in by(found, "MPS006")  # the real one stays: fmax_stub has no MPS registration
    p = run_cli("explain", "fmax", "--root", str(root))
    assert "composite: calls at::fmax" in p.stdout


@pytest.mark.parametrize(
    "guard, reported",
    [
        ("self.is_cpu()", False),
        ("self.device().type() == DeviceType::CUDA || self.device().type() == kXPU", False),
        ("fast_path(self)", False),  # a predicate that returns false off the CPU
        ("!self.is_cpu()", True),
        ("self.numel() > 4", True),
    ],
)
def test_mps006_stub_behind_another_device(tmp_path, guard, reported):
    root = mini_copy(tmp_path)
    append(
        root,
        YAML,
        entry("fmin.two_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "CPU, CUDA, MPS: fmin_two"),
    )
    cpp_kernels(
        root,
        "static bool fast_path(const Tensor& t) {\n  if (!t.device().is_cpu()) {\n    return false;\n  }\n"
        "  return t.is_contiguous();\n}\n\n"
        f"TORCH_IMPL_FUNC(fmin_two)(const Tensor& self, const Tensor& other, const Tensor& out) {{\n"
        f"  if ({guard}) {{\n    fmax_stub(self.device().type(), out);\n    return;\n  }}\n"
        "  out.copy_(self);\n}\n\n",
    )
    found = by(lint_json(root), "MPS006")
    assert ("fmin.two_out" in found) is reported
    if reported:
        assert "fmax_stub" in found["fmin.two_out"]["message"]


# ------------------------------------------------------------------ MPS001
GRAPH_STUB_MM = """// An MPSGraph body registered for a shared stub (test tree).
#include <ATen/native/BinaryOps.h>

namespace at::native {
static void copysign_graph_kernel(TensorIteratorBase& iter) {
  MPSGraph* graph = make_graph();
  runMPSGraph(getCurrentMPSStream(), graph, feeds(iter), results(iter));
}

REGISTER_DISPATCH(copysign_graph_stub, &copysign_graph_kernel)
} // namespace at::native
"""


def test_mps001_shared_stub_with_a_graph_body(tmp_path):
    root = mini_copy(tmp_path)
    append(
        root,
        YAML,
        entry(
            "copysign.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
            "CPU, CUDA, MPS: copysign_st_out",
        )
        + "\n- func: copysign.Scalar_Tensor(Scalar self, Tensor other) -> Tensor\n"
        "  structured_delegate: copysign.Scalar_Tensor_out\n",
    )
    append(
        root,
        f"{NATIVE}/BinaryOps.h",
        "namespace at::native {\nDECLARE_DISPATCH(structured_binary_fn, copysign_graph_stub)\n}\n",
    )
    cpp_kernels(
        root,
        "Tensor& copysign_st_out(const Scalar& self, const Tensor& other, Tensor& out) {\n"
        "  copysign_graph_stub(kCPU, out);\n  return out;\n}\n\n",
    )
    (root / OPS / "GraphStub.mm").write_text(GRAPH_STUB_MM)
    found = by(lint_json(root), "MPS001")
    st = found["copysign.Scalar_Tensor_out"]
    assert st["fix"] is None  # a shared line: nothing to re-route, the stub needs a Metal body
    assert "copysign_graph_kernel (the MPS side of copysign_graph_stub)" in st["message"]
    assert st["message"].endswith("next: mps-migrate port copysign")
    assert "copysign.Scalar_Tensor" not in found  # a delegate follows its target: reported there
    # the existing MPS-only case keeps its fix and names the fix command
    assert found["copysign.Scalar_out"]["fix"] and found["copysign.Scalar_out"]["message"].endswith(
        "next: mps-migrate fix copysign"
    )
    assert set(found) == {"copysign.Scalar_out", "copysign.Scalar_Tensor_out"}  # hypot (no Metal overload): none


# ------------------------------------------------------------------ unreadable files
def test_unreadable_host_file_hides_no_kernel_as_defined_nowhere(tmp_path):
    root = mini_copy(tmp_path)
    assert "erfinv.out" in by(lint_json(root), "MPS003")  # the fixture's real one
    (root / OPS / "Broken.mm").symlink_to(root / "does-not-exist.mm")
    found = lint_json(root)
    assert by(found, "MPS003") == {}  # erfinv_out_mps may be defined in the file that cannot be read
    (err,) = [f for f in found if f["code"] == "MPS900"]
    assert err["path"] == f"{OPS}/Broken.mm" and "cannot read" in err["message"]
    assert "checks that may be incomplete: MPS001, MPS002, MPS003, MPS004, MPS005, MPS006, MPS007" in err["message"]
    assert "MPS008" in err["message"] and "MPS010" not in err["message"]  # MPS008 reads host launches; yaml-only rule
    p = run_cli("explain", "erfinv", "--root", str(root))
    assert f"{OPS}/Broken.mm could not be read completely: its definition may be there" in p.stdout


def test_partly_parsed_host_file_hides_only_the_names_it_mentions(tmp_path):
    root = mini_copy(tmp_path)
    garbage = "int helper(int x) {\n  return x;\n}\n\n))) int broken( {\n  ]]] {\n  (((\n}\n"
    (root / OPS / "Garbled.mm").write_text(garbage)
    found = lint_json(root)
    (err,) = [f for f in found if f["code"] == "MPS900"]
    assert "could not parse" in err["message"] and "checks that may be incomplete" in err["message"]
    assert "erfinv.out" in by(found, "MPS003")  # Garbled.mm never names erfinv_out_mps
    (root / OPS / "Garbled.mm").write_text(garbage + "// erfinv_out_mps\n")
    assert "erfinv.out" not in by(lint_json(root), "MPS003")


# ------------------------------------------------------------------ columns
def test_caret_under_the_finding_on_a_non_ascii_line(tmp_path):
    root = mini_copy(tmp_path)
    p = root / OPS / "HistogramKernel.mm"
    src = p.read_text()
    old = '  TORCH_CHECK(self.max().item<float>() < 1e30, "histc: input too large");'
    new = '  TORCH_CHECK(/* größte Zahl → */ self.max().item<float>() < 1e30, "histc: input too large");'
    assert old in src
    p.write_text(src.replace(old, new))
    proc = run_cli("lint", str(root / OPS / "HistogramKernel.mm"), "--select", "MPS011", "--format", "json")
    (f,) = [f for f in json.loads(proc.stdout) if f["line"] == 56]
    assert f["column"] == new.index(".item") + 1  # characters: 3 of them before it are multibyte
    proc = run_cli("lint", str(root / OPS / "HistogramKernel.mm"), "--select", "MPS011", "--format", "full")
    lines = proc.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.rstrip().endswith(new.strip()))
    source, caret = lines[at], lines[at + 1]
    assert source.index(".item") == caret.index("^")

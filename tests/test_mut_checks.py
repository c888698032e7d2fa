"""Every rule check, in-process, on fixtures/mini and on small trees: exact findings, messages and fix kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.config import Config
from migrate.lint import lint_tree
from migrate.tree import load_tree
from tests.helpers import COMMON_MPS, KERNELS, MINI, OPINFO, OPS, YAML, mini_copy

BIN_MM, UN_MM, HIST_MM = f"{OPS}/BinaryOps.mm", f"{OPS}/UnaryOps.mm", f"{OPS}/HistogramKernel.mm"


def lint(root: Path, code: str):
    """(path, line, column, end_line, end_column, overload, kernel, family, message, fix) of one rule's findings."""
    res = lint_tree(load_tree(root), Config(select=[code]))
    assert {f.code for f in res.findings} <= {code}
    return [
        (
            f.path,
            f.line,
            f.column,
            f.end_line,
            f.end_column,
            f.overload,
            f.kernel,
            f.family,
            f.message,
            None if f.fix is None else (f.fix.safe, f.fix.description),
        )
        for f in res.findings
    ]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_mps001_half_migrated_family():
    assert lint(MINI, "MPS001") == [
        (
            YAML,
            36,
            5,
            36,
            33,
            "copysign.Scalar_out",
            "copysign_scalar_out_mps",
            "copysign",
            "copysign.Scalar_out still runs MPSGraph kernel copysign_scalar_out_mps, while copysign.out, "
            "copysign.Tensor of the copysign family run native Metal; next: mps-migrate fix copysign",
            (True, "route copysign.Scalar_out to the shared kernel copysign_scalar_out"),
        ),
    ]


def test_mps002_mpsgraph_inventory():
    assert lint(MINI, "MPS002") == [
        (
            YAML,
            36,
            5,
            36,
            33,
            "copysign.Scalar_out",
            "copysign_scalar_out_mps",
            None,
            "copysign.Scalar_out routes to MPSGraph implementation copysign_scalar_out_mps",
            (True, "route copysign.Scalar_out to the shared kernel copysign_scalar_out"),
        ),
        (
            YAML,
            44,
            5,
            44,
            23,
            "hypot.out",
            "hypot_out_mps",
            None,
            "hypot.out routes to MPSGraph implementation hypot_out_mps",
            None,
        ),  # hypot_stub has no MPS registration
        (
            YAML,
            110,
            5,
            110,
            37,
            "hardtanh.out",
            "hardtanh_out_mps",
            None,  # already shared: nothing to rewrite
            "hardtanh.out routes to MPSGraph implementation hardtanh_out_mps",
            None,
        ),
    ]


def test_mps003_undefined_kernel():
    assert lint(MINI, "MPS003") == [
        (
            YAML,
            57,
            10,
            57,
            24,
            "erfinv.out",
            "erfinv_out_mps",
            None,
            "erfinv.out names MPS kernel erfinv_out_mps, which is defined nowhere in the tree",
            None,
        ),
    ]


def test_mps004_dead_implementation():
    assert lint(MINI, "MPS004") == [
        (
            BIN_MM,
            75,
            1,
            80,
            2,
            None,
            "atan2_out_mps",
            None,
            "MPS implementation atan2_out_mps is referenced by nothing (dispatch, registration or call)",
            (True, "delete dead definition of atan2_out_mps"),
        ),
        (
            UN_MM,
            43,
            1,
            43,
            67,
            None,
            "exp_out_mps",
            None,
            "MPS implementation exp_out_mps is referenced by nothing (dispatch, registration or call)",
            (True, "delete dead macro invocation generating exp_out_mps"),
        ),
    ]


def test_mps005_stale_include():
    assert lint(MINI, "MPS005") == [
        (
            BIN_MM,
            10,
            1,
            10,
            35,
            None,
            None,
            "atan2",
            "#include <ATen/ops/atan2_native.h> is needed by no remaining code in this file",
            (True, "remove stale include of ATen/ops/atan2_native.h"),
        ),
        (
            UN_MM,
            9,
            1,
            9,
            33,
            None,
            None,
            "exp",
            "#include <ATen/ops/exp_native.h> is needed by no remaining code in this file",
            (True, "remove stale include of ATen/ops/exp_native.h"),
        ),
    ]


def test_mps006_unregistered_stub():
    assert lint(MINI, "MPS006") == [
        (
            YAML,
            64,
            5,
            64,
            29,
            "fmax.out",
            "fmax_out",
            None,
            "fmax.out shares kernel fmax_out with MPS, but no .mm registers the MPS side of fmax_stub",
            None,
        ),
    ]


def test_mps007_missing_functor():
    assert lint(MINI, "MPS007") == [
        (
            f"{OPS}/BinaryKernel.mm",
            32,
            3,
            32,
            44,
            None,
            "nextafter",
            None,
            'exec_binary_kernel(iter, "nextafter") has no registered Metal functor "nextafter"',
            None,
        ),
    ]


def test_mps008_missing_dtype():
    assert lint(MINI, "MPS008") == [
        (
            f"{KERNELS}/BinaryKernel.metal",
            66,
            1,
            66,
            38,
            None,
            "xlogy",
            "float",
            "functor xlogy is registered without bfloat (float family)",
            None,
        ),
        (
            f"{KERNELS}/UnaryKernel.metal",
            28,
            1,
            28,
            38,
            None,
            "sinc",
            "float",
            "functor sinc is registered without half, bfloat (float family)",
            None,
        ),
    ]


def test_mps009_stale_xfail():
    assert lint(MINI, "MPS009") == [
        (
            COMMON_MPS,
            16,
            13,
            16,
            26,
            None,
            None,
            "atan2",
            "UNIMPLEMENTED_XFAILLIST still expects atan2 to fail, but every MPS overload of atan2 routes to native Metal",
            (False, "remove stale expected failure 'atan2' from UNIMPLEMENTED_XFAILLIST"),
        ),
        (
            COMMON_MPS,
            22,
            13,
            22,
            36,
            None,
            None,
            "exp",
            "ON_MPS_XFAILLIST still expects exp to fail, but every MPS overload of exp routes to native Metal",
            (False, "remove stale expected failure 'exp' from ON_MPS_XFAILLIST"),
        ),
    ]


def test_mps010_naming():
    assert lint(MINI, "MPS010") == [
        (
            YAML,
            106,
            5,
            106,
            22,
            "softplus.out",
            "softplus_out",
            None,
            "MPS-only dispatch line names softplus_out, which lacks mps in its name",
            (True, "route softplus.out to the shared kernel softplus_out"),
        ),
        (
            YAML,
            110,
            5,
            110,
            37,
            "hardtanh.out",
            "hardtanh_out_mps",
            None,
            "shared dispatch line names MPS-only kernel hardtanh_out_mps",
            None,
        ),
    ]


def test_mps011_host_site():
    assert lint(MINI, "MPS011") == [
        (
            HIST_MM,
            56,
            25,
            56,
            39,
            None,
            "histogram_histc_mps",
            None,
            ".item<float>() reads a GPU tensor back to the host inside MPS op histogram_histc_mps",
            None,
        ),
    ]


def test_mps012_host_sites():
    sub = "inside a with_32bit_indexing() loop addresses the whole tensor, not the sub-iterator"
    assert lint(MINI, "MPS012") == [
        (HIST_MM, 32, 26, 32, 39, None, "histc_sum_rows", None, f"sub.tensor(0) {sub}", None),
        (HIST_MM, 32, 41, 32, 54, None, "histc_sum_rows", None, f"sub.tensor(1) {sub}", None),
    ]


def test_mps013_host_site():
    assert lint(MINI, "MPS013") == [
        (
            HIST_MM,
            38,
            3,
            38,
            35,
            None,
            "histc_scale",
            None,
            "uint32_t length = input.numel(); narrows a numel to 32 bits without c10::checked_convert",
            None,
        ),
    ]


def test_mps014_host_site():
    assert lint(MINI, "MPS014") == [
        (
            HIST_MM,
            44,
            3,
            45,
            35,
            None,
            "histc_scale",
            None,
            "2 consecutive mtl_setBytes calls: a chain of mtl_setBytes calls that one mtl_setArgs call does",
            None,
        ),
    ]


def test_mps015_stale_opinfo():
    assert lint(MINI, "MPS015") == [
        (
            OPINFO,
            15,
            25,
            16,
            56,
            None,
            None,
            "atan2",
            "expectedFailure of TestConsistency.test_output_match on MPS for atan2, but every MPS overload of atan2 "
            "routes to native Metal",
            (False, "remove MPS expectedFailure of TestConsistency.test_output_match for atan2"),
        ),
        (
            OPINFO,
            26,
            27,
            27,
            79,
            None,
            None,
            "exp",
            "skip of TestConsistency.test_output_match on MPS for exp, but every MPS overload of exp routes to native Metal",
            (False, "remove MPS skip of TestConsistency.test_output_match for exp"),
        ),
        (
            OPINFO,
            33,
            24,
            34,
            62,
            None,
            None,
            "exp",
            "expectedFailure of TestCommon.test_dtypes on MPS for exp_extremal, but every MPS overload of exp routes to "
            "native Metal",
            (False, "remove MPS expectedFailure of TestCommon.test_dtypes for exp_extremal"),
        ),
    ]


@pytest.mark.parametrize("code", [f"MPS{n:03d}" for n in (1, 2, 3, 4, 5, 6, 7, 9, 11, 15)])
def test_a_tree_with_only_a_yaml_reports_nothing(tmp_path, code):
    root = write_tree(tmp_path, {YAML: (MINI / YAML).read_text()})
    assert lint(root, code) == []


READBACK_MM = """#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
Tensor& a_mps(const Tensor& t, Tensor& out) {
  if (t.is_cpu()) {
    double v = t.item<double>();
  }
  double w = t.item<double>();
  return out;
}
Tensor& b_mps(const Tensor& t, const Tensor& u, Tensor& out) {
  if (!u.is_mps()) {
    double v = t.item<double>();
  }
  if (flag && ! t.is_mps()) {
    if (x) { y(); }
    double v = t.item<double>();
  }
  if (!t.is_mps()) g(); double z = t.item<double>();
  return out;
}
Tensor& c_mps(const Tensor& t, Tensor& out) {
  auto s = t.cpu();
  return out;
}
Tensor& d_mps(const Tensor& t, Tensor& out) {
  if (!t.is_mps()) {
    log("{{");
  }
  return out;
}
Tensor& e_mps(const Tensor& t, Tensor& out) {
  double v = t.item<double>();
  return out;
}
Tensor& f_mps(const Tensor& t, Tensor& out) {
  if (!t.is_mps()) { a(); }
  if (t.is_cpu()) {
    double v = t.item<double>();
  }
  return out;
}
}
"""


def test_mps011_readback_inside_a_cpu_guard_is_not_reported(tmp_path):
    root = write_tree(tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", f"{OPS}/R.mm": READBACK_MM})
    assert [(f[1], f[6], f[8].split(" reads")[0]) for f in lint(root, "MPS011")] == [
        (7, "a_mps", ".item<double>()"),  # after the guarded block
        (12, "b_mps", ".item<double>()"),  # the guard is about another tensor
        (18, "b_mps", ".item<double>()"),  # the guard has no block
        (22, "c_mps", ".cpu()"),
        (32, "e_mps", ".item<double>()"),  # a guard of another function does not count
    ]


DTYPES_METAL = """#include <metal_stdlib>
using namespace metal;
REGISTER_UNARY_OP(full, float, float);
REGISTER_UNARY_OP(full, half, half);
REGISTER_UNARY_OP(full, bfloat, bfloat);
REGISTER_UNARY_OP(sinc, int, float);
REGISTER_UNARY_OP(sinc, float, float);
REGISTER_UNARY_OP(sinc, long, float);
REGISTER_UNARY_OP(sinc, half, half);
REGISTER_UNARY_OP(sinc, bfloat, bfloat);
REGISTER_UNARY_OP(ints, int, int);
REGISTER_UNARY_OP(ints, long, long);
REGISTER_UNARY_OP(halfonly, half, half);
"""


def test_mps008_int_to_float_family_and_the_last_registration(tmp_path):
    root = write_tree(tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", f"{KERNELS}/K.metal": DTYPES_METAL})
    assert [(f[1], f[6], f[7], f[8]) for f in lint(root, "MPS008")] == [
        (
            10,
            "sinc",
            "int-to-float",
            "functor sinc is registered without short, uchar, char, bool (int-to-float family)",
        ),
        (13, "halfonly", "float", "functor halfonly is registered without float, bfloat (float family)"),
    ]


ROUTES_YAML = """- func: plain.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA: plain_out
    MPS: plain_out_mps

- func: half.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA, MPS: half_out

- func: half.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA: half_scalar_out
    MPS: half_scalar_out_mps

- func: half.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: half.out

- func: named(Tensor self) -> Tensor
  dispatch:
    MPS: named_mps

- func: stubbed.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA, MPS: stubbed_out
"""
ROUTES_MM = """#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
static void half_kernel_mps(TensorIteratorBase& iter) {
  lib.exec_unary_kernel(iter, "half");
  lib.exec_unary_kernel(iter, "gone");
  lib.exec_unary_kernel(iter, name);
}
REGISTER_DISPATCH(half_stub, &half_kernel_mps)
Tensor& plain_out_mps(const Tensor& self, Tensor& out) {
  MPSGraph* g = nullptr;
  mtl_setArgs(out);
  return out;
}
Tensor& half_scalar_out_mps(const Tensor& self, const Scalar& other, Tensor& out) {
  MPSGraph* g = nullptr;
  return out;
}
auto fn = &named_mps;
}
"""
ROUTES_METAL = "REGISTER_UNARY_OP(half, float, float);\nREGISTER_UNARY_OP(half, half, half);\n"


@pytest.fixture()
def routes_tree(tmp_path):
    stubs = "namespace at::native {\nDECLARE_DISPATCH(unary_fn, stubbed_stub)\n}\n"
    return write_tree(
        tmp_path,
        {
            YAML: ROUTES_YAML,
            f"{OPS}/Ops.mm": ROUTES_MM,
            f"{KERNELS}/K.metal": ROUTES_METAL,
            "aten/src/ATen/native/Stubs.h": stubs,
        },
    )


def test_mps001_after_a_family_with_nothing_migrated(routes_tree):
    assert [(f[1], f[5], f[8]) for f in lint(routes_tree, "MPS001")] == [
        (
            13,
            "half.Scalar_out",
            "half.Scalar_out still runs MPSGraph kernel half_scalar_out_mps, while half.out, "
            "half.Tensor of the half family run native Metal; next: mps-migrate port half",
        ),
    ]


def test_mps002_names_mixed_implementations(routes_tree):
    assert [(f[1], f[5], f[8]) for f in lint(routes_tree, "MPS002")] == [
        (4, "plain.out", "plain.out routes to mixed MPSGraph/Metal implementation plain_out_mps"),
        (13, "half.Scalar_out", "half.Scalar_out routes to MPSGraph implementation half_scalar_out_mps"),
    ]


def test_mps003_a_kernel_named_in_host_code_is_defined(routes_tree):
    assert lint(routes_tree, "MPS003") == []


def test_mps006_declared_stub_without_mps_registration(routes_tree):
    assert [(f[1], f[5], f[8]) for f in lint(routes_tree, "MPS006")] == [
        (
            24,
            "stubbed.out",
            "stubbed.out shares kernel stubbed_out with MPS, but no .mm registers the MPS side of stubbed_stub",
        ),
    ]


def test_mps007_only_named_kernels_of_the_shared_library(routes_tree):
    assert [(f[1], f[6], f[8]) for f in lint(routes_tree, "MPS007")] == [
        (5, "gone", 'exec_unary_kernel(iter, "gone") has no registered Metal functor "gone"'),
    ]


def test_mps011_readback_outside_any_function_is_reported(tmp_path):
    mm = "static double g = t.item<double>();\nTensor& a_mps(const Tensor& t, Tensor& out) {\n  return out;\n}\n"
    root = write_tree(tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", f"{OPS}/R.mm": mm})
    assert [f[:7] for f in lint(root, "MPS011")] == [(f"{OPS}/R.mm", 1, 20, 1, 35, None, None)]


def test_mps011_a_guard_is_searched_in_the_read_s_own_file_not_a_same_named_function_elsewhere(tmp_path):
    """Two files may define a static helper of one name: the guard's search starts at the start of the read's own
    function, not at that of the other file's (which starts here between the guard and the read)."""
    guarded = "static double helper(const Tensor& t) {\n  if (!t.is_mps()) {\n    return t.item<double>();\n  }\n  return 0;\n}\n"
    other = "// " + "x" * 40 + "\nstatic double helper(const Tensor& t) {\n  return 0;\n  // " + "y" * 200 + "\n}\n"
    files = {YAML: "- func: a(Tensor self) -> Tensor\n", f"{OPS}/A.mm": other, f"{OPS}/R.mm": guarded}
    assert guarded.index("if (") < other.index("static") < guarded.index(".item")
    assert lint(write_tree(tmp_path, files), "MPS011") == []


def lambda_read(distance: int) -> str:
    """A namespace-scope lambda (no host function around it) whose read ``.item`` starts ``distance`` bytes after
    the ``if`` of its guard."""
    guard = "if (!t.is_mps()) {\n    //\n    return t"
    body = guard.replace("//", "//" + "x" * (distance - len(guard)))
    return "static auto g = [](const Tensor& t) {\n  " + body + ".item<double>();\n  }\n  return 0.0;\n};\n"


@pytest.mark.parametrize(("distance", "reported"), [(200, False), (4000, False), (4001, True)])
def test_mps011_a_read_outside_any_function_looks_for_its_guard_4000_bytes_back(tmp_path, distance, reported):
    text = lambda_read(distance)
    assert text.index(".item") - text.index("if (") == distance
    root = write_tree(tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", f"{OPS}/R.mm": text})
    assert [(f[1], f[6]) for f in lint(root, "MPS011")] == (
        [(text[: text.index(".item")].count("\n") + 1, None)] if reported else []
    )


def test_mps005_only_mm_files_lose_includes(tmp_path):
    inc = "#include <ATen/ops/zz_native.h>\n"
    yaml = "- func: zz.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: zz_out\n"
    root = write_tree(
        tmp_path, {YAML: yaml, f"{OPS}/A.h": inc, f"{OPS}/B.mm": inc, f"{OPS}/C.mm": inc + "void f() { zz_out(); }\n"}
    )
    assert [(f[0], f[1], f[7]) for f in lint(root, "MPS005")] == [(f"{OPS}/B.mm", 1, "zz")]


def test_mps006_stub_called_by_the_cpu_kernel(tmp_path):
    cpp = (
        "namespace at::native {\nTORCH_IMPL_FUNC(w_out)(const Tensor& self, const Tensor& result) {\n"
        "  w_stub(device_type(), *this);\n}\n}\n"
    )
    yaml = "- func: w.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU, CUDA, MPS: w_out\n"
    root = write_tree(tmp_path, {YAML: yaml, "aten/src/ATen/native/W.cpp": cpp, f"{OPS}/X.mm": "void x() {}\n"})
    assert [(f[1], f[5], f[8]) for f in lint(root, "MPS006")] == [
        (3, "w.out", "w.out shares kernel w_out with MPS, but no .mm registers the MPS side of w_stub")
    ]


def test_mps008_alpha_registrations_name_the_output_dtype_last(tmp_path):
    metal = "REGISTER_UNARY_ALPHA_OP(ia, int, int, float);\nREGISTER_UNARY_ALPHA_OP(ii, int, float, int);\n"
    root = write_tree(tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", f"{KERNELS}/K.metal": metal})
    assert [(f[1], f[6], f[7]) for f in lint(root, "MPS008")] == [(1, "ia", "int-to-float")]


NATIVE_A = {
    YAML: "- func: a.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU, CUDA, MPS: a_out\n",
    f"{OPS}/K.mm": (
        "namespace at::native {\nstatic void a_kernel_mps(TensorIteratorBase& iter) {\n"
        '  lib.exec_unary_kernel(iter, "a");\n}\nREGISTER_DISPATCH(a_stub, &a_kernel_mps)\n}\n'
    ),
    f"{KERNELS}/K.metal": "REGISTER_UNARY_OP(a, float, float);\n",
}
OPINFO_A = """op_db = [
    ForeachFuncInfo('a',
                    skips=(DecorateInfo(unittest.expectedFailure, 'TestConsistency', 'test_output_match',
                                        device_type='mps'),)),
    UnaryUfuncInfo('a',
                   skips=(DecorateInfo(unittest.expectedFailure, 'TestCommon', 'test_out', device_type='mps'),
                          DecorateInfo(unittest.expectedFailure, 'TestConsistency', 'test_output_match',
                                       device_type='mps'),)),
]
"""


def test_mps015_skips_other_kinds_and_unaffected_tests(tmp_path):
    root = write_tree(tmp_path, {**NATIVE_A, OPINFO: OPINFO_A})
    assert [(f[1], f[7], f[8]) for f in lint(root, "MPS015")] == [
        (
            7,
            "a",
            "expectedFailure of TestConsistency.test_output_match on MPS for a, but every MPS overload of a "
            "routes to native Metal",
        )
    ]


def test_mps002_mps_line_shared_with_another_backend_gets_no_reroute(tmp_path):
    yaml = (
        "- func: k.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU, CUDA: k_out\n"
        "    MPS, XPU: k_out_mps\n"
    )
    mm = (
        "namespace at::native {\nstatic void k_kernel_mps(TensorIteratorBase& iter) {\n"
        '  lib.exec_unary_kernel(iter, "k");\n}\nREGISTER_DISPATCH(k_stub, &k_kernel_mps)\n'
        "Tensor& k_out_mps(const Tensor& self, Tensor& out) {\n  MPSGraph* g = nullptr;\n  return out;\n}\n}\n"
    )
    root = write_tree(
        tmp_path, {YAML: yaml, f"{OPS}/K.mm": mm, f"{KERNELS}/K.metal": "REGISTER_UNARY_OP(k, float, float);\n"}
    )
    assert [(f[1], f[5], f[9]) for f in lint(root, "MPS002")] == [(4, "k.out", None)]  # rerouting would drop XPU


def test_mps006_not_reported_on_an_mps_only_line(tmp_path):
    yaml = "- func: v.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU, CUDA: v_out\n    MPS: v_out\n"
    stubs = "namespace at::native {\nDECLARE_DISPATCH(unary_fn, v_stub)\n}\n"
    root = write_tree(tmp_path, {YAML: yaml, "aten/src/ATen/native/V.h": stubs, f"{OPS}/X.mm": "void x() {}\n"})
    assert lint(root, "MPS006") == []


LAUNCH_UNARY_MM = """static void reg_kernel(TensorIteratorBase& iter) {
  lib.exec_unary_kernel(iter, "reg");
}
static void foo_kernel(TensorIteratorBase& iter) {
  lib.exec_unary_kernel(iter, "foo");
}
static void cx_kernel(TensorIteratorBase& iter) {
  lib.exec_unary_kernel(iter, "cx");
  lib.exec_unary_kernel(iter, "flt");
}
static void local_kernel(const Tensor& self, const Tensor& output) {
  exec_unary_kernel(self, output, "foo");
}
"""
LAUNCH_UNARY_METAL = """#define I(O, T) template [[host_name("foo_" #O "_" #T)]] kernel void foo_kernel<O, T>(device O*, constant T*, uint)
#define C(T) template [[host_name("foo_complex_" #T "_" #T)]] kernel void foo_complex<T>(device T*, constant T*, uint)
I(float, float); I(half, half);
I(float, int); I(float, long); I(half, short);
C(float); C(short);
template [[host_name("cx_complex_float_float")]] kernel void cx<float2>(device float2*, constant float2*, uint);
template [[host_name("flt_float_float")]] kernel void flt<float>(device float*, constant float*, uint);
template [[host_name("flt_half_half")]] kernel void flt<half>(device half*, constant half*, uint);
template [[host_name("flt_bfloat_bfloat")]] kernel void flt<bfloat>(device bfloat*, constant bfloat*, uint);
REGISTER_UNARY_OP(reg, float, float);
REGISTER_UNARY_OP(reg, half, half);
REGISTER_UNARY_OP(reg, bfloat, bfloat);
"""


def test_mps008_2_7_unary_names_by_family(tmp_path):
    root = write_tree(
        tmp_path,
        {
            YAML: "- func: a(Tensor self) -> Tensor\n",
            f"{OPS}/U.mm": LAUNCH_UNARY_MM,
            f"{KERNELS}/U.metal": LAUNCH_UNARY_METAL,
        },
    )
    call = 'exec_unary_kernel(iter, "foo") finds no kernel '
    assert [(f[0], f[1], f[2], f[6], f[7], f[8]) for f in lint(root, "MPS008")] == [
        (f"{OPS}/U.mm", 5, 3, "foo", "float", call + "foo_bfloat_bfloat (float family): no .metal file exports it"),
        (
            f"{OPS}/U.mm",
            5,
            3,
            "foo",
            "complex",
            call + "foo_complex_half_half (complex family): no .metal file exports it",
        ),
        (
            f"{OPS}/U.mm",
            5,
            3,
            "foo",
            "int-to-float",
            call + "foo_float_short, foo_float_uchar, foo_float_char, foo_float_bool (int-to-float family): "
            "no .metal file exports it",
        ),
        (
            f"{OPS}/U.mm",
            8,
            3,
            "cx",
            "complex",
            'exec_unary_kernel(iter, "cx") finds no kernel cx_complex_half_half (complex family): no .metal file exports it',
        ),
    ]


LAUNCH_BINARY_MM = """static void bar_mps_kernel(TensorIteratorBase& iter) {
  mps::binary_mps_impl(iter, "bar");
}
Tensor& polar_out_mps(const Tensor& abs, const Tensor& angle, Tensor& output) {
  auto output_as_real = at::view_as_real(output).select(output.dim(), 0);
  auto iter = TensorIteratorConfig().add_output(output_as_real).add_input(abs).add_input(angle).build();
  mps::binary_mps_impl(iter, "polar");
  return output;
}
static void ints_mps_kernel(TensorIteratorBase& iter) {
  mps::binary_mps_impl(iter, "ints");
}
"""
LAUNCH_BINARY_METAL = """#define B(N, T) template [[host_name(#N "_" #T)]] kernel void N<T>(constant void*, constant void*, device void*, constant uint3*, uint)
#define D(N, T) template [[host_name(#N "_dense_" #T)]] kernel void N##_dense<T>(constant T*, constant T*, device T*, uint)
B(bar, float); B(bar, half); B(bar, bfloat); D(bar, half);
B(polar, float); B(polar, half); D(polar, float); D(polar, half);
B(ints, int); B(ints, long);
REGISTER_BINARY_OP(cplx, float, float2);
REGISTER_BINARY_OP(cplx, half, half2);
"""


def test_mps008_2_7_binary_names_dense_and_complex_views(tmp_path):
    root = write_tree(
        tmp_path,
        {
            YAML: "- func: a(Tensor self) -> Tensor\n",
            f"{OPS}/B.mm": LAUNCH_BINARY_MM,
            f"{KERNELS}/B.metal": LAUNCH_BINARY_METAL,
        },
    )
    assert [(f[1], f[6], f[7], f[8]) for f in lint(root, "MPS008")] == [
        (
            2,
            "bar",
            "float",
            'binary_mps_impl(iter, "bar") finds no kernel bar_dense_float, bar_dense_bfloat '
            "(float family): no .metal file exports it",
        ),
    ]


def test_mps008_complex_output_is_the_last_dtype(tmp_path):
    metal = (
        "REGISTER_UNARY_ALPHA_OP(pa, float, float, float2);\nREGISTER_UNARY_ALPHA_OP(pa, half, half, half2);\n"
        "REGISTER_UNARY_ALPHA_OP(za, float, float2, float);\nREGISTER_UNARY_ALPHA_OP(za, half, half2, half);\n"
    )
    root = write_tree(tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", f"{KERNELS}/K.metal": metal})
    assert [(f[1], f[6], f[7]) for f in lint(root, "MPS008")] == [(4, "za", "float")]


def test_mps001_after_a_family_no_kernel_reaches_and_without_delegates(tmp_path):
    """A family that reaches no kernel through MPS (composite only) comes first; the half-migrated family after
    it has no structured delegate: its Metal overload is an explicit MPS line."""
    root = write_tree(
        tmp_path,
        {
            YAML: (
                "- func: comp(Tensor self) -> Tensor\n\n"
                "- func: frac.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                "  dispatch:\n    MPS: frac_out_mps\n\n"
                "- func: frac.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)\n"
                "  dispatch:\n    MPS: frac_scalar_out_mps\n"
            ),
            f"{OPS}/Ops.mm": (
                "namespace at::native {\n"
                "Tensor& frac_out_mps(const Tensor& self, Tensor& out) {\n"
                '  lib.exec_unary_kernel(iter, "frac");\n  return out;\n}\n'
                "Tensor& frac_scalar_out_mps(const Tensor& self, const Scalar& other, Tensor& out) {\n"
                "  MPSGraph* g = nullptr;\n  return out;\n}\n}\n"
            ),
            f"{KERNELS}/K.metal": "REGISTER_UNARY_OP(frac, float, float);\n",
        },
    )
    assert [(f[1], f[5], f[8]) for f in lint(root, "MPS001")] == [
        (
            9,
            "frac.Scalar_out",
            "frac.Scalar_out still runs MPSGraph kernel frac_scalar_out_mps, while frac.out of the frac family run "
            "native Metal; next: mps-migrate port frac",
        ),
    ]


def test_mps019_prefilter_agrees_with_the_full_test():
    import itertools

    from migrate.checks.mps019_graph_fallback import _maybe_both
    from migrate.model import HostFunction

    def full(f, g, m, gh, mh):  # the test without its shortcut
        calls = f.calls - {f.name}
        graph = f.markers & g or not calls.isdisjoint(gh)
        return bool(graph and (f.markers & m or not calls.isdisjoint(mh)))

    g, m, gh, mh = frozenset({"G"}), frozenset({"M"}), frozenset({"gh", "f"}), frozenset({"mh", "f"})
    names = ["G", "M", "gh", "mh", "f", "x"]
    seen = set()
    for markers, calls in itertools.product(
        itertools.combinations(names[:2], 1), itertools.chain(*(itertools.combinations(names[2:], k) for k in range(4)))
    ):
        for ms in (frozenset(), frozenset(markers), frozenset({"G", "M"})):
            f = HostFunction("f", "a.mm", None, "function", calls=frozenset(calls), markers=ms)
            got = _maybe_both(f, g, m, gh, mh)
            assert got == full(f, g, m, gh, mh)
            seen.add(got)
    assert seen == {True, False}


# ------------------------------------------------------------------ files that could not be read
GARBLED = (  # a dead MPS function, then lines tree-sitter cannot parse, then names the unread part may use
    "Tensor& zz_dead_mps(const Tensor& x) {\n  return x;\n}\n\n))) int broken( {\n  ]]] {\n  (((\n}\n"
    "// atan2_out_mps erfinv_out_mps fmax_stub nextafter zz_dead_mps\n"
)
ZZ_ENTRY = (
    "\n- func: zz_undefined.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
    "    MPS: zz_undefined_out_mps\n"
)
BIN_KERNEL_LINES = (MINI / OPS / "BinaryKernel.mm").read_text().count("\n")
ZZ_LAUNCH = 'static void zz_mps_kernel(TensorIteratorBase& iter) {\n  lib.exec_binary_kernel(iter, "zz_missing");\n}\n'


@pytest.fixture
def unread_tree(tmp_path):
    """fixtures/mini with a host file parsed in part (Garbled.mm), a host file read as Latin-1, a second kernel
    defined nowhere (after erfinv.out in the yaml) and a second launch of a missing functor (after nextafter's, in its file)."""
    root = mini_copy(tmp_path)
    with open(root / YAML, "a") as f:
        f.write(ZZ_ENTRY)
    with open(root / OPS / "BinaryKernel.mm", "a") as f:
        f.write(ZZ_LAUNCH)
    write_tree(root, {f"{OPS}/Garbled.mm": GARBLED})
    (root / OPS / "Latin.mm").write_bytes(b"\n// caf\xe9\n")
    return root


def test_mps003_a_kernel_a_file_read_in_part_may_define_is_not_reported(unread_tree):
    """MPS003/004/006/007 leave out what Garbled.mm (a host file parsed in part) may hold, the names it mentions,
    and only that (MPS007's: test_mps007_a_functor_a_file_read_in_part_may_register_is_not_reported)."""
    assert [f[5] for f in lint(unread_tree, "MPS003")] == ["zz_undefined.out"]  # erfinv.out: hidden


def test_mps004_a_function_a_file_read_in_part_may_use_is_not_reported(unread_tree):
    """A dead function defined in Garbled.mm itself is still dead."""
    assert [(f[0], f[6]) for f in lint(unread_tree, "MPS004")] == [
        (f"{OPS}/Garbled.mm", "zz_dead_mps"),  # named only in its own file
        (UN_MM, "exp_out_mps"),  # atan2_out_mps (first in the mini tree): hidden
    ]


def test_mps006_a_stub_a_file_read_in_part_may_register_is_not_reported(unread_tree):
    assert lint(unread_tree, "MPS006") == []  # fmax_stub may be registered in Garbled.mm


def test_an_unreadable_metal_file_hides_every_missing_functor(unread_tree):
    (unread_tree / KERNELS / "Broken.metal").symlink_to(unread_tree / "does-not-exist.metal")
    (unread_tree / OPS / "Garbled.mm").unlink()
    assert lint(unread_tree, "MPS007") == []
    assert [f[6] for f in lint(unread_tree, "MPS003")] == ["erfinv_out_mps", "zz_undefined_out_mps"]


def test_mps007_a_functor_a_file_read_in_part_may_register_is_not_reported(unread_tree):
    """MPS007's own: nextafter's launch is not reported while Garbled.mm (a host file parsed in part) names it, nor
    any launch while a .metal file cannot be read; zz_missing, named in no file read in part, is."""
    assert [(f[0], f[1], f[6], f[8]) for f in lint(unread_tree, "MPS007")] == [
        (
            f"{OPS}/BinaryKernel.mm",
            BIN_KERNEL_LINES + 2,
            "zz_missing",
            'exec_binary_kernel(iter, "zz_missing") has no registered Metal functor "zz_missing"',
        )
    ]
    (unread_tree / OPS / "Garbled.mm").unlink()
    assert [f[6] for f in lint(unread_tree, "MPS007")] == ["nextafter", "zz_missing"]
    (unread_tree / KERNELS / "Broken.metal").symlink_to(unread_tree / "does-not-exist.metal")
    assert lint(unread_tree, "MPS007") == []


def test_mps900_spans_and_the_checks_an_unread_file_leaves_incomplete(unread_tree):
    res = lint_tree(load_tree(unread_tree), Config(select=["MPS900"]))
    reads_host = "MPS001, MPS002, MPS003, MPS004, MPS005, MPS006, MPS007, MPS008, MPS009, MPS011, MPS012, MPS013, MPS014, MPS015, MPS023"
    assert [
        (f.path, f.line, f.column, f.end_line, f.end_column, f.span.start, f.span.end, f.message) for f in res.findings
    ] == [
        (
            f"{OPS}/Garbled.mm",
            5,
            1,
            5,
            2,
            GARBLED.index(")))"),
            GARBLED.index(")))"),
            f"could not parse lines 5-8; definitions there may be missed; checks that may be incomplete: {reads_host}",
        ),
        (f"{OPS}/Latin.mm", 2, 7, 2, 8, 1, 1, "not valid UTF-8 (byte 0xe9); read as Latin-1"),  # its line's start,
    ]


def test_mps900_of_a_file_without_bytes_and_of_a_line_past_the_end(unread_tree):
    from migrate.checks.mps900_parse_error import _error_span
    from migrate.model import ParseError

    (unread_tree / OPS / "Gone.mm").symlink_to(unread_tree / "does-not-exist.mm")
    res = lint_tree(load_tree(unread_tree), Config(select=["MPS900"]))
    (gone,) = [f for f in res.findings if f.path.endswith("Gone.mm")]
    assert (gone.line, gone.column, gone.span.start, gone.span.end) == (1, 1, 0, 0)
    assert "cannot read" in gone.message and gone.message.endswith("MPS015, MPS023")
    span = _error_span(ParseError("a.mm", 4, 2, "m"), b"one\n")  # the line is past the data's end
    assert (span.line, span.column, span.end_column, span.start, span.end) == (4, 2, 3, 4, 4)


def test_mps900_names_no_check_for_a_kind_no_rule_reads():
    from migrate.checks.mps900_parse_error import _incomplete_checks
    from migrate.model import ParseError

    assert _incomplete_checks(ParseError("aten/src/ATen/native/X.cpp", 1, 1, "could not scan", partial=True)) == ""
    assert _incomplete_checks(ParseError("aten/src/ATen/native/mps/kernels/K.metal", 1, 1, "x", partial=True)) == (
        "; checks that may be incomplete: MPS007, MPS008"
    )


def test_mps008_placeholders_of_a_template_not_starting_with_the_name():
    """A launch template with text before ``{name}`` or ``{name}`` twice is matched whole, from the name's first byte;
    the usual ``{name}_...`` only after the name."""
    from migrate.checks.mps008_missing_dtype import _placeholders

    exported = ["k_exp_float", "k_exp_half", "exp_float", "k_expm1_float", "exp_half_exp", "exp_int_expm1"]
    assert _placeholders("k_{name}_{dtype}", "exp", exported) == [{"dtype": "float"}, {"dtype": "half"}]
    assert _placeholders("{name}_{dtype}_{name}", "exp", exported) == [{"dtype": "half"}]
    assert _placeholders("{name}_{dtype}", "exp", exported) == [{"dtype": "float"}]
    assert _placeholders("{name}_{dtype}", "k_exp", exported) == [{"dtype": "float"}, {"dtype": "half"}]


def test_mps001_reroute_to_a_stub_whose_kernel_name_is_not_literal_is_unsafe(tmp_path):
    """The MPS side of copysign_stub launches a kernel whose name is computed: the reroute cannot be proven safe."""
    root = mini_copy(tmp_path)
    bk = root / OPS / "BinaryKernel.mm"
    old = '  lib.exec_binary_kernel(iter, "copysign");\n'
    assert old in bk.read_text()
    bk.write_text(
        bk.read_text().replace(
            old, '  const std::string name = std::string("copy") + "sign";\n  lib.exec_binary_kernel(iter, name);\n'
        )
    )
    assert [(f[5], f[9]) for f in lint(root, "MPS001")] == [
        ("copysign.Scalar_out", (False, "route copysign.Scalar_out to the shared kernel copysign_scalar_out"))
    ]


RND_YAML = """- func: rnd.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA, MPS: rnd_out

- func: rnd.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    MPS: rnd_decimals_out_mps
"""
RND_CPP = """namespace at::native {
TORCH_IMPL_FUNC(rnd_out)(const Tensor& self, const Tensor& out) {
  aa_stub(device_type(), *this);
  rnd_stub(device_type(), *this);
}
}
"""
RND_OPS = """namespace at::native {
static void rnd_graph_kernel(TensorIteratorBase& iter) {
  MPSGraph* graph = make_graph();
  runMPSGraph(getCurrentMPSStream(), graph, feeds(iter), results(iter));
}
REGISTER_DISPATCH(rnd_stub, &rnd_graph_kernel)
Tensor& rnd_decimals_out_mps(const Tensor& self, int64_t decimals, Tensor& out) {
  lib.exec_unary_kernel(iter, "rnd_decimals");
  return out;
}
}
"""


@pytest.mark.parametrize(
    "also_defined, runs",
    [
        # the shared kernel reaches two stubs; the first has no MPS registration, the second an MPSGraph one
        (False, "rnd_graph_kernel (the MPS side of rnd_stub)"),
        # the shared kernel's name is also a host function: the route ends there, not in a stub
        (True, "rnd_out"),
    ],
)
def test_mps001_names_what_a_shared_line_runs(tmp_path, also_defined, runs):
    ops = RND_OPS
    if also_defined:
        ops = ops.replace("}\n}\n", "}\nTensor& rnd_out(const Tensor& self, Tensor& out) {\n  MPSGraph* g;\n}\n}\n")
    files = {
        YAML: RND_YAML,
        "aten/src/ATen/native/Rnd.cpp": RND_CPP,
        f"{OPS}/Ops.mm": ops,
        f"{KERNELS}/K.metal": "REGISTER_UNARY_OP(rnd_decimals, float, float);\n",
    }
    root = write_tree(tmp_path / "t", files)
    assert [(f[1], f[5], f[6], f[8], f[9]) for f in lint(root, "MPS001")] == [
        (
            3,
            "rnd.out",
            "rnd_out",
            f"rnd.out still runs MPSGraph kernel {runs}, while rnd.decimals_out of the rnd family run native Metal;"
            " next: mps-migrate port rnd",
            None,
        )
    ]

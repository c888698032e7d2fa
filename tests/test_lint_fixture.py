"""Exact findings on fixtures/mini: every rule, with cases that must and must not be reported."""

from __future__ import annotations

import pytest

from tests.helpers import COMMON_MPS, KERNELS, MINI, OPINFO, OPS, YAML, lint_json, triples

EXPECTED = {
    ("MPS001", YAML, 36),  # copysign.Scalar_out still MPSGraph while copysign.out is native
    ("MPS002", YAML, 36),
    ("MPS002", YAML, 44),  # hypot.out
    ("MPS002", YAML, 110),  # hardtanh.out
    ("MPS003", YAML, 57),  # erfinv_out_mps defined nowhere
    ("MPS004", f"{OPS}/BinaryOps.mm", 75),  # TORCH_IMPL_FUNC(atan2_out_mps)
    ("MPS004", f"{OPS}/UnaryOps.mm", 43),  # macro invocation generating exp_out_mps
    ("MPS005", f"{OPS}/BinaryOps.mm", 10),  # atan2_native.h
    ("MPS005", f"{OPS}/UnaryOps.mm", 9),  # exp_native.h
    ("MPS006", YAML, 64),  # fmax_stub never registered for MPS
    ("MPS007", f"{OPS}/BinaryKernel.mm", 32),  # "nextafter" functor missing
    ("MPS008", f"{KERNELS}/BinaryKernel.metal", 66),  # xlogy without bfloat
    ("MPS008", f"{KERNELS}/UnaryKernel.metal", 28),  # sinc float only
    ("MPS009", COMMON_MPS, 16),  # atan2 xfail
    ("MPS009", COMMON_MPS, 22),  # exp xfail
    ("MPS010", YAML, 106),  # MPS: softplus_out
    ("MPS010", YAML, 110),  # CPU, CUDA, MPS: hardtanh_out_mps
    ("MPS011", f"{OPS}/HistogramKernel.mm", 56),
    ("MPS012", f"{OPS}/HistogramKernel.mm", 32),
    ("MPS013", f"{OPS}/HistogramKernel.mm", 38),
    ("MPS014", f"{OPS}/HistogramKernel.mm", 44),
    ("MPS015", OPINFO, 15),  # atan2: expectedFailure of test_output_match
    ("MPS015", OPINFO, 26),  # exp: skip of test_output_match (first of a 2-tuple)
    ("MPS015", OPINFO, 33),  # exp_extremal: expectedFailure of TestCommon.test_dtypes
    # not reported: atan2's toleranceOverride, test_out and whole-class entries; hypot (still MPSGraph);
    # ForeachFuncInfo('exp'); a commented-out entry
}


@pytest.fixture(scope="module")
def findings():
    return lint_json(MINI)


def test_exact_findings(findings):
    assert triples(findings) == EXPECTED


def test_rule_codes_all_covered():
    assert {c for c, _, _ in EXPECTED} == {f"MPS{n:03d}" for n in range(1, 16)}


def test_suppressed_lines_not_reported(findings):
    lines = {(f["path"], f["line"]) for f in findings}
    assert (YAML, 98) not in lines  # exp2.out carries "# mps-migrate: ignore[MPS002]"
    assert (f"{OPS}/HistogramKernel.mm", 58) not in lines  # preceded by "// mps-migrate: ignore[MPS011]"


def test_findings_carry_overload_and_kernel(findings):
    f = next(f for f in findings if f["code"] == "MPS001")
    assert f["overload"] == "copysign.Scalar_out"
    assert f["kernel"] == "copysign_scalar_out_mps"
    assert f["severity"] == "error"
    for key in ("message", "column", "end_line", "end_column", "fix"):
        assert key in f


def test_fixable_findings_carry_edits(findings):
    dead = next(f for f in findings if f["code"] == "MPS004" and f["path"].endswith("BinaryOps.mm"))
    assert dead["fix"] and dead["fix"]["edits"]
    edit = dead["fix"]["edits"][0]
    src = (MINI / edit["path"]).read_bytes()
    removed = src[edit["start"] : edit["end"]].decode()
    assert removed.lstrip().startswith("// Left behind by the atan2 migration")
    assert "TORCH_IMPL_FUNC(atan2_out_mps)" in removed
    assert "copysign_scalar_out_mps" not in removed

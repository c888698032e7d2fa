"""verify on fixtures/verify: functors already native Metal in recent PyTorch, re-written
with the same numerics, run on every layout and on the installed torch's OpInfo samples.

The failures asserted here are real discrepancies of those functors (or of the CPU
backend), found by verify; see the comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.verify.report import to_text
from migrate.verify.run import Options, first_failure, verify

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "verify"
CLEAN = [
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "fmax",
    "fmin",
    "polar",
    "expm1",
    "log1p",
    "sigmoid",
    "erfinv",
    "sinc",
    "round",
]
FLAWED = ["hypot", "special_zeta"]
FIXED_IN_BACKEND = ["nextafter"]


@pytest.fixture(scope="module")
def reports():
    out = {fam: verify(REAL, fam) for fam in CLEAN + FLAWED + FIXED_IN_BACKEND}
    # own cases hit n = inf / 3.4e38 / 2^63, a float -> int64 conversion out of range (UB) in
    # c10::metal::chebyshev_polynomial_t_forward: the -O0 CPU build traps (process abort),
    # so only the OpInfo samples (|n| <= 9) run here
    out["special_chebyshev_polynomial_t"] = verify(
        REAL, "special_chebyshev_polynomial_t", opts=Options(layouts=["opinfo"])
    )
    return out


def failing(report):
    return {(c.dtype, c.layout): c for c in report.cells if c.status == "FAIL"}


@pytest.mark.parametrize("family", CLEAN)
def test_clean_functors_pass_own_cases_and_opinfo_samples(reports, family):
    r = reports[family]
    assert r.exit_code == 0, to_text(r)
    own, own_ok = r.totals(opinfo=False)
    assert own >= 10 and own_ok == own
    ran, ok = r.totals(opinfo=True)
    assert r.opinfo_names and ran > 0 and ok == ran, to_text(r)
    assert {c.dtype for c in r.cells if c.cases} >= {"float32", "float16", "bfloat16"} or family == "polar"


def test_opinfo_samples_of_chebyshev_from_the_definitions_module(reports):
    # its OpInfo lives in torch/testing/_internal/opinfo/definitions/special.py, which is scanned too
    r = reports["special_chebyshev_polynomial_t"]
    assert r.exit_code == 0 and r.opinfo_names == ["special_chebyshev_polynomial_t"]
    assert r.totals(opinfo=True)[0] >= 50
    assert not any("selected from op_db" in n for n in r.notes)


def test_hypot_overflows_and_loses_inf_against_nan(reports):
    # sqrt(x*x + y*y) in float without rescaling: hypot(3.4e38, x) is inf (CPU: 3.4e38) in
    # float32/bfloat16; and hypot(inf, nan) is nan where C's hypot (CPU) gives inf, every dtype
    r = reports["hypot"]
    bad = failing(r)
    assert r.exit_code == 1 and {d for d, _ in bad} == {"float32", "float16", "bfloat16"}
    msg = first_failure(bad[("float32", "contiguous")])
    assert "got inf" in msg and "e+38" in msg
    half = [first_failure(c) for (d, _), c in bad.items() if d == "float16"]
    assert half and all("got nan, expected inf" in m for m in half)


def test_zeta_gives_nan_where_the_sum_underflows(reports):
    # c10::metal::zeta: b underflows to 0 while the Euler-Maclaurin factor a overflows: inf * 0 = NaN
    r = reports["special_zeta"]
    msg = first_failure(failing(r)[("float32", "contiguous")])
    assert "got nan, expected 0.0" in msg and "[nan via zeta_dense_float_float, reference torch-cpu]" in msg
    assert r.totals(opinfo=True)[0] > 0 and r.totals(opinfo=True) == (r.totals(opinfo=True)[1],) * 2


def test_nextafter_steps_in_its_own_type(reports):
    # the CPU backend's half/bfloat nextafter works on the 16-bit pattern (stepping in float and
    # rounding would lose the step: nextafter(-inf, y) must give -65504 in half)
    r = reports["nextafter"]
    assert not failing(r)
    assert {"float16", "bfloat16", "float32"} <= {c.dtype for c in r.cells}


def test_overloads_are_mapped_to_opinfos(reports):
    r = reports["round"]
    assert r.opinfo_names == ["round", "round_decimals_0", "round_decimals_3", "round_decimals_neg_3"]
    lines = "\n".join(r.overloads)
    assert "round: OpInfo round\n" in lines + "\n"
    assert "round.out: no OpInfo sample calls it" in lines
    assert "round.decimals: OpInfo round_decimals_0, round_decimals_3, round_decimals_neg_3" in lines
    skipped = {k: v for c in r.cells for k, v in c.skip_reasons.items()}
    assert "kwargs decimals not expressible by the functor" in skipped
    text = to_text(r)
    assert "OpInfo samples (round, round_decimals_0" in text and "skipped (" in text

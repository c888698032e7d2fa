"""verify's element-wise comparison: tolerances, NaN/inf rules, reported ULP/abs/rel, first mismatch, merging."""

from __future__ import annotations

import math

import pytest
import torch

from migrate.verify.compare import Mismatch, Stats, compare, tolerance


def t(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype)


def no_inputs(idx):
    return ()


def test_default_tolerances_are_torch_testings_per_dtype():
    assert tolerance(torch.float32, None, None) == (1.3e-6, 1e-5)  # (rtol, atol)
    assert tolerance(torch.float16, None, None) == (1e-3, 1e-5)
    assert tolerance(torch.bfloat16, None, None) == (1.6e-2, 1e-5)
    assert tolerance(torch.int32, None, None) == (0.0, 0.0)
    assert tolerance(torch.float32, 0.25, 0.5) == (0.5, 0.25)  # explicit values win
    assert tolerance(torch.float32, 0.0, None) == (1.3e-6, 0.0)
    assert tolerance(torch.float32, None, 0.0) == (0.0, 1e-5)


def test_atol_boundary_is_inclusive():
    e = t([1.0, 1.0])
    assert compare(t([1.5, 0.5]), e, no_inputs, atol=0.5, rtol=0.0).mismatches == 0
    st = compare(t([1.5, 1.0 - 0.5001]), e, no_inputs, atol=0.5, rtol=0.0)
    assert st.mismatches == 1 and st.first.index == (1,)


def test_rtol_scales_with_the_magnitude_of_expected():
    e = t([2.0, -2.0, 4.0])
    assert compare(t([2.5, -2.5, 5.0]), e, no_inputs, atol=0.0, rtol=0.25).mismatches == 0
    st = compare(t([2.5, -2.5, 5.25]), e, no_inputs, atol=0.0, rtol=0.25)
    assert (st.mismatches, st.first.index) == (1, (2,))
    # atol and rtol add up
    assert compare(t([3.0]), t([2.0]), no_inputs, atol=0.5, rtol=0.25).mismatches == 0
    assert compare(t([3.0]), t([2.0]), no_inputs, atol=0.49, rtol=0.25).mismatches == 1


def test_default_float32_tolerance_applies_without_arguments():
    e = t([100.0])
    within = 100.0 + 0.5 * (1e-5 + 1.3e-6 * 100.0)
    beyond = 100.0 + 2.0 * (1e-5 + 1.3e-6 * 100.0)
    assert compare(t([within]), e, no_inputs).mismatches == 0
    assert compare(t([beyond]), e, no_inputs).mismatches == 1


def test_nan_positions_must_match():
    nan = math.nan
    assert compare(t([nan, 1.0]), t([nan, 1.0]), no_inputs).mismatches == 0
    st = compare(t([1.0, nan, 2.0]), t([1.0, 3.0, nan]), no_inputs)
    assert st.mismatches == 2
    assert st.first.reason == "nan" and st.first.index == (1,)
    assert math.isnan(st.first.actual) and st.first.expected == 3.0
    st = compare(t([5.0, 1.0]), t([5.0, nan]), no_inputs)
    assert (st.mismatches, st.first.reason, st.first.index) == (1, "nan", (1,))
    assert st.max_abs == 0.0 and st.max_ulp == 0  # NaNs take no part in the distances


def test_infinities_must_be_equal():
    inf = math.inf
    assert compare(t([inf, -inf]), t([inf, -inf]), no_inputs).mismatches == 0
    st = compare(t([1.0, inf]), t([1.0, -inf]), no_inputs)
    assert (st.mismatches, st.first.reason, st.first.index) == (1, "value", (1,))
    st = compare(t([inf]), t([3.0e38]), no_inputs, atol=1e39, rtol=1.0)
    assert st.mismatches == 1  # inf is never "close" to a finite value
    st = compare(t([3.0e38]), t([inf]), no_inputs, atol=1e39, rtol=1.0)
    assert st.mismatches == 1
    assert st.max_abs == 0.0 and st.max_rel == 0.0


def test_reported_distances_float32():
    one_up = torch.nextafter(t([1.0]), t([2.0]))
    st = compare(t([1.0, 4.0]), torch.cat([one_up, t([4.0])]), no_inputs)
    assert st.mismatches == 0
    assert st.max_ulp == 1
    assert st.max_abs == pytest.approx(2.0**-23)
    assert st.max_rel == pytest.approx(2.0**-23 / float(one_up), rel=1e-9)
    st = compare(t([1.0, 8.0]), t([2.0, 10.0]), no_inputs, atol=0.0, rtol=0.0)
    assert st.max_abs == 2.0 and st.max_rel == 0.5
    assert st.max_ulp == 2**23  # 1.0 -> 2.0 is one binade


def test_ulps_of_negative_numbers_and_across_zero():
    neg = t([-1.0])
    below = torch.nextafter(neg, t([-2.0]))
    assert compare(neg, below, no_inputs).max_ulp == 1
    three_below = t([-1.0]).view(torch.int32) + 3
    assert compare(neg, three_below.view(torch.float32), no_inputs, atol=1.0).max_ulp == 3
    tiny = torch.nextafter(t([0.0]), t([1.0]))
    assert compare(tiny, -tiny, no_inputs).max_ulp == 2
    assert compare(t([0.0]), t([-0.0]), no_inputs).max_ulp == 0
    assert compare(t([-1.0]), t([1.0]), no_inputs, atol=3.0).max_ulp == 2 * 0x3F800000


@pytest.mark.parametrize("dtype,bits_of_one", [(torch.float16, 0x3C00), (torch.bfloat16, 0x3F80)])
def test_ulps_of_half_types(dtype, bits_of_one):
    one = t([1.0], dtype)
    up = torch.nextafter(one, t([2.0], dtype))
    down_neg = torch.nextafter(-one, t([-2.0], dtype))
    assert compare(one, up, no_inputs, atol=1.0).max_ulp == 1
    assert compare(-one, down_neg, no_inputs, atol=1.0).max_ulp == 1
    assert compare(-one, one, no_inputs, atol=3.0).max_ulp == 2 * bits_of_one


def test_float64_reports_no_ulps():
    st = compare(t([1.0], torch.float64), t([1.5], torch.float64), no_inputs, atol=1.0)
    assert st.max_ulp == 0 and st.max_abs == 0.5 and st.mismatches == 0


def test_relative_error_ignores_zero_expected():
    st = compare(t([1e-6, 3.0]), t([0.0, 2.0]), no_inputs, atol=2.0, rtol=0.0)
    assert st.max_rel == 0.5 and st.max_abs == 1.0


def test_signed_zeros_are_counted_not_failed():
    st = compare(t([0.0, -0.0, -0.0, 0.0]), t([-0.0, -0.0, 0.0, 0.0]), no_inputs)
    assert st.mismatches == 0 and st.signed_zeros == 2 and st.ok


def test_integers_and_bools_are_exact():
    st = compare(t([1, 2, 3, 9], torch.int32), t([1, 2, 4, 9], torch.int32), no_inputs, atol=5.0, rtol=5.0)
    assert (st.mismatches, st.max_abs, st.first.index, st.first.reason) == (1, 1.0, (2,), "value")
    assert (st.first.actual, st.first.expected) == (3, 4)
    st = compare(t([10, -7], torch.int64), t([4, -7], torch.int64), no_inputs)
    assert st.max_abs == 6.0 and st.max_rel == 0.0 and st.max_ulp == 0
    st = compare(t([True, False]), t([True, True]), no_inputs)
    assert (st.mismatches, st.first.index) == (1, (1,))
    assert compare(t([True]), t([True]), no_inputs).ok


def test_complex_parts_are_compared_separately_counted_once():
    a = t([1 + 1j, 2 + 2j, 5 + 9j], torch.complex64)
    e = t([1 + 1j, 2 + 3j, 7 + 9j], torch.complex64)
    st = compare(a, e, no_inputs, atol=0.0, rtol=0.0)
    assert st.mismatches == 2 and st.first.index == (1,)
    assert st.max_abs == 2.0  # the real part of the third element
    assert st.max_rel == pytest.approx(1 / 3)  # the imaginary part of the second element


def test_first_mismatch_index_and_inputs_in_two_dimensions():
    e = torch.zeros(2, 3)
    a = e.clone()
    a[1, 2] = 1.0
    a[1, 0] = 2.0
    calls = []

    def inputs_at(idx):
        calls.append(idx)
        return (float(idx[0]), math.nan)

    st = compare(a, e, inputs_at)
    assert st.elements == 6 and st.mismatches == 2
    assert st.first == Mismatch((1, 0), 2.0, 0.0, (1.0, st.first.inputs[1]), "value")
    assert calls == [(1, 0)]
    assert st.first.describe() == "at [1, 0]: got 2.0, expected 0.0 (inputs: 1.0, nan) [value]"


def test_zero_dim_tensors():
    st = compare(t(3.0), t(2.0), lambda idx: (t(1.5),))
    assert st.first.index == () and st.elements == 1
    assert st.first.describe() == "at (): got 3.0, expected 2.0 (inputs: 1.5) [value]"
    assert compare(t(2.0), t(2.0), no_inputs).ok


def test_shape_and_dtype_mismatches_fail_the_whole_output():
    st = compare(torch.zeros(2, 2), torch.zeros(4), no_inputs)
    assert (st.mismatches, st.elements) == (4, 4)
    assert st.first == Mismatch((), (2, 2), (4,), (), "shape")
    assert st.first.describe() == "at (): got (2, 2), expected (4,) (inputs: ) [shape]"
    assert not st.ok
    st = compare(torch.zeros(3), torch.zeros(0), no_inputs)
    assert st.mismatches == 1 and st.first.reason == "shape"
    st = compare(torch.zeros(3, dtype=torch.float16), torch.zeros(3), no_inputs)
    assert st.mismatches == 3
    assert st.first == Mismatch((), "torch.float16", "torch.float32", (), "dtype")
    assert st.first.describe() == "at (): got 'torch.float16', expected 'torch.float32' (inputs: ) [dtype]"
    st = compare(torch.zeros(0, dtype=torch.int8), torch.zeros(0), no_inputs)
    assert (st.mismatches, st.first.reason) == (1, "dtype")
    assert compare(torch.zeros(0), torch.zeros(0), no_inputs) == Stats()


def test_describe_formats_values():
    m = Mismatch((2,), math.nan, -0.0, (t(2.5), 3, "x"), "nan")
    assert m.describe() == "at [2]: got nan, expected -0.0 (inputs: 2.5, 3, 'x') [nan]"
    assert Mismatch((), (2, 2), (4,), (), "shape").describe() == "at (): got (2, 2), expected (4,) (inputs: ) [shape]"


def test_merge_accumulates_counts_and_keeps_the_first_mismatch():
    first = Mismatch((0,), 1.0, 2.0, (), "value")
    second = Mismatch((1,), 3.0, 4.0, (), "nan")
    a = Stats(elements=3, mismatches=1, max_abs=0.5, max_rel=0.1, max_ulp=4, signed_zeros=1, first=None, notes=["n1"])
    b = Stats(
        elements=5, mismatches=2, max_abs=0.25, max_rel=0.2, max_ulp=2, signed_zeros=2, first=first, notes=["n1", "n2"]
    )
    a.merge(b)
    assert a == Stats(
        elements=8, mismatches=3, max_abs=0.5, max_rel=0.2, max_ulp=4, signed_zeros=3, first=first, notes=["n1", "n2"]
    )
    a.merge(Stats(elements=1, mismatches=1, max_abs=0.75, max_ulp=9, first=second, notes=["n3", "n1"]))
    assert a.first is first and a.notes == ["n1", "n2", "n3"]
    assert (a.elements, a.mismatches, a.max_abs, a.max_rel, a.max_ulp) == (9, 4, 0.75, 0.2, 9)


def test_infinite_pairs_take_no_part_in_the_ulp_distance():
    inf = math.inf
    st = compare(t([inf, 1.0]), t([1.0, 1.0]), no_inputs)
    assert (st.mismatches, st.max_ulp, st.max_abs) == (1, 0, 0.0)
    st = compare(t([-inf, 2.0]), t([-inf, 2.0]), no_inputs)
    assert (st.mismatches, st.max_ulp) == (0, 0)


def test_signed_zeros_counted_only_where_the_signs_differ():
    st = compare(t([0.0, -0.0, 0.0]), t([-0.0, -0.0, 0.0]), no_inputs)
    assert st.signed_zeros == 1


def test_complex_outputs_count_both_parts():
    a = torch.complex(t([-0.0, 1.0]), t([0.0, 1.0]))
    e = torch.complex(t([0.0, 1.0]), t([-0.0, 1.0]))
    assert compare(a, e, no_inputs).signed_zeros == 2
    st = compare(torch.complex(t([math.nan]), t([1.0])), torch.complex(t([1.0]), t([1.0])), no_inputs)
    assert (st.mismatches, st.first.reason) == (1, "nan")  # a NaN in the real part alone

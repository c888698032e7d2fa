"""verify's element-wise comparison: the distances it reports (abs, rel, ULP) and what fails."""

from __future__ import annotations

import pytest
import torch

from migrate.verify.compare import compare


def stats(actual, expected, dtype=torch.float32, **tol):
    a, e = torch.tensor(actual, dtype=dtype), torch.tensor(expected, dtype=dtype)
    return compare(a, e, lambda idx: (), **tol)


def steps(start: torch.Tensor, stop: torch.Tensor) -> int:
    """ULP distance by walking representable values one at a time (independent of the bit trick)."""
    x, n = start.clone(), 0
    while x != stop:
        x = torch.nextafter(x, stop)
        n += 1
    return n


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("a_ulps, e_ulps", [(3, -2), (-2, 3), (-7, -3), (-1, 1), (4, 9)])
def test_ulp_distance_across_zero_and_for_negatives(dtype, a_ulps, e_ulps):
    tiny = torch.tensor(0.0, dtype=dtype)
    one = torch.nextafter(tiny, torch.tensor(1.0, dtype=dtype))  # the smallest subnormal

    def at(k: int) -> torch.Tensor:
        return (one * k).to(dtype)  # k subnormal steps from zero, exact

    a, e = at(a_ulps), at(e_ulps)
    st = compare(a.reshape(1), e.reshape(1), lambda idx: (), atol=1.0, rtol=0.0)
    assert st.max_ulp == steps(e, a) == abs(a_ulps - e_ulps)


@pytest.mark.parametrize(
    "dtype, bits", [(torch.float32, 0x3F800000), (torch.float16, 0x3C00), (torch.bfloat16, 0x3F80)]
)
def test_ulp_distance_of_one_and_minus_one(dtype, bits):
    # +1 and -1 lie bits(1.0) representable steps either side of zero (-0 and +0 count as one)
    assert stats([1.0], [-1.0], dtype, atol=10.0, rtol=0.0).max_ulp == 2 * bits
    assert stats([-1.0], [1.0], dtype, atol=10.0, rtol=0.0).max_ulp == 2 * bits
    nxt = torch.nextafter(torch.tensor(-1.0, dtype=dtype), torch.tensor(-2.0, dtype=dtype))
    assert stats([-1.0], [nxt.item()], dtype, atol=1.0, rtol=0.0).max_ulp == 1
    assert stats([-0.0], [0.0], dtype).max_ulp == 0


def test_reported_distances_and_failures():
    st = stats([1.0, -2.0, 3.0, 5.0], [1.5, -2.0, 2.0, 5.0], atol=0.0, rtol=0.0)
    assert st.max_abs == 1.0  # |3 - 2|
    assert st.max_rel == 0.5  # |3 - 2| / 2
    assert st.max_ulp == 0x40400000 - 0x40000000  # 3.0 vs 2.0 (1.0 vs 1.5 is the same count)
    assert st.mismatches == 2 and st.first.index == (0,) and st.first.reason == "value"
    ok = stats([1.0, -2.0], [1.0 + 1e-6, -2.0])  # within torch.testing's float32 tolerance
    assert ok.ok and ok.max_ulp == 8 and ok.max_abs == pytest.approx(1e-6, rel=0.1)


def test_torch_cpus_other_answers_excuse_an_element_and_say_so():
    """rules/verify.yaml reference_policy: torch CPU float32 saturates cosh(-89) to inf in its vectorised
    loop while the exact value (float64, rounded) is finite; a kernel giving the exact value passes,
    counted and explained; a kernel matching neither still fails."""
    from migrate.verify.cases import Case
    from migrate.verify.references import TorchCpuReference

    x = torch.full((64,), -89.0)
    case = Case(torch.float32, "contiguous", (x,))
    ref = TorchCpuReference("cosh")
    exp = ref.compute(case)
    assert torch.isinf(exp).all()  # torch CPU's vectorised float32 cosh
    exact = torch.cosh(x.double()).float()
    alts = ref.alternatives(case, exp)
    assert [w for w, _ in alts][0].startswith("torch CPU's float64 result")
    st = compare(exact, exp, lambda idx: (-89.0,), excuse=alts)
    assert st.ok and st.excused == 64 and "e.g. inputs (-89.0): torch-cpu inf" in st.notes[0]
    assert not compare(torch.full((64,), 1.0), exp, lambda idx: (-89.0,), excuse=alts).ok
    assert not compare(exact, exp, lambda idx: (-89.0,)).ok  # without the policy it is a mismatch


def test_torch_cpus_vectorised_and_scalar_loops_are_both_its_answers():
    """hardswish_backward at x = NaN: torch CPU's vectorised loop gives NaN, its scalar loop (strided
    inputs, or a contiguous tail) gives grad; a kernel giving either passes, counted."""
    from migrate.verify.cases import Case
    from migrate.verify.references import TorchCpuReference

    g, x = torch.full((7, 13), 1.5), torch.full((13, 7), float("nan")).t()
    case = Case(torch.float32, "transposed", (g, x))
    ref = TorchCpuReference("hardswish_backward")
    exp = ref.compute(case)
    assert (exp == 1.5).all()  # strided: the scalar loop
    kernel = torch.full((7, 13), float("nan"))
    assert not compare(kernel, exp, lambda idx: (1.5, float("nan"))).ok
    st = compare(kernel, exp, lambda idx: (1.5, float("nan")), excuse=ref.alternatives(case, exp))
    assert st.ok and st.excused == 91 and "vectorised and scalar loops" in st.notes[0]


def test_calls_every_device_refuses_are_not_cases():
    """A result dtype the out= tensor cannot take, or arguments no overload matches: TensorIterator and
    the dispatcher raise on MPS too, before any kernel; such a case is not judged against anything."""
    from migrate.verify.cases import Case, PyScalar
    from migrate.verify.references import NotApplicable, TorchCpuReference

    with pytest.raises(NotApplicable, match="can't be cast"):
        TorchCpuReference("acos").compute(
            Case(torch.int32, "transposed", (torch.ones(3, dtype=torch.int32),), out=torch.empty(3, dtype=torch.int32))
        )
    with pytest.raises(NotApplicable, match="Found dtype Half but expected Float"):
        TorchCpuReference("hardsigmoid").compute(
            Case(torch.float32, "out_cast", (torch.ones(3),), out=torch.empty(3, dtype=torch.float16))
        )
    with pytest.raises(NotApplicable, match="no overload of aten::silu_backward takes"):
        TorchCpuReference("silu_backward").compute(
            Case(torch.float16, "python_scalar_lhs", (PyScalar(-2.0), torch.ones(3, dtype=torch.float16)))
        )

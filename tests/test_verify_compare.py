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


@pytest.mark.parametrize("dtype, bits", [(torch.float32, 0x3F800000), (torch.float16, 0x3C00), (torch.bfloat16, 0x3F80)])
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

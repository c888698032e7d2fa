"""MPS020 (hand-rolled threadgroup reduction), pinned where mutation testing found gaps.

Which loops of a kernel are reported when several precede the real reduction (a halving loop that never
indexes the array, a loop stepping by ``-= 2``, the array indexed with the stride outside the loop), that
the statement indexing the array may be the loop body's last, and that kernels cut off in the middle of a
stride step or an index (a file being edited) lint without raising.
"""

from __future__ import annotations

import pytest

from tests.helpers import KERNELS
from tests.test_mut_checks import lint
from tests.test_review_rules import _tree

HELPER = "c10/metal/reduction_utils.h of this tree provides threadgroup_sum"

HEAD = """kernel void reduce(device float* out [[buffer(0)]], threadgroup float* shared [[threadgroup(0)]],
                   uint lid [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]]) {
"""

LOOPS = (
    HEAD
    + """  uint s = n;
  out[lid] = shared[s];
  for (; s > 1; s >>= 1) {
    out[lid] += shared[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint d = n; d > 2; d -= 2) {
    shared[lid] += shared[lid + d];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (uint t = n / 2; t > 0; t /= 2) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    shared[lid] += shared[lid + t];
  }
}
"""
)


def test_mps020_only_the_loop_indexing_the_array_with_its_halving_stride_is_reported(tmp_path):
    """s halves under a barrier but indexes shared with s only before the loop; d steps by -= 2 (not a
    halving); the later t loop, whose indexing statement comes after its barrier, is the one reported."""
    root = _tree(tmp_path, LOOPS)
    assert lint(root, "MPS020") == [
        (
            f"{KERNELS}/K.metal",
            13,
            3,
            13,
            6,
            None,
            "reduce",
            None,
            f"reduce reduces threadgroup array shared by hand (stride t halves each step); {HELPER}",
            None,
        )
    ]


@pytest.mark.parametrize(
    "tail",
    [
        "  for (uint s = n; s > 0; s >>=",
        "  for (uint s = n; s > 0; s /=",
        "  for (uint s = n; s > 0; s = s >>",
        "  for (uint s = n; s > 0; s = s /",
        "  for (uint s = n / 2; s > 0; s >>= 1) {\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
        "    shared[lid",
    ],
)
def test_mps020_kernel_cut_off_mid_loop_lints_without_error(tmp_path, tail):
    """A file ending inside a stride step or an array index (being edited) reports nothing and does not raise."""
    root = _tree(tmp_path, HEAD + tail)
    assert lint(root, "MPS020") == []


def test_mps020_a_kernel_without_threadgroup_arrays_does_not_end_the_file(tmp_path):
    """The first kernel has no threadgroup array (nothing to judge there); the next one's reduction is reported."""
    plain = (
        "kernel void plain(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  out[i] = 0;\n}\n"
    )
    root = _tree(tmp_path, plain + LOOPS)
    assert [(f[1], f[6]) for f in lint(root, "MPS020")] == [(16, "reduce")]

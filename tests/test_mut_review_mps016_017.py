"""MPS016 (NaN-dropping min/max) and MPS017 (divergent collectives) in detail: every call of a statement is
judged (not just those up to the first one skipped), functions named like the operator do not hide the rest of
the file, the spans, messages and fix edits (where the c10/metal include goes, when a c10/metal header already
brings it in), which collective a helper is reported as reaching, and how deep helper chains are followed."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import KERNELS
from tests.test_review_rules import FUNCTOR, KERNEL, _tree, exact

METAL = f"{KERNELS}/K.metal"


def _findings(root: Path, code: str) -> list[tuple]:
    """(path, line, column, end_line, end_column, kernel, message, fix edits) of one rule's findings (``exact``'s,
    with the kernel files' paths)."""
    return [
        (
            f"{KERNELS}/{name}",
            line,
            col,
            end_line,
            end_col,
            kernel,
            message,
            None if fix is None else [(f"{KERNELS}/{n}", s, e, r) for n, s, e, r in fix[2]],
        )
        for _, name, line, col, end_line, end_col, kernel, message, fix in exact(root, code)
    ]


# ------------------------------------------------------------ MPS016
MINMAX_SRC = """#if !defined(__METAL_VERSION__)
#error "c10/metal/utils.h is Metal only"
#endif
#include <metal_stdlib>
float max(float a, float b, float c) {
  return metal::max(metal::max(a, b), c);
}
kernel void k(device float* x, constant int& n, uint i [[thread_position_in_grid]]) {
  float v = x[i];
  auto w = x[i];
  x[i] = max(x[i], 0.0f, 1.0f);
  x[i] = abs(v) + max(v, 0.0f);
  x[i] = max(n, 1) + min(v, 1.0f);
  x[i] = fmax(w, 2.0f);
}
"""


def test_mps016_reports_every_float_call_after_an_operator_named_function(tmp_path):
    """The user's three-argument ``max`` is the operator itself (not judged) but the kernel after it is, where a
    call of it (three arguments: no metal::max, whose c10::metal twin would not compile either) is not reported;
    calls after a non-min/max call or an integer max in the same statement are judged; ``auto`` copies of data are
    floating; the include goes before the first #include (an #error's quoted text is no include)."""
    root = _tree(tmp_path, MINMAX_SRC)
    at = MINMAX_SRC.index("#include <metal_stdlib>")
    include = (METAL, at, at, "#include <c10/metal/utils.h>\n")

    def fix(call: str, name: str) -> list:
        start = MINMAX_SRC.index(call)
        return [(METAL, start, start + len(call.split("(")[0]), f"c10::metal::{name}"), include]

    advice = "drops NaN on floating-point data (use c10::metal::{})"
    assert _findings(root, "MPS016") == [
        (METAL, 12, 19, 12, 31, "k", "max(v, 0.0f) in k " + advice.format("max"), fix("max(v, 0.0f)", "max")),
        (METAL, 13, 22, 13, 34, "k", "min(v, 1.0f) in k " + advice.format("min"), fix("min(v, 1.0f)", "min")),
        (METAL, 14, 10, 14, 23, "k", "fmax(w, 2.0f) in k " + advice.format("max"), fix("fmax(w, 2.0f)", "max")),
    ]


def test_mps016_message_when_tree_lacks_c10_metal_is_exact(tmp_path):
    root = _tree(tmp_path, MINMAX_SRC, c10=False)
    got = _findings(root, "MPS016")
    assert [(line, msg, edits) for _, line, _, _, _, _, msg, edits in got][0] == (
        12,
        "max(v, 0.0f) in k drops NaN on floating-point data (this tree has no c10::metal::min/max to use)",
        None,
    )


def test_mps016_no_include_added_when_a_latin1_c10_header_includes_utils(tmp_path):
    src = (
        "#include <c10/metal/special.h>\n"
        "kernel void k(device float* x, uint i [[thread_position_in_grid]]) {\n  x[i] = max(x[i], 0.0f);\n}\n"
    )
    root = _tree(tmp_path, src)
    (root / "c10/metal/special.h").write_bytes(b"// \xe9crit en latin-1\n#pragma once\n#include <c10/metal/utils.h>\n")
    start = src.index("max(")
    assert [edits for *_, edits in _findings(root, "MPS016")] == [[(METAL, start, start + 3, "c10::metal::max")]]


def test_mps016_fmax_functor_reports_a_plain_max_after_its_own_fmax(tmp_path):
    src = (
        "#include <c10/metal/utils.h>\n"
        + FUNCTOR.format(name="fmax", call="fmax(a, b) + max(a, b)")
        + "#define INSTANTIATE(T) template [[host_name(#T)]] T fmax_functor::operator()(const T, const T);\n"
        + "INSTANTIATE(float)\n"
    )
    root = _tree(tmp_path, src)
    assert [(line, col, msg) for _, line, col, _, _, _, msg, _ in _findings(root, "MPS016")] == [
        (5, 25, "max(a, b) in fmax_functor::operator() drops NaN on floating-point data (use c10::metal::max)")
    ]


# ------------------------------------------------------------ MPS017
HELPERS = """float sync(float v) {
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return v;
}
float both(float v) {
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return simd_sum(v);
}
float two(float v) {
  v = simd_sum(v);
  return simd_max(v);
}
"""

BODY = """  if (lane < 16) { x[0] = abs(x[1]) + simd_sum(x[lane]); }
  if (sg == 0) { x[0] = simd_sum(x[lane]) + sync(x[0]); }
  if (sg == 1) { x[1] = both(x[1]); }
  if (lane < 8) { x[2] = two(x[2]); }
  if (g < n) {
    if (lane == 0) return;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);"""


def test_mps017_judges_every_call_and_names_the_collective_a_helper_reaches(tmp_path):
    """A collective after a plain call, or after a collective that is fine there, is still judged; a helper
    reaching a barrier and then a SIMD collective counts as a barrier; a helper reaching two SIMD collectives
    names the first; an early return names the enclosing condition that varies, not the outer uniform one."""
    root = _tree(tmp_path, HELPERS + KERNEL.format(body=BODY))
    simd = "is reached by part of its SIMD group only"
    tg = "is reached by part of its threadgroup only"
    lane = "on lane [[thread_index_in_simdgroup]]"
    sg = "on sg [[simdgroup_index_in_threadgroup]]"
    assert [(line, col, end, msg) for _, line, col, _, end, _, msg, _ in _findings(root, "MPS017")] == [
        (15, 39, 47, f"simd_sum in k {simd}: `if (lane < 16)`, {lane}"),
        (16, 45, 49, f"sync (which reaches threadgroup_barrier) in k {tg}: `if (sg == 0)`, {sg}"),
        (17, 25, 29, f"both (which reaches threadgroup_barrier) in k {tg}: `if (sg == 1)`, {sg}"),
        (18, 26, 29, f"two (which reaches simd_sum) in k {simd}: `if (lane < 8)`, {lane}"),
        (22, 3, 22, f"threadgroup_barrier in k {tg}: after the `return` at line 20 under `(lane == 0)`, {lane}"),
    ]


def _chain(depth: int) -> str:
    """A kernel calling h1 under a lane condition; h1 -> h2 -> ... -> h<depth> -> simd_sum, defined callers first."""
    decls = "".join(f"float h{i}(float v);\n" for i in range(1, depth + 1))
    defs = "".join(f"float h{i}(float v) {{ return h{i + 1}(v); }}\n" for i in range(1, depth))
    return (
        decls
        + defs
        + f"float h{depth}(float v) {{ return simd_sum(v); }}\n"
        + "kernel void k(device float* x, uint lane [[thread_index_in_simdgroup]]) {\n"
        + "  if (lane < 16) { x[0] = h1(x[lane]); }\n}\n"
    )


def test_mps017_follows_helper_chains_six_calls_deep_and_no_deeper(tmp_path):
    six = _tree(tmp_path / "six", _chain(6))
    seven = _tree(tmp_path / "seven", _chain(7))
    assert [(line, msg.split(" in k ")[0]) for _, line, _, _, _, _, msg, _ in _findings(six, "MPS017")] == [
        (14, "h1 (which reaches simd_sum)")
    ]
    assert _findings(seven, "MPS017") == []


def test_mps017_an_early_return_names_only_the_variables_the_collective_is_split_by(tmp_path):
    """``sg`` is uniform across a SIMD group: the return's condition names ``lane`` only."""
    body = "  if (lane == 0 && sg == 1) return;\n  x[0] = simd_sum(x[lane]);"
    root = _tree(tmp_path, KERNEL.format(body=body))
    assert [msg for *_, msg, _ in _findings(root, "MPS017")] == [
        "simd_sum in k is reached by part of its SIMD group only: after the `return` at line 3 under"
        " `(lane == 0 && sg == 1)`, on lane [[thread_index_in_simdgroup]]"
    ]

"""MPS021 (32-bit element offset in a kernel), pinned where mutation testing found gaps.

Which products count (not one inside a subscript, not a position times one size and a number, a factor holding
a position is no size, a product after a leading term, a stride element times a one-token position), how the
operands of a product are delimited (``->`` members, a member after a subscript, a cast's call, a group of an
odd number of tokens) as the message's product shows, which uses index a buffer (not a member or a call named like
the offset, not another function's subscript, not a non-pointer local, not a pointer offset), a macro that
leaves a group unclosed as written, and kernels cut off in the middle of a statement (a file being edited)
linting without raising.
"""

from __future__ import annotations

from tests.helpers import KERNELS
from tests.test_review_rules import _tree, exact

WRAPS = "it wraps past 2^32 elements"

HEAD = """kernel void k(constant float* x [[buffer(0)]], device float* out [[buffer(1)]],
              constant uint& rows [[buffer(2)]], constant uint& cols [[buffer(3)]],
              constant packed_uint3& strides [[buffer(4)]], constant uint* idx [[buffer(5)]],
              constant uint3* dims [[buffer(6)]], uint gid [[thread_index_in_grid]],
              uint2 pos [[thread_position_in_grid]]) {
"""


def finding(name: str, line: int, end: int, decl: str, var: str, product: str, used: int, end_line: int = 0):
    return (
        "MPS021",
        name,
        line,
        3,
        end_line or line,
        end,
        "k",
        f"{decl}: 32-bit element offset {var} in k ({product}) indexes a buffer at line {used}; {WRAPS}",
        None,
    )


PRODUCTS_SRC = (
    HEAD
    + """  uint a = idx[pos.y * rows * cols];
  out[a] = x[0];
  uint b = pos.y * rows * 4;
  out[b] = x[0];
  uint c = pos.y * strides[pos.x];
  out[c] = x[0];
  uint base = pos.x + rows;
  uint d = pos.y * base * cols;
  out[d] = x[0];
  uint e = pos.x + pos.y * rows * cols;
  out[e] = x[0];
  int f = strides[1] * gid;
  out[f] = x[0];
}
"""
)


def test_which_products_are_element_offsets(tmp_path):
    """Not a (product inside a subscript), b (one size and a number: a row index), c and d (the second factor
    holds a position, so it is no size); reported: e (the product after a leading term) and f (a stride element
    times a position of one token, the product's last two tokens)."""
    assert exact(_tree(tmp_path, PRODUCTS_SRC), "MPS021") == [
        finding("K.metal", 15, 39, "uint e = pos.x + pos.y * rows * cols", "e", "pos.y * rows * cols", 16),
        finding("K.metal", 17, 27, "int f = strides[1] * gid", "f", "strides[1] * gid", 18),
    ]


OPERANDS_SRC = (
    HEAD
    + """  thread const uint2* pp = &pos;
  uint a = pp->y * rows * cols;
  out[a] = x[0];
  uint b = rows * pp->y * cols;
  out[b] = x[0];
  uint c = pos.y * rows * cols * dims[0].x;
  out[c] = x[0];
  uint d = pos.y * rows * uint(strides[1]);
  out[d] = x[0];
  uint e = (pos[1] + 1) * rows * cols;
  out[e] = x[0];
}
"""
)


def test_product_operands_with_members_casts_and_groups(tmp_path):
    """A position reached through ``->`` on either side of ``*``, a member after a subscript, a cast's call around a
    subscript and a leading group of seven tokens are whole operands: the message names each product exactly."""
    assert exact(_tree(tmp_path, OPERANDS_SRC), "MPS021") == [
        finding("K.metal", 7, 31, "uint a = pp->y * rows * cols", "a", "pp -> y * rows * cols", 8),
        finding("K.metal", 9, 31, "uint b = rows * pp->y * cols", "b", "rows * pp -> y * cols", 10),
        finding(
            "K.metal",
            11,
            43,
            "uint c = pos.y * rows * cols * dims[0].x",
            "c",
            "pos.y * rows * cols * dims[0].x",
            12,
        ),
        finding(
            "K.metal",
            13,
            43,
            "uint d = pos.y * rows * uint(strides[1])",
            "d",
            "pos.y * rows * uint ( strides[1] )",
            14,
        ),
        finding("K.metal", 15, 38, "uint e = (pos[1] + 1) * rows * cols", "e", "( pos[1] + 1 ) * rows * cols", 16),
    ]


USES_SRC = (
    """inline void put(device float* out, uint h) {
  out[h] = 0;
}
inline uint scale(uint i) {
  return i;
}
"""
    + HEAD.replace(
        "constant uint3* dims [[buffer(6)]]", "constant Params& s [[buffer(6)]], constant Params* q [[buffer(7)]]"
    )
    + """  uint a = pos.y * rows * cols;
  out[s.a] = x[0];
  uint b = pos.y * rows * cols;
  out[q->b] = x[0];
  out[scale(pos.x)] = x[0];
  uint scale = pos.y * rows * cols;
  out[0] = x[scale];
  uint h = pos.y * rows * cols;
  put(out, h);
  float v = x[0];
  uint m = pos.y * rows * cols;
  out[0] = v + m;
  constant uint* p = idx + pos.y * rows * cols;
  device float* o = out + p[0];
}
"""
)


def test_what_counts_as_indexing_a_buffer(tmp_path):
    """Only ``scale`` is reported, at its use in ``x[scale]`` (line 18), not at the earlier call of the function
    ``scale``.  Not: a and b (members named like them, after ``.`` and ``->``), h (the subscript ``out[h]`` is the
    helper's, before the kernel), m (added to a float local, no buffer), p (a pointer, not an element offset)."""
    assert exact(_tree(tmp_path, USES_SRC), "MPS021") == [
        finding("K.metal", 17, 35, "uint scale = pos.y * rows * cols", "scale", "pos.y * rows * cols", 18),
    ]


def test_macro_closing_a_group_lints(tmp_path):
    """Macros are not expanded: with ``CLOSE`` for ``)`` the last operand's group never closes as written, the
    kernel's body runs to the end of the file and the offset is still reported, without raising."""
    root = _tree(
        tmp_path,
        "#define CLOSE )\n"
        + HEAD
        + "  uint a = pos.y * rows * cols * (1 CLOSE;\n  out[a] = x[0];\n}\nstruct after {};\n",
    )
    got = exact(root, "MPS021")
    assert [f[:4] for f in got] == [("MPS021", "K.metal", 7, 3)]
    assert "32-bit element offset a in k (pos.y * rows * cols * ( 1 CLOSE" in got[0][7]


def test_kernels_cut_off_mid_statement_lint(tmp_path):
    """Files that end inside a kernel (its body then runs to the last token): after ``out + 1``, after a product,
    inside a subscript holding the offset (reported), inside a parenthesised subscript."""
    root = _tree(tmp_path, c10=False)
    cut = {
        "A.metal": "  uint a = pos.y * rows * cols;\n  device float* p = out + 1",
        "B.metal": "  uint a = pos.y * rows",
        "C.metal": "  uint a = pos.y * rows * cols;\n  out[a",
        "D.metal": "  uint a = pos.y * rows * cols;\n  out[(1",
    }
    for name, body in cut.items():
        (root / KERNELS / name).write_text(HEAD + body)
    assert exact(root, "MPS021") == [
        finding("C.metal", 6, 31, "uint a = pos.y * rows * cols", "a", "pos.y * rows * cols", 7),
    ]


def test_a_macro_opening_a_group_leaves_the_product_inside_its_initialiser(tmp_path):
    """With ``OPEN`` for ``(`` the brackets before ``*`` do not balance as written: the product still starts at the
    initialiser, never at the ``=`` before it."""
    root = _tree(tmp_path, "#define OPEN (\n" + HEAD + "  uint a = OPEN pos.y) * rows * cols;\n  out[a] = x[0];\n}\n")
    got = exact(root, "MPS021")
    assert [f[:4] for f in got] == [("MPS021", "K.metal", 7, 3)]
    assert "32-bit element offset a in k (OPEN pos.y ) * rows * cols)" in got[0][7]


def test_a_product_after_a_leading_term_starts_at_its_own_group(tmp_path):
    """The left operand of a product is read back to its group's opening bracket (a parenthesis, a subscript
    holding a group), not to the start of the initialiser."""
    body = (
        "  uint a = rows + (pos.y + 1) * rows * cols;\n  out[a] = x[0];\n"
        "  uint b = cols + x[(pos.x)] * (strides[1]) * cols;\n  out[b] = x[1];\n"
        "  uint c = rows + (uint(pos.y) + 1) * rows * cols;\n  out[c] = x[2];\n}\n"  # an even count inside
    )
    got = exact(_tree(tmp_path, HEAD + body), "MPS021")
    assert [(f[2], f[7].split(" in k (", 1)[1].rsplit(") indexes", 1)[0]) for f in got] == [
        (6, "( pos.y + 1 ) * rows * cols"),
        (8, "x[( pos.x )] * ( strides[1] ) * cols"),
        (10, "( uint ( pos.y ) + 1 ) * rows * cols"),
    ]

"""Token-level pre-pass (no compiler needed)."""

from __future__ import annotations

from migrate.device.cpu.lexer import render, tokenize
from migrate.device.cpu.prepass import prepass


def texts(src: str) -> list[str]:
    return [t.text for t in tokenize(src)]


def test_lexer_keeps_shift_and_strings_and_origins():
    toks = tokenize('# 7 "u.metal"\nint a = b >> 2; // c\nconst char* s = "x >> y";\n')
    assert [t.text for t in toks][:6] == ["int", "a", "=", "b", ">", ">"]
    assert toks[0].file == "u.metal" and toks[0].line == 7 and toks[-2].line == 8
    assert ">>" in render(toks) and '"x >> y"' in render(toks)


def test_rewrites():
    src = (
        '# 1 "k.metal"\n'
        "template <typename T> T f(T x) { return T(x, 1.5) + static_cast<T>(2.0h) + float2(x, 1e-3); }\n"
        "float g(float y) { return half(y) * 0.5; }\n"
    )
    out = prepass(src, "k.metal").text
    assert "__msl_ctor < T > ( x , 1.5f )" in out
    assert "__msl_cast < T > ( 2.0f16 )" in out
    assert "__msl_ctor < float2 > ( x , 1e-3f )" in out
    assert "__msl_ctor < half > ( y ) * 0.5f" in out
    assert "T f ( T x )" in out  # declarations untouched


def test_threadgroup_objects_and_pointers():
    src = (
        "void k(__msl_threadgroup float* p) {\n  __msl_threadgroup float buf[32];\n"
        "  __msl_threadgroup float* q = buf;\n}\n"
    )
    out = prepass(src, "k.metal").text
    assert "static thread_local float buf [ 32 ]" in out
    assert "float * q = buf" in out and "thread_local float * q" not in out
    assert "__msl_threadgroup" not in out


def test_kernels_found_with_attributes_and_host_names():
    src = (
        '# 1 "k.metal"\n'
        "template <typename T> __msl_kernel void add(T* o [[buffer(1)]], const T* a [[buffer(0)]],\n"
        "    uint i [[thread_position_in_grid]]) { o[i] = a[i] + simd_sum(a[i]); }\n"
        'template [[host_name("add_" "float")]] __msl_kernel void add<float>(float* o, const float* a, uint i);\n'
        "__msl_kernel void plain(float* out, const float& v, uint3 p [[threads_per_grid]]) { out[0] = v; }\n"
    )
    r = prepass(src, "k.metal")
    ks = {k.host_name: k for k in r.kernels}
    assert set(ks) == {"add_float", "plain"}
    assert ks["add_float"].slots == {1: 0, 0: 1} and ks["add_float"].uses_sync
    assert ks["add_float"].params[2].attr == ("pos", "thread_position_in_grid")
    assert ks["plain"].slots == {0: 0, 1: 1} and not ks["plain"].uses_sync  # implicit buffer indices
    assert "host_name" not in r.text and "[[" not in r.text

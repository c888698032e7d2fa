"""migrate.read.metal_reader on hand-written fixtures, the installed c10/metal
headers and the real PyTorch 2.6.0 kernels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.model import MetalFile, ParseError
from migrate.read.metal_reader import (
    INDEXING_H,
    default_include_dirs,
    read_metal_file,
    read_metal_source,
    registration_table,
)
from tests.corpus import pytorch_260_root
from tests.fuzzing import check_read, examples

DATA = Path(__file__).parent / "data" / "metal"
TORCH_INC = default_include_dirs()
needs_indexing_h = pytest.mark.skipif(not TORCH_INC, reason="installed torch has no c10/metal/indexing.h")


def read(src: str, **kw) -> MetalFile:
    return read_metal_source(src.encode(), "k.metal", **kw)


def regs(mf: MetalFile) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    return [(r.macro, r.op, r.dtypes, r.via) for r in mf.registrations]


def define_block(header: Path, macro: str) -> str:
    """The text of ``#define macro(...)`` with its continuation lines."""
    text = header.read_text()
    m = re.search(rf"^#define {macro}\(.*?(?<!\\)\n", text, re.M | re.S)
    assert m, macro
    return m.group()


# ------------------------------------------------------------ the rules table
def test_registration_table_roles():
    table = registration_table()
    assert table["REGISTER_BINARY_OP"] == ("name", "dtype_in", "dtype_out")
    assert table["REGISTER_UNARY_ALPHA_OP"] == ("name", "dtype_in", "dtype_alpha", "dtype_out")
    assert all(roles.count("name") == 1 for roles in table.values())


@needs_indexing_h
def test_every_register_macro_of_indexing_h_is_in_the_table():
    text = (TORCH_INC[0] / INDEXING_H).read_text()
    defined = set(re.findall(r"^#define (REGISTER_\w+)\(", text, re.M))
    assert defined and defined <= set(registration_table())


@needs_indexing_h
def test_table_arity_matches_indexing_h():
    text = (TORCH_INC[0] / INDEXING_H).read_text()
    for macro, roles in registration_table().items():
        m = re.search(rf"^#define {macro}\(([^)]*)\)", text, re.M)
        assert m, macro
        assert len(m.group(1).split(",")) == len(roles), macro


# ------------------------------------------------------------ modern fixture
@pytest.fixture  # function-scoped: mutmut maps the reader's functions to every test that reads this file
def modern() -> tuple[MetalFile, bytes]:
    f = DATA / "modern_binary.metal"
    return read_metal_file(f, "kernels/modern_binary.metal", TORCH_INC), f.read_bytes()


def test_modern_no_errors(modern):
    mf, _ = modern
    assert mf.errors == ()
    assert mf.path == "kernels/modern_binary.metal"


def test_functors_incl_macro_generated(modern):
    mf, data = modern
    assert [f.name for f in mf.functors] == ["widget", "gadget", "blend_alpha", "fma3", "below"]
    widget = mf.functors[0]
    assert data[widget.span.start : widget.span.end] == b"struct widget_functor"
    assert widget.span.line == 7 and widget.span.column == 1
    below = mf.functors[-1]  # from DEFINE_BINARY_COMPARISON_FUNCTOR in indexing.h: span is the invocation
    assert data[below.span.start : below.span.end] == b"DEFINE_BINARY_COMPARISON_FUNCTOR(below, <)"


def test_convenience_macros_expand_to_exact_dtypes(modern):
    mf, _ = modern
    got = regs(mf)
    assert got[:3] == [
        ("REGISTER_BINARY_OP", "widget", ("float", "float"), "MY_FLOAT_OP"),
        ("REGISTER_BINARY_OP", "widget", ("half", "half"), "MY_FLOAT_OP"),
        ("REGISTER_BINARY_OP", "widget", ("bfloat", "bfloat"), "MY_FLOAT_OP"),
    ]
    # a convenience macro defined in terms of another: via is the one written in the file
    assert got[3:7] == [
        ("REGISTER_BINARY_OP", "widget", (d, d), "MY_INTEGER_OP") for d in ("long", "int", "short", "bool")
    ]
    assert [r[2] for r in got if r[3] == "MY_INT2FLOAT_OP"] == [("long", "float"), ("bool", "float")]
    assert [r[:3] for r in got if r[3] == "MY_OPMATH_FLOAT_OP"] == [
        ("REGISTER_OPMATH_BINARY_OP", "widget", ("float", "float")),
        ("REGISTER_OPMATH_BINARY_OP", "widget", ("half", "half")),
    ]


def test_token_paste_in_arguments(modern):
    mf, _ = modern
    vec = [r for r in mf.registrations if r.via == "MY_VEC2_OP"]
    assert [(r.op, r.dtypes) for r in vec] == [("widget", ("float2", "float2"))]
    assert "widget_dense_float2_float2" in vec[0].host_names


def test_direct_base_macros_and_multiline_invocation(modern):
    mf, data = modern
    direct = [r for r in mf.registrations if r.via is None]
    assert [(r.macro, r.op, r.dtypes) for r in direct] == [
        ("REGISTER_BINARY_ALPHA_OP", "blend_alpha", ("float", "float", "float")),
        ("REGISTER_OPMATH_TERNARY_OP", "fma3", ("half", "half")),
        ("REGISTER_UNARY_OP", "gadget", ("int", "float")),
    ]
    unary = direct[-1]
    assert (unary.span.line, unary.span.end_line) == (76, 79)
    assert data[unary.span.start : unary.span.end].decode().startswith("REGISTER_UNARY_OP(\n")
    assert data[unary.span.start : unary.span.end].decode().endswith("float)")


def test_spans_are_the_invocations_as_written(modern):
    mf, data = modern
    for r in mf.registrations:
        text = data[r.span.start : r.span.end].decode()
        assert text.startswith(r.via or r.macro) and text.endswith(")")
        assert data.count(b"\n", 0, r.span.start) + 1 == r.span.line
    first = mf.registrations[0]
    assert data[first.span.start : first.span.end] == b"MY_FLOAT_OP(widget)"
    assert (first.span.line, first.span.column, first.span.end_column) == (68, 1, 20)


@needs_indexing_h
def test_host_names_from_installed_indexing_h(modern):
    mf, _ = modern
    header = TORCH_INC[0] / INDEXING_H
    per_binary = define_block(header, "REGISTER_BINARY_OP_").count("host_name(")
    first = mf.registrations[0]
    assert len(first.host_names) == per_binary
    assert {
        "widget_dense_float_float",
        "widget_strided_float_float",
        "widget_dense_scalar_lhs_cast_float_float",
    } <= first.host_names
    # the ILP width comes from an object-like macro of c10/metal/common.h
    ilp = re.search(r'#define C10_METAL_ILP_PER_THREAD_STR "(\d+)"', (header.parent / "common.h").read_text())
    assert ilp and f"widget_dense_ilp{ilp.group(1)}_float_float" in first.host_names
    unary = mf.registrations[-1]
    assert {"gadget_dense_float_int", "gadget_dense_castout_int", "gadget_strided_castout_int"} <= unary.host_names
    assert len(unary.host_names) == define_block(header, "REGISTER_UNARY_OP").count("host_name(")
    alpha = [r for r in mf.registrations if r.macro == "REGISTER_BINARY_ALPHA_OP"][0]
    assert "blend_alpha_dense_float_float_float" in alpha.host_names
    ternary = [r for r in mf.registrations if r.macro == "REGISTER_OPMATH_TERNARY_OP"][0]
    assert {"fma3_dense_half_half", "fma3_dense_cast_half"} <= ternary.host_names
    # the file-level set is the union plus names of the file's own instantiations
    union = frozenset().union(*(r.host_names for r in mf.registrations))
    assert union <= mf.host_names
    assert mf.host_names - union == {"scale_by_two_float", "scale_by_two_half"}


def test_kernel_functions_are_definitions_not_instantiations(modern):
    mf, _ = modern
    assert mf.kernel_functions == frozenset({"scale_by_two"})


def test_without_headers_registrations_stay_and_host_names_are_empty():
    mf = read_metal_file(DATA / "modern_binary.metal", "m.metal", include_dirs=())
    assert mf.errors == ()
    assert len(mf.registrations) == 18
    assert all(r.host_names == frozenset() for r in mf.registrations)
    assert mf.host_names == {"scale_by_two_float", "scale_by_two_half"}


@needs_indexing_h
def test_base_macros_resolve_without_an_include_line():
    mf = read("REGISTER_BINARY_OP(foo, float, float);\n", include_dirs=TORCH_INC)
    assert regs(mf) == [("REGISTER_BINARY_OP", "foo", ("float", "float"), None)]
    assert "foo_dense_float_float" in mf.registrations[0].host_names


def test_a_trees_own_c10_metal_wins(tmp_path):
    hdr = tmp_path / "c10" / "metal"
    hdr.mkdir(parents=True)
    (hdr / "indexing.h").write_text(
        "#pragma once\n#include <c10/metal/common.h>\n"
        "#define REGISTER_UNARY_OP(NAME, DTYPE0, DTYPE1) \\\n"
        '  template [[host_name(#NAME "_v" VERSION_TAG "_" #DTYPE0)]] kernel void f<DTYPE0>()\n'
    )
    (hdr / "common.h").write_text('#define VERSION_TAG "7"\n')
    assert default_include_dirs(tmp_path) == (tmp_path,)
    mf = read("#include <c10/metal/indexing.h>\nREGISTER_UNARY_OP(neg, half, half);\n", include_dirs=(tmp_path,))
    assert mf.registrations[0].host_names == {"neg_v7_half"}


def test_a_c10_metal_macro_of_another_arity_is_expanded_but_gives_no_registration(tmp_path):
    """rules/registration.yaml's roles fit c10/metal's REGISTER_BINARY_OP(NAME, DTYPE0, DTYPE1); a tree whose
    c10/metal defines it with two parameters is expanded (its host names count) and read as no registration,
    never through roles that do not fit ((name, dtype_in) would make ('cmul', ('float',)))."""
    hdr = tmp_path / "c10" / "metal"
    hdr.mkdir(parents=True)
    (hdr / "indexing.h").write_text(
        "#pragma once\n"
        "#define REGISTER_BINARY_OP(NAME, DTYPE) \\\n"
        '  template [[host_name(#NAME "_" #DTYPE)]] kernel void f<DTYPE>()\n'
    )
    mf = read("#include <c10/metal/indexing.h>\nREGISTER_BINARY_OP(cmul, float);\n", include_dirs=(tmp_path,))
    assert mf.registrations == ()
    assert "cmul_float" in mf.exports


# ------------------------------------------------------------ legacy fixture
def test_legacy_self_defined_macros():
    mf = read_metal_file(DATA / "legacy_binary.metal", "legacy.metal")
    assert mf.errors == ()
    assert mf.registrations == ()
    # "#if __METAL_VERSION__" branches count; "#if 0" ones do not
    assert mf.host_names == {
        "hop_float",
        "hop_half",
        "hop_bfloat",
        "skip_int_float",
        "skip_uchar_half",
        "hop_literal_int",
    }
    assert mf.kernel_functions == {"hop", "skip_kernel"}


# ------------------------------------------------------------ preprocessor details
def test_stringify_escapes_and_concatenation():
    src = '#define Q(X) #X\n#define KN(A, B) template [[host_name(Q(A) "_" #B)]] kernel void k<A>()\nKN(x, "y");\n'
    assert read(src).host_names == {'x_"y"'}


def test_paste_builds_names_and_placemarkers():
    src = (
        "#define CAT(A, B) A##B\n"
        "#define MK(P, S) struct P##S##_functor {}; "
        'template [[host_name(#P "" #S)]] kernel void CAT(P, S)<float>()\n'
        "MK(lo, gamma);\n"
        "MK(, solo);\n"
        "#define BADPASTE(X) struct X##(\n"
        "BADPASTE(a);\n"
    )
    mf = read(src)
    assert [f.name for f in mf.functors] == ["logamma", "solo"]
    assert mf.host_names == {"logamma", "solo"}
    assert [e.line for e in mf.errors] == [6] and "pasting" in mf.errors[0].message


def test_kernel_definition_named_by_a_macro():
    src = "#define NM(A, B) A##_##B\n#define DEF(T) kernel void NM(fill, T)(device T* o) { o[0] = 0; }\nDEF(half)\n"
    mf = read(src)
    assert mf.errors == ()
    assert mf.kernel_functions == {"fill_half"}


def test_variadic_and_higher_order_macros():
    src = (
        "#define HN(N, ...) template [[host_name(#N)]] kernel void f<__VA_ARGS__>()\n"
        "#define FOR_TYPES(M) M(float); M(half)\n"
        "#define ONE(T) HN(one_##T, T, int)\n"
        "FOR_TYPES(ONE);\n"
    )
    assert read(src).host_names == {"one_float", "one_half"}


def test_object_like_alias_of_a_function_like_macro():
    src = (
        "#define ALIAS REGISTER_UNARY_OP\n#define WRAP(N) ALIAS(N, half, half)\nALIAS(neg, float, float);\nWRAP(abs);\n"
    )
    mf = read(src)
    assert mf.errors == ()
    assert regs(mf) == [
        ("REGISTER_UNARY_OP", "neg", ("float", "float"), "ALIAS"),
        ("REGISTER_UNARY_OP", "abs", ("half", "half"), "WRAP"),
    ]


def test_undef_redefine_and_recursion_guard():
    src = (
        '#define R(N) template [[host_name(#N "_a")]] kernel void f<N>()\n'
        "R(x);\n"
        "#undef R\n"
        "R(y);\n"
        '#define R(N) template [[host_name(#N "_b")]] kernel void f<N>()\n'
        "R(z);\n"
        "#define SELF(N) SELF(N) template [[host_name(#N)]] kernel void g<N>()\n"
        "SELF(w);\n"
    )
    mf = read(src)
    assert mf.errors == ()
    assert mf.host_names == {"x_a", "z_b", "w"}


def test_comments_and_strings_hide_invocations():
    src = (
        "#define R(N) template [[host_name(#N)]] kernel void f<N>()\n"
        "// R(in_line_comment);\n"
        "/* R(in_block_comment); */\n"
        'const constant char* s = "R(in_string)";\n'
        "R(real);\n"
    )
    assert read(src).host_names == {"real"}


def test_base_line_and_offset_map_to_the_host_file():
    body = "\nREGISTER_UNARY_OP(neg, float, float);\n"
    mf = read(body, base_line=41, base_offset=1000, base_column=30)
    (r,) = mf.registrations
    assert (r.span.line, r.span.column) == (42, 1)
    assert (r.span.start, r.span.end) == (1001, 1001 + len("REGISTER_UNARY_OP(neg, float, float)"))
    mf = read("REGISTER_UNARY_OP(neg, float, float);", base_line=5, base_offset=7, base_column=30)
    assert (mf.registrations[0].span.line, mf.registrations[0].span.column) == (5, 30)


def test_non_ascii_positions_are_bytes_and_columns_are_characters():
    src = "/* é */ REGISTER_UNARY_OP(neg, float, float);\n"
    (r,) = read(src).registrations
    assert r.span.start == len("/* é */ ".encode())
    assert r.span.column == len("/* é */ ") + 1


# ------------------------------------------------------------ errors
def test_unterminated_invocation_is_an_error_with_its_line():
    mf = read("struct a_functor {};\n\nREGISTER_UNARY_OP(neg, float,\n  float\n")
    assert [f.name for f in mf.functors] == ["a"]
    assert mf.registrations == ()
    assert len(mf.errors) == 1 and mf.errors[0].line == 3
    assert "unterminated" in mf.errors[0].message


def test_unbalanced_parentheses_stop_at_the_statement():
    mf = read("REGISTER_UNARY_OP(neg, float(, float);\nREGISTER_UNARY_OP(abs, half, half);\n")
    assert [e.line for e in mf.errors] == [1]
    assert "unbalanced" in mf.errors[0].message
    assert [r.op for r in mf.registrations] == ["abs"]


def test_wrong_argument_count_and_bad_defines():
    src = "#define TWO(A, B) REGISTER_UNARY_OP(A, B, B)\nTWO(x);\n#define BAD(1) x\n#define\nTWO(ok, int);\n"
    mf = read(src)
    assert [e.line for e in mf.errors] == [2, 3, 4]
    assert regs(mf) == [("REGISTER_UNARY_OP", "ok", ("int", "int"), "TWO")]


def test_unterminated_comment():
    mf = read("REGISTER_UNARY_OP(a, float, float);\n/* never closed\nREGISTER_UNARY_OP(b, float, float);\n")
    assert [r.op for r in mf.registrations] == ["a"]
    assert [(e.path, e.line) for e in mf.errors] == [("k.metal", 2)]


def test_unreadable_file(tmp_path):
    mf = read_metal_file(tmp_path / "missing.metal", "missing.metal")
    error = ParseError("missing.metal", 1, 1, "cannot read: No such file or directory", partial=True)
    assert mf == MetalFile("missing.metal", (), (), frozenset(), frozenset(), (error,))
    assert (mf.hidden_kernels, mf.path) == (frozenset(), "missing.metal")


def test_registration_arguments_as_written_and_the_file_they_are_in():
    """An argument of several tokens keeps them as written (one space where the source has any)."""
    mf = read("REGISTER_UNARY_OP(neg, unsigned char, metal::half);\n")
    assert [(r.path, r.op, r.dtypes) for r in mf.registrations] == [
        ("k.metal", "neg", ("unsigned char", "metal::half"))
    ]


def test_a_host_name_attribute_split_over_lines_is_read():
    mf = read('template [[host_name\n("abs_float")]] kernel void abs<float>(device float*);\n')
    assert (mf.host_names, mf.errors) == (frozenset({"abs_float"}), ())


def test_header_includes_in_a_cycle_and_undefs_in_headers(tmp_path):
    """c10/metal headers that include each other are read once each; a header's #undef removes its macro (and one
    of a name never defined is no error)."""
    h = tmp_path / "c10" / "metal"
    h.mkdir(parents=True)
    (h / "indexing.h").write_text(
        "#include <c10/metal/a.h>\n"
        '#define REGISTER_UNARY_OP(NAME, DI, DO) template [[host_name(#NAME "_" #DO)]] kernel void NAME<DO>(device DO*);\n'
    )
    (h / "a.h").write_text(
        "#include <c10/metal/b.h>\n#define GONE(x) REGISTER_UNARY_OP(x, float, float)\n#undef GONE\n"
        "#undef NEVER_DEFINED\n#define KEPT(x) REGISTER_UNARY_OP(x, float, float)\n"
    )
    (h / "b.h").write_text("#include <c10/metal/a.h>\n#define FROM_B(x) REGISTER_UNARY_OP(x, half, half)\n")
    mf = read("#include <c10/metal/a.h>\nKEPT(k1);\nGONE(k2);\nFROM_B(k3);\n", include_dirs=(tmp_path,))
    assert [(r.op, r.dtypes, r.via) for r in mf.registrations] == [
        ("k1", ("float", "float"), "KEPT"),
        ("k3", ("half", "half"), "FROM_B"),
    ]
    assert (sorted(mf.host_names), mf.errors) == (["k1_float", "k3_half"], ())


FIXTURE_TEXT = (DATA / "modern_binary.metal").read_bytes()


@settings(max_examples=examples(150))
@given(st.data())
def test_never_raises_on_mangled_input(data):
    """Cut, splice and corrupt the fixture: the reader must only report errors."""
    cut = data.draw(st.integers(0, len(FIXTURE_TEXT)))
    junk = data.draw(st.binary(max_size=40) | st.sampled_from([b"(", b")", b"\\\n", b"#define X(", b"/*", b'"', b"##"]))
    src = FIXTURE_TEXT[:cut] + junk + FIXTURE_TEXT[data.draw(st.integers(cut, len(FIXTURE_TEXT))) :]
    mf = read_metal_source(src, "fuzz.metal", include_dirs=TORCH_INC)
    assert isinstance(mf, MetalFile)
    check_read(
        mf, src, lambda: read_metal_source(src, "fuzz.metal", include_dirs=TORCH_INC), touched_from=first(src, cut)
    )


def first(src: bytes, cut: int) -> int:
    """Where errors of an edit at ``cut`` may start: the first line of the statement it falls in (a macro
    invocation written over several lines is reported at its name), or of a backslash-continued line."""
    statement = max(src.rfind(b";", 0, cut), src.rfind(b"{", 0, cut), src.rfind(b"}", 0, cut)) + 1
    statement += len(src[statement:cut]) - len(src[statement:cut].lstrip())  # its first word (or cut)
    logical = src.rfind(b"\n", 0, statement) + 1
    while logical > 1 and src[logical - 2 : logical] == b"\\\n":
        logical = src.rfind(b"\n", 0, logical - 2) + 1
    return logical


def test_an_edit_inside_a_multi_line_invocation_is_reported_at_its_name():
    """Cutting an argument line of ``REGISTER_UNARY_OP(\\n gadget, ...)``: the arity error names the invocation's
    line, before the edited one (what the fuzz test above allows)."""
    at = FIXTURE_TEXT.index(b"REGISTER_UNARY_OP(\n    gadget")
    cut = FIXTURE_TEXT.index(b"    int,", at)
    src = FIXTURE_TEXT[:cut] + FIXTURE_TEXT[cut + len(b"    int,\n") :]
    mf = read_metal_source(src, "fuzz.metal", include_dirs=TORCH_INC)
    line = FIXTURE_TEXT.count(b"\n", 0, at) + 1
    assert [(e.line, e.message) for e in mf.errors] == [(line, "macro REGISTER_UNARY_OP takes 3 argument(s), 2 given")]
    assert first(src, cut) == FIXTURE_TEXT.rfind(b"\n", 0, at) + 1


# ------------------------------------------------------------ real PyTorch 2.6.0
def _kernels_260() -> list[Path]:
    files = sorted((pytorch_260_root() / "aten/src/ATen/native/mps/kernels").glob("*.metal"))
    assert files
    return files


def test_every_260_kernel_file_reads_cleanly():
    hosts: dict[str, frozenset[str]] = {}
    for f in _kernels_260():
        mf = read_metal_file(f, f"kernels/{f.name}", TORCH_INC)
        assert mf.errors == (), f.name
        assert mf.registrations == (), f.name  # 2.6.0 predates c10/metal registration macros
        for name in mf.host_names:
            assert re.fullmatch(r"\w+", name), (f.name, name)  # fully expanded: no '#', quotes or spaces
        # every literal host name written in the file is found
        literal = set(re.findall(r'host_name\("(\w+)"\)', f.read_text()))
        assert literal <= mf.host_names, f.name
        hosts[f.name] = mf.host_names
    assert {
        "copysign_float",
        "copysign_half",
        "copysign_bfloat",
        "copysign_bool",
        "fmax_float",
        "polar_half",
        "nextafter_kernel_bfloat",
        "complex_mul_float",
    } <= hosts["BinaryKernel.metal"]
    assert "kernel_index_offsets_32" in hosts["Indexing.metal"]
    assert any(n.startswith("i0_") for n in hosts["SpecialOps.metal"])


def test_260_kernel_functions_and_macro_bodies():
    f = pytorch_260_root() / "aten/src/ATen/native/mps/kernels/BinaryKernel.metal"
    mf = read_metal_file(f, "BinaryKernel.metal")
    assert {"fmax", "fmin", "copysign", "copysign_integral", "polar"} <= mf.kernel_functions
    # each "REGISTER_X(dtype);" line of the file yields the host name its #define spells
    for macro, prefix in (("REGISTER_FMAX_OP", "fmax_"), ("REGISTER_COPYSIGN_INTEGRAL_OP", "copysign_")):
        dtypes = re.findall(rf"^{macro}\((\w+)\);", f.read_text(), re.M)
        assert dtypes and {prefix + d for d in dtypes} <= mf.host_names


RAW_STRING = re.compile(rb'R"(\w*)\((.*?)\)\1"', re.S)


def test_260_inline_metal_raw_strings():
    root = pytorch_260_root() / "aten/src/ATen/native/mps"
    seen = 0
    kernels: set[str] = set()
    for f in sorted([*root.glob("operations/*.mm"), *root.glob("*.h")]):
        data = f.read_bytes()
        for m in RAW_STRING.finditer(data):
            start = m.start(2)
            mf = read_metal_source(m.group(2), f.name, base_line=data.count(b"\n", 0, start) + 1, base_offset=start)
            assert mf.errors == (), f.name
            kernels |= mf.kernel_functions
            seen += 1
    assert seen >= 3
    assert {"bitwise_and_tensor", "lgamma", "exp_kernel"} <= kernels


# ------------------------------------------------------------ the tree's own macros, exported names
@needs_indexing_h
def test_a_tree_own_macro_named_like_a_library_one_is_expanded_as_defined():
    # 2.7.0a0's BinaryKernel.metal defines a two-parameter REGISTER_BINARY_OP of its own
    src = (
        "#include <c10/metal/indexing.h>\n"
        "template <typename T> kernel void cmul(constant T* a, device T* o, uint i) { o[i] = a[i]; }\n"
        "#define REGISTER_BINARY_OP(NAME, DTYPE) \\\n"
        '  template [[host_name(#NAME "_" #DTYPE)]] kernel void NAME<DTYPE>(constant DTYPE*, device DTYPE*, uint)\n'
        "REGISTER_BINARY_OP(cmul, float);\nREGISTER_BINARY_OP(cmul, half);\n"
    )
    mf = read(src, include_dirs=TORCH_INC)
    assert mf.errors == ()
    assert mf.registrations == ()  # not c10/metal's registration macro: no roles read through the table
    assert mf.exports == {"cmul_float", "cmul_half"}


@needs_indexing_h
def test_library_macro_still_read_through_the_table():
    mf = read("#include <c10/metal/indexing.h>\nREGISTER_BINARY_OP(hyp, float, float);\n", include_dirs=TORCH_INC)
    assert mf.errors == ()
    assert regs(mf) == [("REGISTER_BINARY_OP", "hyp", ("float", "float"), None)]
    assert mf.registrations[0].host_names and mf.registrations[0].host_names <= mf.exports


@needs_indexing_h
def test_base_macros_follow_each_define_undef_and_include_of_their_names():
    inc = "#include <c10/metal/indexing.h>\n"
    own = "#define REGISTER_BINARY_OP(A, B, C) int A;\n"
    call = "#define OTHER 1\nREGISTER_BINARY_OP(hyp, float, float);\n"
    library = [("REGISTER_BINARY_OP", "hyp", ("float", "float"), None)]
    assert regs(read(inc + own + call, include_dirs=TORCH_INC)) == []
    assert regs(read(inc + own + "#undef REGISTER_BINARY_OP\n" + call, include_dirs=TORCH_INC)) == library
    assert regs(read(own + inc + call, include_dirs=TORCH_INC)) == library


@needs_indexing_h
def test_the_library_memo_follows_the_table_and_indexing_h():
    from migrate.read import metal_reader

    dirs, table = tuple(str(d) for d in TORCH_INC), registration_table()
    fallback, base = metal_reader._library(dirs, table)
    assert metal_reader._library(dirs, table)[0] is fallback and base <= set(table) <= set(fallback)
    other = {**table, "MY_REGISTER": ("name",)}
    got, got_base = metal_reader._library(dirs, other)
    assert "MY_REGISTER" in got_base and "MY_REGISTER" in got and "MY_REGISTER" not in fallback
    assert set(metal_reader._library((), table)[0]) == set(table) == metal_reader._library((), table)[1]
    metal_reader.header_macros.cache_clear()
    assert metal_reader._library(dirs, table)[0] is not fallback


def test_exports_are_what_a_library_would_export():
    src = (
        "kernel void plain(device float* o, uint i) { o[i] = 0; }\n"
        "void kernel plain_too(device float* o, uint i) { o[i] = 1; }\n"
        "template <typename T>\nkernel void tmpl(device T* o, uint i) { o[i] = 0; }\n"
        'template [[host_name("tmpl_float")]] kernel void tmpl<float>(device float*, uint);\n'
        '[[host_name("renamed")]] kernel void inner_name(device float* o, uint i) { o[i] = 2; }\n'
    )
    mf = read(src)
    assert mf.kernel_functions == {"plain", "plain_too", "tmpl", "inner_name"}
    assert mf.exports == {"plain", "plain_too", "tmpl_float", "renamed"}


def _kernels_270a0() -> Path:
    from tests.corpus import pytorch_270a0_root

    return pytorch_270a0_root() / "aten/src/ATen/native/mps/kernels"


def test_every_270a0_kernel_file_reads_cleanly():
    root = _kernels_270a0().parents[5]
    for f in sorted(_kernels_270a0().glob("*.metal")):
        mf = read_metal_file(f, f.name, [root])
        assert mf.errors == (), (f.name, mf.errors[:2])
        assert mf.exports and all(re.fullmatch(r"\w+", n) for n in mf.exports), f.name
        literal = set(re.findall(r'host_name\("(\w+)"\)', f.read_text()))
        assert literal <= mf.exports, f.name


def test_270a0_binary_kernel_exports_match_the_compiled_library(tmp_path):
    """The CPU backend compiles the file as the Metal compiler would (slow the first time: ~2 min)."""
    from migrate.device import get_backend

    f = _kernels_270a0() / "BinaryKernel.metal"
    root = f.parents[6]
    mf = read_metal_file(f, f.name, [root])
    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(tmp_path))
    try:
        lib = get_backend("cpu").compile_shader(f.read_text(), include_dirs=[str(root)], opt=0)
    finally:
        mp.undo()
    assert set(lib.kernel_names) == mf.exports
    assert {"complex_mul_float", "complex_kernel_half", "copysign_dense_long"} <= mf.exports

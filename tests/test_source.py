"""The one source layer: SourceFile (lines, character columns, scrubbed code), the token
stream and the macro expander."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from migrate.model import Span
from migrate.source import SourceFile, source_file
from migrate.source import Span as SourceSpan
from migrate.source.macros import Expander, expand, find_invocations, find_macros, parse_define
from migrate.source.tokens import render, tokenize
from tests.helpers import run_cli

REVIEW = Path(__file__).resolve().parent.parent / "fixtures" / "review"


# ------------------------------------------------------------------ SourceFile
def test_one_span_type():
    assert Span is SourceSpan


def test_lines_and_character_columns():
    data = "a\n  é → x = 1;\n".encode()
    sf = SourceFile(data, "f.mm")
    off = data.index(b"x")
    assert sf.position(off) == (2, 7)  # "  é → " is 6 characters, 10 bytes
    sp = sf.span(off, off + 1)
    assert (sp.path, sp.line, sp.column, sp.end_column, sp.start, sp.end) == ("f.mm", 2, 7, 8, off, off + 1)
    assert sf.data[sp.start : sp.end] == b"x"


def test_embedded_source_spans_are_places_in_the_outer_file():
    outer = 'auto s = R"(kernel void k() {}\nint é;)";\n'.encode()
    at = outer.index(b"kernel")
    inner = SourceFile(outer[at : outer.index(b')"')], "h.mm", base_line=1, base_column=12, base_offset=at)
    sp = inner.span(0, 6)
    assert (sp.line, sp.column, sp.start, sp.end) == (1, 12, at, at + 6)
    assert outer[sp.start : sp.end] == b"kernel"
    assert inner.position(inner.data.index(b";")) == (2, 6)  # the second line starts at column 1


def test_scrubbed_code_blanks_comments_and_literals_keeping_offsets():
    data = b'int a; // c "x"\nauto s = "y\\"z"; /* k\nl */ R"d(raw ) " )d" #x\n#define M 1\n'
    sf = SourceFile(data)
    assert len(sf.code) == len(data) and sf.code.count(b"\n") == data.count(b"\n")
    assert b"// c" not in sf.code and b"y" not in sf.code.split(b"auto")[1].split(b";")[0]
    assert [r.delimiter for r in sf.raw_strings] == ["d"]
    (r,) = sf.raw_strings
    assert data[r.content_start : r.content_end] == b'raw ) " '
    assert sf.in_comment(data.index(b'c "x')) and not sf.in_comment(0)
    assert sf.in_directive(data.index(b"define")) and not sf.in_directive(data.index(b"#x"))


def test_shared_source_file_is_lexed_once():
    data = b"kernel void f() {}\n"
    a = source_file(data, "k.metal")
    assert source_file(data, "k.metal") is a and a.tokens() is a.tokens()


# ------------------------------------------------------------------ tokens
def kinds(text: str, **kw) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(text, **kw)]


def test_tokens_keep_byte_offsets_and_skip_comments():
    text = "int /* c */ x = 0x1F + 1.5e-3; // end\n"
    toks = tokenize(text)
    assert [(t.kind, t.text) for t in toks] == [
        ("id", "int"),
        ("id", "x"),
        ("punc", "="),
        ("num", "0x1F"),
        ("punc", "+"),
        ("num", "1.5e-3"),
        ("punc", ";"),
    ]
    assert all(text[t.start : t.end] == t.text for t in toks)
    assert toks[1].space == "   "  # a comment counts as whitespace


def test_raw_strings_and_prefixed_literals_are_one_token():
    text = 'auto s = R"METAL(kernel void k() { return ")"; })METAL"; auto w = L"x"; char c = u8\'a\';'
    strs = [t.text for t in tokenize(text) if t.kind == "str"]
    assert strs == ['R"METAL(kernel void k() { return ")"; })METAL"', 'L"x"', "u8'a'"]


def test_preprocessor_lines_are_one_token_with_continuations():
    text = "#define F(a) \\\n  a + 1\nint x;\n  # include <y.h>\n"
    toks = tokenize(text)
    assert [t.kind for t in toks] == ["dir", "id", "id", "punc", "dir"]
    assert toks[0].text == "#define F(a) \\\n  a + 1"
    assert kinds("#x", directives=False) == [("punc", "#"), ("id", "x")]
    # a block comment spanning lines belongs to its directive; "/*" in a string or a // comment opens none
    assert kinds("#define X /* a\nb */ 1\nint y;")[:2] == [("dir", "#define X /* a\nb */ 1"), ("id", "int")]
    assert [k for k, _ in kinds('#define S "/*" // /*\nint w;')] == ["dir", "id", "id", "punc"]


def test_objective_c_tokenizes():
    text = (
        "@autoreleasepool { id d = [[[MPSNDArray alloc] initWithDevice:dev descriptor:desc] autorelease]; "
        'NSString* s = @"x"; @[a, b]; }'
    )
    toks = kinds(text)
    assert ("at", "@autoreleasepool") in toks and ("id", "initWithDevice") in toks
    assert toks.count(("punc", "[")) == 4 and toks.count(("punc", "]")) == 4
    assert ("punc", "@") in toks and ("str", '"x"') in toks


def test_unterminated_comment_and_string_are_reported():
    errs: list[str] = []
    toks = tokenize('int x = "abc\n/* open', errors=errs)
    assert errs == ["unterminated string literal", "unterminated comment"]
    assert toks[-1].text == "/*"


# ------------------------------------------------------------------ macros
def expander(*defines: str) -> Expander:
    errs: list[str] = []
    macros = {m.name: m for m in (parse_define(d, errs) for d in defines)}
    assert not errs
    return Expander(macros)


def run(ex: Expander, text: str) -> str:
    return " ".join(render(ex.expand(tokenize(text, directives=False))).split())


def test_object_and_function_like_macros():
    ex = expander("N 3", "SQ(x) ((x) * (x))")
    assert run(ex, "SQ(N + 1)") == "((3 + 1) * (3 + 1))"
    assert run(ex, "SQ") == "SQ"  # a function-like name without '(' is no invocation


def test_variadic_and_va_opt():
    ex = expander("CALL(f, ...) f(__VA_ARGS__)", "OPT(f, ...) f(0 __VA_OPT__(,) __VA_ARGS__)", "NAMED(args...) g(args)")
    assert run(ex, "CALL(h, 1, (2, 3), 4)") == "h(1, (2, 3), 4)"
    assert run(ex, "CALL(h)") == "h()"
    assert run(ex, "OPT(h)") == "h(0)"
    assert run(ex, "OPT(h, 1, 2)") == "h(0 , 1, 2)"
    assert run(ex, "NAMED(a, b)") == "g(a, b)"


def test_stringify_and_paste():
    ex = expander("S(x) #x", "CAT(a, b) a##b", "K(name, T) kernel_##name##_##T", "E(x) CAT(x, )")
    assert run(ex, 'S( a  +  "q" )') == '"a + \\"q\\""'
    assert run(ex, "CAT(exp, _kernel)") == "exp_kernel"
    assert run(ex, "K(add, float)") == "kernel_add_float"
    assert run(ex, "E(x)") == "x"  # a placemarker
    assert run(ex, "CAT(+, +)") == "++"


def test_pasted_name_is_rescanned_and_nested_invocations_expand():
    ex = expander("CAT(a, b) a##b", "AB 42", "TWICE(x) x x", "ID(x) x")
    assert run(ex, "CAT(A, B)") == "42"
    assert run(ex, "ID(ID(ID(7)))") == "7"
    assert run(ex, "TWICE(ID(1))") == "1 1"


def test_no_recursive_self_expansion():
    ex = expander("foo foo + 1", "a b", "b a", "F(x) F(x) + x")
    assert run(ex, "foo") == "foo + 1"
    assert run(ex, "a") == "a"
    assert run(ex, "F(2)") == "F(2) + 2"


def test_line_continuations_in_definitions():
    src = b"#define REG(op) \\\n  void op##_kernel(int x) { \\\n    call(x); \\\n  }\nREG(add);\nREG(sub)\n"
    sf = SourceFile(src, "h.mm")
    macros = find_macros(sf)
    assert list(macros) == ["REG"] and macros["REG"].params == ("op",)
    invs = find_invocations(sf, {"REG"})
    assert [(i.args, src[i.start : i.end]) for i in invs] == [((b"add",), b"REG(add);"), ((b"sub",), b"REG(sub)")]
    text = expand(macros["REG"], invs[0].args, macros)
    assert b" ".join(text.split()) == b"void add_kernel(int x) { call(x); }"


def test_arity_errors_are_collected():
    ex = expander("F(a, b) a")
    assert run(ex, "F(1)") == ""
    assert ex.errors == ["macro F takes 2 argument(s), 1 given"]


# ------------------------------------------------------------------ columns end to end
def test_metal_review_finding_column_counts_characters(tmp_path):
    root = tmp_path / "review"
    shutil.copytree(REVIEW, root)
    p = root / "aten/src/ATen/native/mps/kernels/Review.metal"
    src = p.read_text(encoding="utf-8")
    old = "    return max(a, b);\n  }\n};\n\nstruct review_max_good_functor"
    new_line = "    /* größer → */ return max(a, b);"
    assert old in src
    p.write_text(src.replace(old, new_line + old[len("    return max(a, b);") :], 1), encoding="utf-8")
    proc = run_cli("lint", str(p), "--select", "MPS016", "--format", "json")
    (f,) = [f for f in json.loads(proc.stdout) if f["line"] == 10]
    assert f["column"] == new_line.index("max(") + 1  # 3 multibyte characters before it
    proc = run_cli("lint", str(p), "--select", "MPS016", "--format", "full")
    lines = proc.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.rstrip().endswith(new_line.strip()))
    assert lines[at].index("max(") == lines[at + 1].index("^")


@pytest.mark.parametrize("data", [b"", b"\n", "é".encode(), b"\xff\xfe x"])
def test_positions_never_fail(data):
    sf = SourceFile(data)
    for off in range(len(data) + 1):
        line, col = sf.position(off)
        assert line >= 1 and col >= 1


def test_host_finding_column_counts_characters(tmp_path):
    """A host-side site (MPS018's compile option) after non-ASCII text: column and caret in characters."""
    root = tmp_path / "review"
    shutil.copytree(REVIEW, root)
    p = root / "aten/src/ATen/native/mps/operations/Review.mm"
    line = "  /* schnell → größer */ options.fastMathEnabled = YES;"
    p.write_text(
        p.read_text(encoding="utf-8") + f"\nvoid tune(MTLCompileOptions* options) {{\n{line}\n}}\n", encoding="utf-8"
    )
    proc = run_cli("lint", str(p), "--select", "MPS018", "--format", "json")
    (f,) = [f for f in json.loads(proc.stdout) if f["path"].endswith("Review.mm")]
    assert f["column"] == line.index("fastMathEnabled") + 1  # 4 multibyte characters before it
    assert f["end_column"] == line.index(";") + 1
    lines = run_cli("lint", str(p), "--select", "MPS018", "--format", "full").stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.rstrip().endswith(line.strip()))
    assert lines[at].index("fastMathEnabled") == lines[at + 1].index("^")


@pytest.mark.parametrize(
    "rest",
    [" ONE 1", " PAIR(a, b) a ## _ ## b", " VA(fmt, ...) f(fmt __VA_OPT__(,) __VA_ARGS__)", " EMPTY", " F() x"],
)
def test_a_lazy_define_tokenizes_its_body_on_first_read_and_equals_the_eager_one(rest):
    """A header's macros (metal_reader._header_events): most are never expanded, so their bodies wait."""
    eager = parse_define(rest, [])
    lazy = parse_define(rest, [], lazy=True)
    assert eager is not None and lazy is not None
    assert "body" not in vars(lazy) and (lazy.name, lazy.params, lazy.variadic) == (
        eager.name,
        eager.params,
        eager.variadic,
    )
    assert lazy.text == eager.text and "body" in vars(lazy) and "_deferred" not in vars(lazy)
    assert list(map(repr, lazy.body)) == list(map(repr, eager.body))  # kinds, texts and offsets
    with pytest.raises(AttributeError):
        lazy.missing  # noqa: B018  (any other attribute: the usual error)


def test_a_header_defines_its_macros_lazily_and_they_expand_as_written():
    from migrate.read import metal_reader
    from migrate.tree import metal_include_dirs
    from tests.helpers import MINI

    dirs = tuple(str(d) for d in metal_include_dirs(MINI))
    metal_reader.header_macros.cache_clear()
    metal_reader._header_events.cache_clear()  # earlier tests may have expanded its macros
    macros = metal_reader.header_macros(dirs, metal_reader.INDEXING_H)
    assert macros and all("body" not in vars(m) for m in macros.values())  # nothing tokenized yet
    mac = next(m for m in macros.values() if m.params)
    again = parse_define(f" {mac.name}({', '.join(mac.params)}) {mac.text}", [])
    assert again is not None and again.text == mac.text and "body" in vars(mac)

"""The lint's fast paths read exactly what their one-regex (or one-scan) definitions read.

Each fast path (scrub visiting only "/" and quotes, calls read backwards, bracket partners
from one stack pass, body openers by a depth search, node words by bytes.find) is compared
with the plain definition on hand-written edge cases and on every fixture source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migrate.read import cpp_unit, host_reader, host_sites, launch_shadow, objc_neutral
from migrate.read.host_reader import _kernel_call_pattern, _keep
from migrate.read.host_sites import _NODE_WORDS_SUBITER, within
from migrate.read.metal_body import lex, match_close
from migrate.source import SourceFile
from migrate.source import file as source_file
from migrate.source import literal_search
from migrate.source import macros as macros_module
from migrate.source import tokens
from migrate.tables import kernel_launch_helpers

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOST = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".mm", ".cpp", ".h"))
METAL = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".metal", ".h"))

EDGES = [
    b'u8"a//b" R"x(q"/*)x" abc"not" L\'c\' uR"(z)" 1\'000\'000 // end "quote\n',
    b'/* "open */ x = "\\"/*" + u\'\\n\' + U"w"; y = LR"d()d" ;\nfooR"(no)"\n',
    b'"unterminated\n  \'x\' id"y" u8R"e(\n)e" /* tail',
    b'a/b/c; s = "//"; t = \'/\'; #define Q(x) #x "q"\n',
]


def _scrub_reference(data: bytes):
    comments, raws = [], []

    def repl(m):
        kind, text = m.lastgroup, m.group()
        if kind == "raw":
            cs, ce = m.span("body")
            raws.append((m.start(), m.end(), cs, ce, m.group("d").decode("latin-1")))
            q = text.index(b'"')
            return tokens.blank(text[:q]) + b'"' + tokens.blank(text[q + 1 : -1]) + b'"'
        if kind in ("lc", "bc"):
            comments.append(m.span())
            return tokens.blank(text)
        q = text.index(b'"' if kind == "str" else b"'")
        return text[: q + 1] + tokens.blank(text[q + 1 : -1]) + text[-1:]

    return tokens._SCRUB.sub(repl, data), comments, raws


@pytest.mark.parametrize("data", EDGES + [p.read_bytes() for p in HOST + METAL])
def test_scrub_equals_the_one_regex_pass(data):
    assert tokens.scrub(data) == _scrub_reference(data)


def _scan_reference(text: str, start: int = 0, end: int | None = None):
    found = set(cpp_unit.TOKENS.findall(text, start, len(text) if end is None else end))
    ids = {name for name, _ in found}
    ids.discard("")
    return ids, {name for name, paren in found if paren}


SCAN_EDGES = [
    "f(x); obj.g (y); a::h<int, T*>(z); k < 3 > (w); @selector(m) 1.5e3f(q) _u8(v)",
    "template <typename T> T id(T t) { return max<T>(t, t); } x\t(\t) [self foo:bar(1)]",
]


@pytest.mark.parametrize("text", SCAN_EDGES + [SourceFile(p.read_bytes()).code.decode("latin-1") for p in HOST])
def test_identifiers_and_calls_equal_the_one_regex_reading(text):
    assert cpp_unit.scan(text) == _scan_reference(text)
    for start, end in ((1, len(text) // 2), (len(text) // 3, len(text))):  # cut words at either end too
        assert cpp_unit.scan(text, start, end) == _scan_reference(text, start, end)
        assert cpp_unit.identifiers(text, start, end) == _scan_reference(text, start, end)[0]


WORD_EDGES = SCAN_EDGES + ['a.b.c 1.e5 0x1p-3 x.1 @end a@b @"s" 3.x é1abc _é y2. .5f', "ab.cd@ef 12ab.c9 @ "]


@pytest.mark.parametrize("text", WORD_EDGES + [SourceFile(p.read_bytes()).code.decode("latin-1") for p in HOST])
def test_words_from_split_runs_equal_the_regex_reading(text):
    wt = cpp_unit.word_text(text.encode("latin-1"))
    assert len(wt) == len(text) and cpp_unit.words(wt) == cpp_unit.identifiers(text)
    for start in range(min(len(text), 40)):  # every cut near the start: inside words, numbers, "@x", "a.b"
        for end in (len(text), max(start, len(text) - 7)):
            assert cpp_unit.words(wt, start, end) == cpp_unit.identifiers(text, start, end), (start, end)
        assert cpp_unit.scan(text, start, None, wt) == _scan_reference(text, start), start


@pytest.mark.parametrize(
    "text", ["f(a[b{c}]) ( ] ) { ( }", "((]", "[{(})]"] + [p.read_bytes().decode("latin-1") for p in METAL]
)
def test_bracket_partners_equal_the_scan_from_each_opener(text):
    toks = lex(text)
    for i, t in enumerate(toks):
        if t.text in ("(", "[", "{"):
            assert match_close(toks, i) == tokens.match_close(toks, i), (i, t.text)


def _lean_reference(sc: SourceFile, keep):
    """lean_bodies' definition: one walk over the braces outside preprocessor lines."""
    code, found, stops = sc.code, [], []
    in_dir = {ds + i for ds, de in sc.directives for i in range(de - ds) if code[ds + i] in b"{}"}
    depth, body = 0, -1
    for m in re.finditer(rb"[{}]", code):
        i = m.start()
        if i in in_dir:
            continue
        if code[i] == 123:
            if body < 0:
                j = i - 1
                while j >= 0 and code[j] in b" \t\r\n":
                    j -= 1
                if j >= 0 and code[j] == 41:
                    body, depth = i, 0
            depth += 1
        else:
            depth -= 1
            if body >= 0 and depth == 0:
                s, e = body + 1, i
                if _groups_whole_reference(sc, s, e, in_dir) and not keep(s, e):
                    blank_at = re.compile(rb"[ \t]").search(code, s, e)
                    if blank_at is None:
                        found.append((s, e))
                    else:
                        found += [(s, blank_at.start()), (blank_at.start() + 1, e)]
                        stops.append(blank_at.start())
                body = -1
    found += [(r.content_start, r.content_end) for r in sc.raw_strings if not sc.in_directive(r.start)]
    return found, stops


def _groups_whole_reference(sc: SourceFile, s: int, e: int, in_dir: set[int]) -> bool:
    """The body s..e's #if groups are whole, every branch with as many "{" as "}" outside directives."""
    code, opened = sc.code, []
    for ds, de in sc.directives:
        word = re.match(rb"[ \t]*#[ \t]*(if|el|endif\b)", code[ds:de])
        if not s <= ds < e or word is None:
            continue
        at = sum(1 if code[i] == 123 else -1 for i in range(s, ds) if code[i] in b"{}" and i not in in_dir)
        if word.group(1) == b"if":
            opened.append(at)
        elif not opened or opened[-1] != at:
            return False
        elif word.group(1) == b"endif":
            opened.pop()
    return not opened


LEAN_EDGES = [
    b"void f() { g(); }\nint x{1};\nvoid h(int a)\n{\n#if A\n  if (a) {\n#else\n  if (!a) {\n#endif\n  }\n}\n",
    b"struct S { void m() const { x(); } };\nvoid open() { {\n",
    b'#define M() { }\nvoid k() { exec_unary_kernel (iter, "k"); }\nvoid q() { mtl_setBytes(e, v, 0); }\n',
    b"void a() {\n#ifdef X\n  if (x) { y(); } else\n#endif\n  { z(); }\n#pragma once\n}\n"
    b"void b() {\n#if A\n  {\n#endif\n}\n}\nvoid c() {\n#endif\n#if B\n}\nvoid d() {\n#else\n}\n",
]


@pytest.mark.parametrize("data", LEAN_EDGES + [p.read_bytes() for p in HOST])
def test_lean_bodies_equal_the_brace_walk(data):
    sc = SourceFile(data)
    keep = _keep(sc.code)
    assert cpp_unit.lean_bodies(sc, keep) == _lean_reference(sc, keep)


@pytest.mark.parametrize("data", LEAN_EDGES + [p.read_bytes() for p in HOST])
def test_node_words_found_as_the_regex_search_finds_them(data):
    code = SourceFile(data).code
    helpers = within(code, [n.encode() for n in kernel_launch_helpers()], re.compile(rb"[ \t]*\("))
    words = within(code, _NODE_WORDS_SUBITER)
    word_re = re.compile(b"|".join(_NODE_WORDS_SUBITER))
    bodies = [(m.end(), code.find(b"}", m.end())) for m in re.finditer(rb"\)\s*\{", code)]
    for s, e in [(s, e) for s, e in bodies if e > s]:
        assert helpers(s, e) == (_kernel_call_pattern().search(code, s, e) is not None)
        assert words(s, e) == (word_re.search(code, s, e) is not None)


READBACK_EDGES = [
    b"a.item() b->cpu() c . item <int> ( ) d.itemsize() e->\titem<x.cpu>() f.cpu g .cpu()",
    b"x.item<y.item()>() ..item() -> cpu() -cpu() .\n item()",
    b"item() cpu()",
]


@pytest.mark.parametrize("data", READBACK_EDGES + [p.read_bytes() for p in HOST])
def test_readback_matches_equal_the_regex_scan(data):
    from migrate.read import host_sites

    code = SourceFile(data).code
    got = [m.span() for m in host_sites._readback_matches(code)]
    assert got == [m.span() for m in host_sites._READBACK.finditer(code)]


DIRECTIVE_EDGES = [
    b"#define A \\\n#define B\n  #if X\n\t# endif\nx # y\n#",
    b"int a;\r\n #pragma x\\\r\n# b\n\n#\n a#b\n##\n \\\n#c",
    b"",
    b"no directive at all\n",
]


@pytest.mark.parametrize("data", DIRECTIVE_EDGES + [SourceFile(p.read_bytes()).code for p in HOST + METAL])
def test_directive_lines_equal_the_regex_search(data):
    want = [(m.start() + 1, m.end()) for m in re.finditer(rb"\n[ \t]*#(?:[^\n\\]|\\.)*", data, re.S)]  # the definition
    assert source_file._directive_lines(data) == want


SITE_EDGES = [
    b"[lib setFastMathEnabled: YES]; o.fastMathEnabled = true; xfastMathEnabled=YES; o.mathMode = MTLMathModeFast;",
    b"mtl_setBytes(e, a, 0); xmtl_setBytes(e); mtl_setBytesX(e);\nmtl_setBytes(e, b, 1);",
]


FIND_AT_EDGES = [
    b"REGISTER_DISPATCH(a, &b); xREGISTER_MPS_DISPATCH(c, d) a.numel() b.numel ( ) __bridge _Nonnull ___weak",
    b'for (id x in xs) {} format for(X* y in z) @autoreleasepool { @[a, b] @{k : v} @"s" @(1) @end',
    b"DEFINE_AB(x) DEFINE_A (y); xDEFINE_A(z) DEFINE_ABC(w) CREATE_MPS_UNARY_FUNC(f, g)",
]
FIND_AT = [
    (host_sites._FAST_MATH, host_sites._FAST_MATH_WORDS),
    (host_sites._SETBYTES, (b"mtl_setBytes",)),
    (host_sites._NUMEL, (b"numel",)),
    (host_reader._REGISTER, host_reader._REGISTER_WORDS),
    (objc_neutral._QUALIFIERS, (b"__", b"_N")),
    (objc_neutral._FOR_IN, (b"for",)),
] + [(p, (b"@",)) for p in (objc_neutral._AT_REGION, objc_neutral._AT_STMT, objc_neutral._AT_CALL)]
FIND_AT += [(p, (b"@",)) for p in (objc_neutral._AT_WORD, objc_neutral._AT_LIT)]
FIND_AT.append(
    (
        re.compile(rb"\b(CREATE_MPS_UNARY_FUNC|DEFINE_A|DEFINE_AB)[ \t]*\("),
        (b"DEFINE_AB", b"DEFINE_A", b"CREATE_MPS_UNARY_FUNC"),
    )
)


@pytest.mark.parametrize("data", SITE_EDGES + FIND_AT_EDGES + [SourceFile(p.read_bytes()).code for p in HOST])
def test_matches_at_their_words_equal_the_regex_search(data):
    for pat, words in FIND_AT:
        want = [m.span() for m in pat.finditer(data)]
        assert [m.span() for m in literal_search.matches_at(pat, data, words)] == want, pat.pattern


@pytest.mark.parametrize(
    "data",
    [b") {", b"{", b"f()\r\n\t {x) {}", b")" + b" " * 200 + b"{ ]{", b" " * 70 + b"{"] + [p.read_bytes() for p in HOST],
)
def test_body_openers_equal_the_regex_search(data):
    want = [m.end() - 1 for m in re.finditer(rb"\)[ \t\r\n]*\{", data)]  # ") {": the definition
    opens = [i for i, b in enumerate(data) if b == 123]
    assert [i for i in opens if cpp_unit._after_paren(data, i)] == want


@pytest.mark.parametrize("data", [b"", b"{", b"{{", b"a{b{", b"}{}"] + [p.read_bytes() for p in HOST])
def test_offsets_of_one_byte_equal_a_scan(data):
    for byte in (b"{", b"}", b"@"):
        assert literal_search.offsets(data, byte) == [i for i, b in enumerate(data) if b == byte[0]]
    assert literal_search.offsets(b"aaa", b"aa") == [0, 1]  # several bytes: overlapping ones too


def _closing_brace_scan(code: bytes, open_at: int) -> int | None:
    """The byte-by-byte scan closing_brace replaced."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == 0x7B:
            depth += 1
        elif code[j] == 0x7D:
            depth -= 1
            if depth == 0:
                return j
    return None


@pytest.mark.parametrize(
    "data",
    [b"{}", b"{ {a} { {b} } }x}", b"{ {", b"}{}", b"a{b}", b""] + [SourceFile(p.read_bytes()).code for p in HOST],
)
def test_closing_brace_equals_a_scan(data):
    starts = {0, len(data)} | {i for i, b in enumerate(data) if b in (0x7B, 0x7D)}
    for at in sorted(starts)[:400]:
        assert literal_search.closing_brace(data, at) == _closing_brace_scan(data, at), at
    assert literal_search.closing_brace(b"{ {a} { {b} } }x}", 0) == 14


def _propagate_reference(unit) -> None:
    """metal_flow._propagate as first written: every function, every assignment and pass, each round."""
    from migrate.read.metal_body import identifier_positions
    from migrate.read.metal_flow import stmt_calls

    toks = unit.toks
    by_name: dict = {}
    for flow in unit.flows:
        by_name.setdefault(flow.fn.name, []).append(flow)

    def keys(flow, lo, hi):
        return [flow.var(name, k) for k, name in identifier_positions(toks, lo, hi)]

    def union(tags, ks):
        return set().union(*(tags.get(k, set()) for k in ks))

    plans = []
    for flow in unit.flows:
        assigns = [(var, keys(flow, *a.rhs), a) for _, a, var in flow.assigns]
        passes = []
        for st in flow.fn.stmts:
            for c in stmt_calls(unit, st):
                for callee in by_name.get(c.name, ()):
                    if callee is flow or callee.fn.is_kernel:
                        continue
                    for k, (lo, hi) in enumerate(c.args[: len(callee.fn.params)]):
                        passes.append((callee, callee.fn.params[k].name, keys(flow, lo, hi), c, lo, hi))
        plans.append((flow, assigns, passes))
    for _ in range(8):
        changed = False
        for flow, assigns, passes in plans:
            for _r in range(8):
                inner = False
                for var, ks, a in assigns:
                    got = union(flow.tags, ks)
                    if a.subscripted:
                        got &= {"data"}
                    have = flow.tags.setdefault(var, set())
                    if not got <= have:
                        if var not in flow.origin and got - {"data", "size"}:
                            flow.origin[var] = flow.origin_of(toks, *a.rhs, want=got - {"data", "size"})
                        have |= got
                        inner = changed = True
                if not inner:
                    break
            for callee, pname, ks, c, lo, hi in passes:
                got = union(flow.tags, ks)
                have = callee.tags.setdefault(pname, set())
                if not got <= have:
                    if pname not in callee.origin and got - {"data", "size"}:
                        line = unit.line_col(toks[c.at].start)[0]
                        callee.origin[pname] = f"{flow.origin_of(toks, lo, hi, got)}, passed at line {line}"
                    have |= got
                    changed = True
        if not changed:
            break


# helpers before their callers, one called with a position only after a round: tags reach them late
HELPERS_FIRST = """
uint inner(uint v) { uint w = v * 2; return w; }
uint outer(uint a, uint b) { uint c = a + b; uint d = inner(c); return d; }
void store(device float* out, uint at, float x) { uint q = at; out[q] = x; }
kernel void k(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
              uint lane [[thread_index_in_simdgroup]], uint tid [[thread_position_in_grid]]) {
  uint m = n;
  uint p = outer(lane, m);
  for (uint i = 0; i < m; i++) { uint j = i + p; store(out, j, out[j]); }
  uint lid = tid; lid = lid * m;
}
"""


@pytest.mark.parametrize(
    "tree",
    sorted(p.name for p in FIXTURES.iterdir() if (p / "aten/src/ATen/native/native_functions.yaml").exists())
    + ["helpers-first", "2.7.0a0"],
)
def test_flow_propagation_equals_every_round_of_every_function(tree, monkeypatch):
    """_propagate skips what cannot change a tag: tags and origins are those of the full rounds."""
    from migrate import cache
    from migrate.read import metal_flow
    from migrate.tree import load_tree
    from tests.corpus import pytorch_270a0_root

    monkeypatch.setenv("MPS_MIGRATE_JOBS", "1")
    if tree == "helpers-first":
        units = [metal_flow.analyse("k.metal", HELPERS_FIRST)]
        assert "lane" in units[0].by_name("inner")[0].any_tags("w")  # kernel -> outer -> inner
    else:
        with cache.disable_cache():
            units = list(metal_flow._units(load_tree(pytorch_270a0_root() if tree == "2.7.0a0" else FIXTURES / tree)))
    for unit in units:
        fast = [(dict(f.tags), dict(f.origin)) for f in unit.flows]
        for f in unit.flows:  # the flows as _sources made them
            fresh = metal_flow._sources(unit.toks, f.fn)
            f.tags, f.origin = fresh.tags, fresh.origin
        _propagate_reference(unit)
        assert [(f.tags, f.origin) for f in unit.flows] == fast, unit.path


def _calls_reference(toks, lo, hi):
    """(name, qualifier, at, args) of metal_body.calls: every token of the range tried as a name."""
    from migrate.read.metal_body import CONTROL, split_top

    out = []
    for k in range(lo, hi - 1):
        if toks[k].kind != "id" or toks[k].text in CONTROL:
            continue
        nxt = k + 1
        if toks[nxt].text == "<":
            depth, q = 0, nxt
            while q < hi:
                depth += toks[q].text == "<"
                depth -= toks[q].text == ">"
                if depth == 0:
                    break
                q += 1
            nxt = q + 1
        if nxt >= hi or toks[nxt].text != "(" or (k > lo and toks[k - 1].text in (".", "->")):
            continue
        out.append((toks[k].text, k, tuple(split_top(toks, nxt + 1, match_close(toks, nxt)))))
    return out


@pytest.mark.parametrize(
    "text",
    ["a = f<T>(x, g(y)) + h [i](j); b.m(c) = d; e = (k = 1, l);"] + [p.read_bytes().decode("latin-1") for p in METAL],
)
def test_statement_scans_equal_the_token_by_token_definitions(text):
    """calls tries only names before "(" or "<"; the first "=" outside brackets comes from one scan."""
    from migrate.read.metal_body import _depth0, _first_top_level, calls

    toks = lex(text)
    bounds = [0] + [k + 1 for k, t in enumerate(toks) if t.text in (";", "{", "}")] + [len(toks)]
    for lo, hi in zip(bounds, bounds[1:]):
        assert [(c.name, c.at, c.args) for c in calls(toks, lo, hi)] == _calls_reference(toks, lo, hi)
        for a in range(lo, hi):
            want = next((k for k in range(a, hi) if toks[k].text == "=" and _depth0(toks, a, k)), None)
            assert _first_top_level(toks, a, hi, "=") == want


STATIC_EDGES = [
    b"static int f() { return 1; }\nint g() { static int n = 0; return n; }\n",
    b"template <typename T> static inline T h(T t) { return t; }\nvoid k() { static_assert(true); }\n",
]


@pytest.mark.parametrize("data", STATIC_EDGES + [p.read_bytes() for p in HOST])
def test_static_read_from_the_head_equals_the_whole_definition_search(data):
    unit = cpp_unit.Unit(SourceFile(data))
    for fn in unit.functions:  # parsed None: every child is looked at, no text searched first
        assert fn == cpp_unit._function(fn.node, unit._parsed) == cpp_unit._function(fn.node)
    assert any(fn.is_static for fn in cpp_unit.Unit(SourceFile(STATIC_EDGES[0])).functions)


MACRO_EDGES = [
    b"#define B(x) int x##_b() { return #x[0]; }\n#define A(x, y) B(x) void y() { B(x); }\nA(p, q)\nB(r)\n",
    b"#define V(f, ...) f(__VA_ARGS__) V(f, __VA_ARGS__)\n#define W(n) V(n, 1, 2) n##n\nW(g) V(h)\n",
    b"#define S(s) S(s) struct s {}; \n#define T(t) S(t) S t\nT(u) S(v)\n",
]


def _expand_reference(macro, args, nested):
    """macros.expand as defined: every body token copied, the result always rescanned."""
    ex = macros_module.Expander(dict(nested))
    toks = [tokens.tokenize(a.decode("latin-1"), directives=False) for a in args]
    if macro.params is not None and not ex._check_arity(macro, toks):
        toks = (toks + [[] for _ in macro.params])[: len(macro.params)]
    body = ex.substitute(macro, toks)
    return tokens.render(ex.expand(body, frozenset({macro.name}))).encode("latin-1", "replace")


@pytest.mark.parametrize("data", MACRO_EDGES + [p.read_bytes() for p in HOST])
def test_host_expansion_equals_the_copying_rescanning_one(data):
    sf = SourceFile(data)
    found = macros_module.find_macros(sf)
    state = {n: [(t.kind, t.text, t.space, t.painted, t.paste_op) for t in m.body] for n, m in found.items()}
    invocations = macros_module.find_invocations(sf, set(found))
    assert invocations or data not in MACRO_EDGES
    for inv in invocations:
        mac = found[inv.macro]
        for nested in (found, {}):
            want = _expand_reference(mac, inv.args, nested)
            assert macros_module.expand(mac, inv.args, nested) == want, inv
    # the bodies stay as they were: no shared token was changed
    assert state == {n: [(t.kind, t.text, t.space, t.painted, t.paste_op) for t in m.body] for n, m in found.items()}


INCLUDE_EDGES = [
    b'#include <ATen/ops/add_native.h>\n  #  include "ATen/ops/mul_native.h "  \r\n#include <x_native.hpp>\n',
    b"#include <ATen/ops/a_native.h\\\n>\n#include <ATen/ops/\xe9_native.h>\n#include <b_native.h>\n#include <ATen/ops/sub_native.h>\n",
]


def _includes_reference(reader):
    """_Reader.includes as defined: every included header decoded and matched."""
    sc, found = reader.sc, []
    for ds, de in sc.directives:
        m = host_reader._INCLUDE.match(sc.code, ds, de)
        if not m:
            continue
        header = sc.data[m.start(1) : m.end(1)].decode("utf-8", "replace").strip()
        nm = host_reader._NATIVE_H.fullmatch(header)
        if nm:
            end = de
            while end > ds and sc.data[end - 1 : end] in (b"\r", b" ", b"\t"):
                end -= 1
            found.append(host_reader.NativeInclude(nm.group(1), header, reader.path, reader.span(ds, end)))
    return found


@pytest.mark.parametrize("data", INCLUDE_EDGES + [p.read_bytes() for p in HOST])
def test_native_includes_equal_the_every_header_reading(data):
    reader = host_reader._Reader(data, "f.mm")
    got = reader.includes(bytearray(reader.sc.code))
    assert got == _includes_reference(reader)
    assert got or data not in INCLUDE_EDGES


@pytest.mark.parametrize("data", LEAN_EDGES + [p.read_bytes() for p in HOST])
def test_keep_equals_launches_or_node_sites_everywhere(data):
    code = SourceFile(data).code
    keep, helpers = _keep(code), host_reader._launches(code)
    node_words = _NODE_WORDS_SUBITER if b"with_32bit_indexing" in code else host_sites._NODE_WORDS
    words = within(code, node_words + launch_shadow.dispatch_words())  # MPS023 reads a dispatch's launch sizes
    narrow = host_sites._NARROW_WORD

    def reference(s, e):  # a launch, a node word, or a narrowing type before a numel in its statement
        if helpers(s, e) or words(s, e):
            return True
        for m in re.finditer(rb"numel", code[:e]):
            if m.start() >= s:
                stmt = max(code.rfind(b";", s, m.start()), code.rfind(b"}", s, m.start()), s)
                if narrow.search(code, stmt, m.start()):
                    return True
        return False

    spans = [(m.end(), e) for m in re.finditer(rb"\)\s*\{", code) for e in (code.find(b"}", m.end()), len(code))]
    for s, e in spans:
        if e > s:
            assert bool(keep(s, e)) == reference(s, e), (s, e)

"""Host-file reader: hand-written fixtures (tests/data/host) and the real 2.6.0 tree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.model import HostFile, HostFunction
from migrate.source import SourceFile as scrub
from migrate.read import cpp_unit, host_reader
from migrate.read.host_reader import load_markers, read_host_file
from migrate.read.objc_neutral import neutralize
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.fuzzing import check_read, examples

DATA = Path(__file__).parent / "data" / "host"
MPS_DIR = "aten/src/ATen/native/mps"


def read(name: str) -> tuple[HostFile, bytes]:
    data = (DATA / name).read_bytes()
    return read_host_file(data, f"tests/data/host/{name}"), data


def line_of(data: bytes, needle: str, nth: int = 0) -> int:
    pos = -1
    for _ in range(nth + 1):
        pos = data.index(needle.encode(), pos + 1)
    return data.count(b"\n", 0, pos) + 1


def fn(hf: HostFile, name: str) -> HostFunction:
    found = [f for f in hf.functions if f.name == name]
    assert len(found) == 1, (name, [f.name for f in hf.functions])
    return found[0]


def text(data: bytes, span) -> str:
    return data[span.start : span.end].decode()


# ------------------------------------------------------------------ markers
def test_load_markers_reads_both_lists():
    m = load_markers()
    assert {"mpsgraph", "metal"} <= set(m)
    assert "mpsGraph" in m["mpsgraph"] and "LookUpOrCreateCachedGraph" in m["mpsgraph"]
    assert "exec_binary_kernel" in m["metal"] and "mtl_setBytes" in m["metal"]


# ------------------------------------------------------- legacy fixture
def test_legacy_functions_kinds_and_lines():
    hf, data = read("legacy_ops.mm")
    assert hf.errors == ()
    g = fn(hf, "graph_unary")
    assert (g.kind, g.is_static, g.span.line) == ("function", True, line_of(data, "static void graph_unary"))
    assert text(data, g.span).startswith("static void graph_unary(") and text(data, g.span).endswith("}")
    j = fn(hf, "jiggle_out_mps")
    assert (j.kind, j.span.line) == ("impl_func", line_of(data, "TORCH_IMPL_FUNC(jiggle_out_mps)"))
    assert fn(hf, "never_called_mps").kind == "function"
    # after @autoreleasepool, blocks, message sends, @[..], for-in and @available
    after = fn(hf, "after_objc_out_mps")
    assert after.span.line == line_of(data, "TORCH_IMPL_FUNC(after_objc_out_mps)")
    assert after.span.end_line == after.span.line + 2
    assert [f.name for f in hf.functions] == sorted((f.name for f in hf.functions), key=lambda n: fn(hf, n).span.start)


def test_legacy_macro_generated_functions():
    hf, data = read("legacy_ops.mm")
    frob = fn(hf, "frobnicate_out_mps")
    assert (frob.kind, frob.via_macro) == ("macro", "MAKE_GRAPH_UNARY_IMPL")
    assert frob.invocation == frob.span
    assert text(data, frob.span) == "MAKE_GRAPH_UNARY_IMPL(frobnicate_out_mps, frobnicate)"
    assert frob.span.line == line_of(data, "MAKE_GRAPH_UNARY_IMPL(frobnicate_out_mps")
    assert {"mpsGraph", "MPSGraph", "MPSGraphTensor"} <= frob.markers
    assert "frobnicateWithTensor" in frob.identifiers  # selector##WithTensor pasted
    assert "graph_unary" in frob.calls
    assert fn(hf, "twiddle_out_mps").span.line == frob.span.line + 1
    wobble = fn(hf, "wobble_out_mps")
    assert (wobble.kind, wobble.via_macro) == ("macro", "MAKE_COMPARE")
    assert text(data, wobble.span) == "MAKE_COMPARE(wobble_out_mps, wobble, Scalar);"  # ";" included
    assert "compare_Scalar" in wobble.calls
    assert "compare_Tensor" in fn(hf, "wibble_out_mps").calls


def test_legacy_markers_calls_identifiers():
    hf, _ = read("legacy_ops.mm")
    g = fn(hf, "graph_unary")
    assert {"LookUpOrCreateCachedGraph", "Placeholder", "runMPSGraph", "MPSGraphTensor"} <= g.markers
    assert not g.markers & load_markers()["metal"]
    assert {"LookUpOrCreateCachedGraph", "runMPSGraph", "getCurrentMPSStream"} <= g.calls
    j = fn(hf, "jiggle_out_mps")
    assert {"MPSGraph", "MPSGraphTensor"} <= j.markers
    assert {"constantWithScalar", "additionWithPrimaryTensor", "g"} <= j.identifiers  # from [g ...] sends
    assert "jiggle_out_mps" not in j.identifiers
    ids = hf.identifiers
    assert "never_called_mps" not in ids  # only its own definition names it
    assert "jiggle_out_mps" not in ids
    assert "compare_Scalar" in ids  # used through MAKE_COMPARE's token pasting
    assert "graph_unary" in ids
    assert "frobnicate_native" not in ids and "include" not in ids  # #include lines ignored
    assert "MAKE_COMPARE" in ids and "selector" in ids  # macro bodies and invocations count
    assert "frobnicate" in ids  # an argument used by the expansion (selector##WithTensor)
    # ... but an argument that IS the generated function's name is its declarator
    assert "frobnicate_out_mps" not in ids and "wobble_out_mps" not in ids
    assert "void" not in ids and "return" not in ids


def test_legacy_includes():
    hf, data = read("legacy_ops.mm")
    assert [i.op for i in hf.includes] == ["frobnicate", "twiddle"]
    inc = hf.includes[1]
    assert inc.header == "ATen/ops/twiddle_native.h"
    assert inc.span.line == line_of(data, "<ATen/ops/twiddle_native.h>")
    assert text(data, inc.span) == "#include <ATen/ops/twiddle_native.h>  // trailing comment stays on the line"
    assert inc.span.column == 1


def test_legacy_sites():
    hf, data = read("legacy_ops.mm")
    kinds = [(s.kind, s.span.line, s.function, s.detail) for s in hf.sites]
    assert kinds == [
        (
            "narrow_numel",
            line_of(data, "uint32_t n = output.numel()"),
            "jiggle_out_mps",
            "uint32_t n = output.numel();",
        ),
        ("readback", line_of(data, ".item<int64_t>()"), "jiggle_out_mps", ".item<int64_t>()"),
    ]


# ---------------------------------------------------- native (modern) fixture
def test_native_register_macro_generates_function_registration_and_kernel_call():
    hf, data = read("native_kernels.mm")
    assert hf.errors == ()
    spin = fn(hf, "spin_kernel_mps")
    assert (spin.kind, spin.via_macro, spin.is_static) == ("macro", "REGISTER_SPIN_DISPATCH", True)
    assert text(data, spin.span) == "REGISTER_SPIN_DISPATCH(spin);"
    assert "exec_unary_kernel" in spin.markers
    regs = {r.stub: r for r in hf.registrations}
    assert set(regs) == {"spin_stub", "twirl_stub", "wobble_stub", "scaled_stub", "fill_stub"}
    assert (regs["spin_stub"].function, regs["spin_stub"].macro, regs["spin_stub"].via_macro) == (
        "spin_kernel_mps",
        "REGISTER_DISPATCH",
        "REGISTER_SPIN_DISPATCH",
    )
    assert regs["spin_stub"].span == spin.span
    assert (regs["wobble_stub"].function, regs["wobble_stub"].macro) == ("wobble_mps_kernel", "REGISTER_DISPATCH")
    assert regs["wobble_stub"].via_macro is None
    assert text(data, regs["scaled_stub"].span) == "REGISTER_DISPATCH(scaled_stub, &scaled_kernel);"
    fill = regs["fill_stub"]
    assert (fill.function, fill.macro, fill.mps_only) == ("fill_kernel", "REGISTER_MPS_DISPATCH", True)
    assert not regs["wobble_stub"].mps_only
    calls = [(k.helper, k.name, k.function, k.shared_library) for k in hf.kernel_calls]
    assert calls == [
        ("exec_unary_kernel", "spin", "spin_kernel_mps", True),
        ("exec_unary_kernel", "twirl", "twirl_kernel_mps", True),
        ("exec_binary_kernel", "wobble", "wobble_mps_kernel", True),
        ("exec_binary_kernel", "", "scaled_kernel", True),  # name held in a variable
    ]
    assert hf.kernel_calls[2].span.line == line_of(data, 'lib.exec_binary_kernel(iter, "wobble")')
    assert {"spin_kernel_mps", "spin_stub"} <= hf.identifiers  # referenced by the expansion


def test_native_sites():
    hf, data = read("native_kernels.mm")
    got = [(s.kind, s.span.line, s.function, s.detail) for s in hf.sites]
    assert got == [
        ("subiter_tensor", line_of(data, "auto whole = sub.tensor(0)"), "fill_kernel", "sub.tensor(0)"),
        (
            "narrow_numel",
            line_of(data, "static_cast<uint32_t>(sub.tensor(1)"),
            "fill_kernel",
            "static_cast<uint32_t>(sub.tensor(1).numel())",
        ),
        (
            "subiter_tensor",
            line_of(data, "static_cast<uint32_t>(sub.tensor(1)"),
            "fill_kernel",
            "sub.tensor(1).numel()",
        ),
        # fill_kernel recurses with the sub-iterator: its own iter.tensor(0) is a sub-iterator's
        ("subiter_tensor", line_of(data, "auto out = iter.tensor(0)"), "fill_kernel", "iter.tensor(0)"),
        (
            "setbytes_chain",
            line_of(data, "mtl_setBytes(enc, numel, 1)"),
            "fill_kernel",
            "3 consecutive mtl_setBytes calls",
        ),
    ]
    chain = hf.sites[-1]
    assert chain.span.end_line == line_of(data, "mtl_setBytes<int32_t>(enc, 7, 3)")
    assert text(data, chain.span).endswith("mtl_setBytes<int32_t>(enc, 7, 3);")
    # dtype reads and checked_convert are fine
    assert not any(s.function == "checked_kernel" for s in hf.sites)


def test_free_exec_kernel_is_not_shared_library():
    src = b"""
static void exec_unary_kernel(const Tensor& self, const Tensor& out, const std::string& name) {
  uint64_t n = out.numel();
}
TORCH_IMPL_FUNC(erfinv_out_mps)(const Tensor& self, const Tensor& output_) {
  exec_unary_kernel(self, output_, "erfinv");
}
static void round_kernel(TensorIteratorBase& it, int64_t decimals) {
  lib.exec_unary_kernel(it, "round_decimals", Scalar(decimals), ScalarType::Long);
}
static void other_kernel(const Tensor& t) {
  other_lib->exec_binary_kernel(t, "odd");
}
"""
    hf = read_host_file(src, "x.mm")
    calls = [(k.helper, k.name, k.function, k.shared_library, k.span.line) for k in hf.kernel_calls]
    assert calls == [
        ("exec_unary_kernel", "erfinv", "erfinv_out_mps", False, 6),
        ("exec_unary_kernel", "round_decimals", "round_kernel", True, 9),
        ("exec_binary_kernel", "odd", "other_kernel", False, 12),  # first argument is no iterator
    ]
    assert hf.sites == ()  # a 64-bit copy of numel is no narrowing


# ---------------------------------------------------------- Objective-C
def test_objc_constructs_do_not_hide_functions():
    hf, data = read("objc_heavy.mm")
    assert hf.errors == ()
    assert [(f.name, f.span.line) for f in hf.functions] == [
        ("run_with_block", line_of(data, "void run_with_block")),
        ("build_library", line_of(data, "static id<MTLLibrary> build_library")),
        ("spin_out_mps", line_of(data, "Tensor& spin_out_mps")),
    ]
    assert fn(hf, "build_library").span.end_line == line_of(data, "return library;") + 1
    assert fn(hf, "spin_out_mps").markers >= {"mpsGraph", "MPSGraph", "MPSGraphTensor"}
    assert {"selectWithPredicateTensor", "mutableCopy", "graph"} <= fn(hf, "build_library").identifiers
    assert not {"R", "SPIN", "end", "interface", "__bridge"} & hf.identifiers


def test_category_implementation_with_sends_and_nested_sends():
    # an @implementation category whose methods send messages, then functions with nested sends
    src = (
        b"@implementation MPSGraph (Fixups)\n"
        b"- (MPSGraphTensor*)minOf:(MPSGraphTensor*)a other:(MPSGraphTensor*)b {\n"
        b"  if (([a dataType] & MPSDataTypeFloatBit) == 0) {\n"
        b"    return [self minimumWithPrimaryTensor:a secondaryTensor:b name:nil];\n"
        b"  }\n"
        b"  return [self minimumWithNaNPropagationWithPrimaryTensor:a secondaryTensor:b name:nil];\n"
        b"}\n@end\n\n"
        b"namespace at::native::mps {\n"
        b"void sync_with(dispatch_queue_t q, void (^block)()) {\n  dispatch_sync(q, ^() { block(); });\n}\n\n"
        b"MPSGraphTensorData* data_for(MPSStream* s, MPSNDArrayDescriptor* desc) {\n"
        b"  MPSNDArray* a = [[[MPSNDArray alloc] initWithDevice:s->device() descriptor:desc] autorelease];\n"
        b"  return [[[MPSGraphTensorData alloc] initWithMPSNDArray:a] autorelease];\n}\n\n"
        b"int after_them(int x) {\n  return x;\n}\n} // namespace at::native::mps\n"
    )
    hf = read_host_file(src, "u.mm")
    assert hf.errors == ()
    assert [(f.name, f.span.line) for f in hf.functions] == [("sync_with", 11), ("data_for", 15), ("after_them", 20)]
    assert {"MPSNDArray", "initWithDevice", "autorelease"} <= fn(hf, "data_for").identifiers


def test_columns_are_characters():
    src = 'void f(const Tensor& t) {\n  auto s = "héllo → wörld"; auto v = t.item<float>();\n}\n'
    hf = read_host_file(src.encode(), "c.mm")
    (site,) = [s for s in hf.sites if s.kind == "readback"]
    line = src.splitlines()[site.span.line - 1]
    assert site.span.column == line.index(".item") + 1  # characters, not bytes (the line has 3 multibyte ones)
    assert fn(hf, "f").span.column == 1


def test_inline_metal_raw_strings():
    hf, data = read("objc_heavy.mm")
    (metal,) = hf.inline_metal
    assert metal.variable == "SPIN_METAL"
    assert metal.text.startswith("\n#include <metal_stdlib>") and metal.text.endswith("}\n")
    assert text(data, metal.span) == metal.text
    assert metal.span.line == line_of(data, 'R"SPIN(')
    hf2 = read_host_file(
        b'static MetalShaderLibrary lib(R"METAL(kernel void k() {})METAL", 2);\nauto s = compile(R"(x)");\n', "y.mm"
    )
    assert [(m.variable, m.text) for m in hf2.inline_metal] == [("lib", "kernel void k() {}"), (None, "x")]


@pytest.mark.parametrize("name", ["legacy_ops.mm", "native_kernels.mm", "objc_heavy.mm"])
def test_neutralizer_keeps_offsets_and_lines(name):
    data = (DATA / name).read_bytes()
    sc = scrub(data)
    out = bytearray(neutralize(sc))
    assert len(out) == len(data)
    assert [m.start() for m in re.finditer(b"\n", out)] == [m.start() for m in re.finditer(b"\n", data)]
    for s, e in sc.directives:  # macro bodies are left alone
        out[s:e] = b" " * (e - s)
    assert b"@autoreleasepool" not in out and b"^" not in out.replace(b"bits ^ mask", b"")


# --------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "src",
    [
        b"",
        b'\xff\xfe\x00garbage{{{ ]]] ^^ @@ R"x(',
        b"#define MAKE(a) void a##_f() {}\nMAKE(x\n",
        b"TORCH_IMPL_FUNC(a)(const Tensor& x) { [foo bar:",
        'void caf\u00e9() { auto s = "\u00fc"; }\n'.encode(),
    ],
)
def test_bad_input_never_raises(src):
    hf = read_host_file(src, "bad.mm")
    assert isinstance(hf, HostFile) and hf.path == "bad.mm"
    check_read(hf, src, lambda: read_host_file(src, "bad.mm"))


HOST_SEED = (Path(__file__).parent / "data" / "host" / "native_kernels.mm").read_bytes()


@settings(max_examples=examples(40))
@given(
    st.integers(0, len(HOST_SEED)),
    st.integers(0, 8),
    st.sampled_from([b"{", b"}", b"(", b")", b"/*", b'"', b"\x00", b"\xff", b"#define X(", b"@", b"\\\n"]),
)
def test_edited_file_never_raises(at, cut, junk):
    # not checked: errors point at the edit (an unparsable region is reported from its first line)
    data = HOST_SEED[:at] + junk + HOST_SEED[at + cut :]
    check_read(read_host_file(data, "fuzz.mm"), data, lambda: read_host_file(data, "fuzz.mm"))


def test_non_utf8_is_reported_and_read_anyway():
    hf = read_host_file(b"// caf\xe9\nvoid after_mps() { foo(); }\n", "n.mm")
    assert [(e.line, e.column, e.message.startswith("not valid UTF-8")) for e in hf.errors] == [(1, 7, True)]
    assert [(f.name, f.span.line, f.calls) for f in hf.functions] == [("after_mps", 2, frozenset({"foo"}))]


def test_unterminated_generator_invocation_is_reported():
    hf = read_host_file(b"#define MAKE(a) void a##_f() {}\nMAKE(x\n", "u.mm")
    assert [(e.line, e.message) for e in hf.errors] == [(2, "macro invocation without closing parenthesis")]


def test_nested_and_recursive_generator_macros():
    src = (
        b"#define INNER(x) static void x##_inner() { lib.exec_unary_kernel(iter, #x); }\n"
        b"#define OUTER(x) INNER(x) REGISTER_DISPATCH(x##_stub, x##_inner)\n"
        b"#define LOOP_A(x) LOOP_B(x) void a_##x() {}\n"
        b"#define LOOP_B(x) LOOP_A(x)\n"
        b"OUTER(spin)\n"
        b"LOOP_A(1)\n"
    )
    hf = read_host_file(src, "n.mm")
    assert [(f.name, f.via_macro, f.span.line) for f in hf.functions] == [
        ("spin_inner", "OUTER", 5),
        ("a_1", "LOOP_A", 6),
    ]
    assert [(r.stub, r.function, r.macro, r.via_macro) for r in hf.registrations] == [
        ("spin_stub", "spin_inner", "REGISTER_DISPATCH", "OUTER")
    ]
    assert [(k.name, k.function) for k in hf.kernel_calls] == [("spin", "spin_inner")]


def test_macro_argument_count_mismatch_is_reported():
    src = b"#define MAKE(a, b) void a##_f() { b(); }\nMAKE(only_one)\nvoid after() {}\n"
    hf = read_host_file(src, "m.mm")
    assert [(e.line, "expects 2 arguments" in e.message) for e in hf.errors] == [(2, True)]
    assert {f.name for f in hf.functions} == {"only_one_f", "after"}


# ------------------------------------------------------- real 2.6.0 tree
def _host_files(root: Path) -> list[Path]:
    files = sorted(p for p in (root / MPS_DIR).rglob("*") if p.suffix in (".mm", ".cpp", ".h"))
    assert len(files) > 50
    return files


_IMPL = re.compile(r"^[ \t]*TORCH_IMPL_FUNC\s*\(\s*(\w+)\s*\)", re.M)
_HEAD = re.compile(
    r"^(?!(?:namespace|struct|class|union|enum|typedef|using|return|if|for|while|switch)\b)"
    r"[A-Za-z_][^=;{}()#\n]*?\b([A-Za-z_]\w*)\s*\(",
    re.M,
)


def _column0_definitions(data: bytes) -> set[tuple[str, int]]:
    """Conservative cross-check: definitions whose head starts at column 0 (code only)."""
    sc = scrub(data)
    code = bytearray(sc.code)
    for s, e in sc.directives:
        code[s:e] = re.sub(rb"[^\n]", b" ", bytes(code[s:e]))
    text = code.decode("latin-1")
    found = {(m.group(1), text.count("\n", 0, m.start()) + 1) for m in _IMPL.finditer(text)}
    for m in _HEAD.finditer(text):
        if m.group(1) == "TORCH_IMPL_FUNC":
            continue
        rest = text[m.end() :]
        semi, brace = rest.find(";"), rest.find("{")
        if brace < 0 or 0 <= semi < brace:
            continue
        if not re.search(r"\)\s*(?:const\s*|noexcept\s*|override\s*|->[^{]*)*$", rest[:brace]):
            continue  # a macro invocation followed by something else
        found.add((m.group(1), text.count("\n", 0, m.start()) + 1))
    return found


def test_real_tree_every_definition_is_extracted():
    root = pytorch_260_root()
    checked = 0
    for path in _host_files(root):
        data = path.read_bytes()
        hf = read_host_file(data, path.relative_to(root).as_posix())
        assert hf.errors == (), (path.name, hf.errors)
        for name, line in _column0_definitions(data):
            checked += 1
            assert any(f.name.lstrip("~") == name and f.span.line <= line <= f.span.end_line for f in hf.functions), (
                f"{path.name}:{line} {name} not extracted"
            )
    assert checked > 500


def test_real_tree_neutralizer_keeps_offsets_and_lines():
    root = pytorch_260_root()
    for path in _host_files(root):
        data = path.read_bytes()
        out = bytes(neutralize(scrub(data)))
        assert len(out) == len(data) and out.count(b"\n") == data.count(b"\n"), path.name
        assert [m.start() for m in re.finditer(b"\n", out)] == [m.start() for m in re.finditer(b"\n", data)]


def _real(root: Path, name: str) -> tuple[HostFile, bytes]:
    path = root / MPS_DIR / name
    data = path.read_bytes()
    return read_host_file(data, path.relative_to(root).as_posix()), data


def test_real_binary_ops_macro_functions():
    root = pytorch_260_root()
    hf, data = _real(root, "operations/BinaryOps.mm")
    text_ = data.decode()
    for macro in (
        "CREATE_MPS_STRUCTURED_BINARY_OP_FUNC",
        "CREATE_MPS_STRUCTURED_BOOLEAN_OP_FUNC",
        "CREATE_MPS_BINARY_COMPARISON_OP_FUNC",
    ):
        invoked = re.findall(rf"^{macro}\((\w+),", text_, re.M)
        assert invoked
        generated = [f for f in hf.functions if f.via_macro == macro]
        assert [f.name for f in generated] == invoked
        assert all(f.kind == "macro" and f.span.line == line_of(data, f"{macro}({f.name},") for f in generated)
        assert all("mpsGraph" in f.markers for f in generated)
    assert {"minimum_out_mps", "maximum_out_mps", "pow_tensor_scalar_out_mps", "pow_tensor_tensor_out_mps"} <= {
        f.name for f in hf.functions if f.via_macro == "CREATE_MPS_STRUCTURED_BINARY_OP_FUNC"
    }
    assert "binaryOpTensor" in fn(hf, "minimum_out_mps").calls
    assert "binaryOpScalar" in fn(hf, "pow_tensor_scalar_out_mps").calls
    assert fn(hf, "atan2_out_mps").kind == "impl_func"
    assert "atan2" in {i.op for i in hf.includes}


def test_real_unary_ops_macro_functions():
    root = pytorch_260_root()
    hf, data = _real(root, "operations/UnaryOps.mm")
    invoked = re.findall(r"^CREATE_MPS_STRUCTURED_UNARY_TORCH_IMPL_FUNC\((\w+),", data.decode(), re.M)
    assert len(invoked) > 10 and "exp2_out_mps" in invoked and "atanh_out_mps" in invoked
    generated = [f.name for f in hf.functions if f.via_macro == "CREATE_MPS_STRUCTURED_UNARY_TORCH_IMPL_FUNC"]
    assert generated == invoked
    rounding = [f.name for f in hf.functions if f.via_macro == "CREATE_MPS_STRUCTURED_UNARY_ROUNDING_TORCH_IMPL_FUNC"]
    assert rounding == ["ceil_out_mps", "floor_out_mps", "round_out_mps"]
    # invocations without ";" must not swallow the definition that follows them
    rsqrt = fn(hf, "rsqrt_out_mps")
    assert (rsqrt.kind, rsqrt.span.line) == ("impl_func", line_of(data, "TORCH_IMPL_FUNC(rsqrt_out_mps)"))


def test_real_unary_kernel_and_registrations():
    root = pytorch_260_root()
    hf, _ = _real(root, "operations/UnaryKernel.mm")
    assert [(k.name, k.function, k.shared_library) for k in hf.kernel_calls] == [
        ("erfinv", "erfinv_out_mps", False),
        ("exp", "exp_out_mps", False),
        ("tanh", "tanh_out_mps", False),
    ]
    assert "narrow_numel" in {s.kind for s in hf.sites}
    bw, _ = _real(root, "operations/BitwiseOps.mm")
    assert {(r.stub, r.function, r.mps_only) for r in bw.registrations} == {
        ("lshift_stub", "lshift_kernel_mps", True),
        ("rshift_stub", "rshift_kernel_mps", True),
    }
    ix, _ = _real(root, "operations/Indexing.mm")
    assert ("index_stub", "index_kernel_mps") in {(r.stub, r.function) for r in ix.registrations}
    uc, _ = _real(root, "UnaryConstants.h")
    assert [m.variable for m in uc.inline_metal] == ["UNARY_KERNEL_TEMPLATE"]
    assert "kernel void" in uc.inline_metal[0].text


def test_macro_paste_across_a_line_continuation():
    src = (
        b"#define MAKE(func_out, sel)                       \\\n"
        b"  TORCH_IMPL_FUNC(func_out)(const Tensor& self) {  \\\n"
        b"    [mpsGraph sel##\\\n"
        b"WithTensor:self name:nil];                         \\\n"
        b"  }\n"
        b"MAKE(exp_out_mps, exponent)\n"
    )
    hf = read_host_file(src, "a.mm")
    (f,) = [f for f in hf.functions if f.name == "exp_out_mps"]
    assert "exponentWithTensor" in f.identifiers


# ------------------------------------------------- lean parsing (skipped bodies)
class _WholeUnit(cpp_unit.Unit):
    """The parse without skipped bodies: what the lean parse must agree with."""

    def __init__(self, sc, blanks=(), keep=None):
        super().__init__(sc, blanks)


def _lean_and_whole(monkeypatch, data: bytes, path: str) -> tuple[HostFile, HostFile]:
    lean = read_host_file(data, path)
    with monkeypatch.context() as m:
        m.setattr(host_reader, "Unit", _WholeUnit)
        whole = read_host_file(data, path)
    return lean, whole


def test_lean_parse_skips_bodies_nothing_reads_and_keeps_the_rest():
    src = (
        b"static void graph_only(const Tensor& t) {\n  int n = 1; auto g = [mpsGraph foo:t];\n}\n"
        b'void launcher(TensorIteratorBase& iter) {\n  lib.exec_unary_kernel(iter, "neg");\n}\n'
        b"void narrow(const Tensor& t) {\n  uint32_t n = t.numel();\n}\n"
        b"void wide(const Tensor& t) {\n  int64_t n = t.numel(); for (int i = 0; i < t.numel(); i++) {}\n}\n"
    )
    sc = scrub(src)
    regions, stops = cpp_unit.lean_bodies(sc, host_reader._keep(sc.code))
    skipped = b"".join(src[s:e] for s, e in regions)
    assert b"mpsGraph" in skipped and b"int64_t" in skipped  # graph code; a numel that narrows nothing
    assert b"exec_unary_kernel" not in skipped and b"uint32_t" not in skipped  # read as nodes
    assert len(stops) == 2
    lean = read_host_file(src, "ops/Lean.mm")
    assert [f.name for f in lean.functions] == ["graph_only", "launcher", "narrow", "wide"]
    assert [(c.name, c.function) for c in lean.kernel_calls] == [("neg", "launcher")]
    assert [(s.kind, s.function) for s in lean.sites] == [("narrow_numel", "narrow")]
    assert "mpsGraph" in fn(lean, "graph_only").identifiers  # identifiers come from the code, not the parse


@pytest.mark.parametrize("where", ["fixtures", "2.6.0", "2.7.0a0"])
def test_lean_parse_reads_every_host_file_as_the_whole_parse_does(monkeypatch, where):
    if where == "fixtures":
        files = sorted(
            p
            for p in (Path(__file__).parents[1] / "fixtures").rglob("*")
            if p.suffix in (".mm", ".cpp", ".h") and "/mps/" in p.as_posix()
        )
        files += sorted(DATA.glob("*"))
    else:
        files = _host_files(pytorch_260_root() if where == "2.6.0" else pytorch_270a0_root())
    assert len(files) > 20
    for path in files:
        lean, whole = _lean_and_whole(monkeypatch, path.read_bytes(), path.as_posix())
        assert lean == whole, path

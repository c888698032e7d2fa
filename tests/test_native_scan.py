"""migrate.read.native_scan: what a shared kernel's native definition reaches on MPS."""

from __future__ import annotations

import pytest

from migrate.read.native_scan import scan_native_file
from migrate.source.span import Span


def scan(src: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    _, kernels = scan_native_file("aten/src/ATen/native/Ops.cpp", src.encode())
    return {name: (stubs, at_calls) for name, stubs, at_calls in kernels}


def test_header_declarations():
    declared, _ = scan_native_file(
        "x.h", b"#pragma once\nDECLARE_DISPATCH(fn_t, foo_stub)\n\nDECLARE_DISPATCH(fn_t, bar_stub)\n"
    )
    assert declared == (
        ("foo_stub", Span("x.h", 2, 24, 2, 32, 36, 44)),
        ("bar_stub", Span("x.h", 4, 24, 4, 32, 70, 78)),
    )


def test_declared_stub_span_counts_characters_and_points_at_the_name():
    data = "#pragma once\nDECLARE_DISPATCH(/* é */ fn_t,\n    /* ü */ foo_stub)\n".encode()
    ((stub, span),), _ = scan_native_file("y.h", data)
    assert stub == "foo_stub" and data[span.start : span.end] == b"foo_stub"
    assert (span.path, span.line, span.column, span.end_column) == ("y.h", 3, 13, 21)


def test_composite_wrapper_calls_an_operator_and_no_stub():
    got = scan(
        "Tensor rem(const Scalar& self, const Tensor& other) {\n"
        "  return at::rem(wrapped_scalar_tensor(self), other);\n}\n"
    )
    assert got == {"rem": ((), ("rem",))}


def test_called_and_passed_stubs_count_parameters_named_like_stubs_do_not():
    got = scan(
        "template <typename S>\nvoid impl(const Tensor& t, S& reduce_stub) {\n  reduce_stub(t.device().type(), t);\n}\n"
        "TORCH_IMPL_FUNC(sc_out)(const Tensor& self, const Tensor& out) {\n  impl(self, sc_stub);\n}\n"
        "TORCH_IMPL_FUNC(direct_out)(const Tensor& self, const Tensor& out) {\n  direct_stub(kCPU, self);\n}\n"
    )
    assert got["sc_out"][0] == ("sc_stub",)
    assert got["direct_out"][0] == ("direct_stub",)
    assert "impl" not in got  # its only "stub" is a parameter


def test_stub_behind_another_device_is_not_reached():
    got = scan(
        "static bool fast_path(const Tensor& self) {\n"
        "  if (!self.device().is_cpu()) {\n    return false;\n  }\n  return self.is_contiguous();\n}\n"
        "TORCH_IMPL_FUNC(a_out)(const Tensor& self, const Tensor& out) {\n"
        "  if (fast_path(out)) {\n    a_fast_stub(self.device().type(), out);\n    return;\n  }\n"
        "  a_stub(self.device().type(), out);\n}\n"
        "TORCH_IMPL_FUNC(b_out)(const Tensor& self, const Tensor& out) {\n"
        "  bool det = ctx.deterministic() && (self.device().type() == DeviceType::CUDA || self.device().type() == DeviceType::XPU);\n"
        "  if (det && self.defined()) {\n    helper(self);\n  } else {\n    b_stub(self.device().type(), out);\n  }\n"
        "  if (self.is_cuda()) b_cuda_stub(kCUDA, out);\n}\n"
        "void helper(const Tensor& t) {\n  index_put_stub(t.device().type(), t);\n}\n"
    )
    assert got["a_out"][0] == ("a_stub",)
    assert got["b_out"][0] == ("b_stub",)  # helper's index_put_stub only under det; else branch reached
    assert got["helper"][0] == ("index_put_stub",)


def test_conditions_that_also_hold_on_mps_keep_the_stub():
    got = scan(
        "TORCH_IMPL_FUNC(c_out)(const Tensor& self, const Tensor& out) {\n"
        "  if (!self.is_cpu()) {\n    c1_stub(kMPS, out);\n  }\n"
        "  if (self.is_cpu() || self.numel() > 4) {\n    c2_stub(kMPS, out);\n  }\n"
        "  if (self.device().type() != DeviceType::CPU) c3_stub(kMPS, out);\n}\n"
    )
    assert got["c_out"][0] == ("c1_stub", "c2_stub", "c3_stub")


def test_stubs_of_same_file_helpers_are_followed():
    got = scan(
        "static void inner(const Tensor& t) {\n  deep_stub(t.device().type(), t);\n}\n"
        "static void middle(const Tensor& t) {\n  inner(t);\n}\n"
        "Tensor& d_out(const Tensor& self, Tensor& out) {\n  middle(out);\n  return out;\n}\n"
    )
    assert got["d_out"][0] == ("deep_stub",)


def test_a_stub_not_named_stub_is_found_by_its_device_argument():
    got = scan(
        "Tensor& w_out(const Tensor& c, Tensor& out) {\n  auto iter = make_iter(c, out);\n"
        "  where_kernel(iter.device_type(), iter);\n  if (c.numel() > 0) {\n    fill_kernel(kCPU, out);\n  }\n"
        "  return out;\n}\n"
    )
    assert got["w_out"][0] == ("fill_kernel", "where_kernel")  # the index keeps those declared as stubs


def test_comments_and_strings_are_not_code():
    declared, _ = scan_native_file("x.h", b"//   DECLARE_DISPATCH(fn_type, stub)\nDECLARE_DISPATCH(fn_t, real_stub)\n")
    assert [(stub, span.line) for stub, span in declared] == [("real_stub", 2)]
    got = scan(
        "Tensor& soft_out(const Tensor& self, Tensor& out) {\n"
        "  // out = at::log1p(at::exp(-self)); fill_stub would be wrong here\n"
        '  TORCH_CHECK(true, "at::exp(x) is not called");\n'
        "  return at::neg_out(out, self);\n}\n"
    )
    assert got == {"soft_out": ((), ("neg_out",))}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_native_source_that_cannot_be_scanned_is_an_error_and_the_rest_still_count(monkeypatch, jobs):
    """load_tree scans the native sources as parse jobs (on either process): one that fails becomes a partial
    ParseError naming it, never a traceback, and the other sources' stub facts are read as without it."""
    from migrate import cache, parse_pool
    from migrate.read import native_scan
    from migrate.tree import load_tree
    from tests.helpers import MINI

    monkeypatch.setenv("MPS_MIGRATE_JOBS", jobs)
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    with cache.disable_cache():
        good = load_tree(MINI)
    real = native_scan.scan_native_file

    def failing(rel, data):
        if rel.endswith(".cpp"):
            raise ValueError("too deep")
        return real(rel, data)

    monkeypatch.setattr(native_scan, "scan_native_file", failing)
    with cache.disable_cache():
        tree = load_tree(MINI)
    errors = [e for e in tree.errors if e.message.startswith("could not scan")]
    assert [(e.path, e.line, e.message, e.partial) for e in errors] == [
        ("aten/src/ATen/native/BinaryOps.cpp", 1, "could not scan: too deep", True)
    ]
    assert good.cpu_stub_calls and not tree.cpu_stub_calls and not tree.native_at_calls
    assert tree.declared_stubs == good.declared_stubs and good.declared_stubs  # the header still counts


MACRO_IMPLS = """
#define MAKE_IMPL(out_name, the_stub)                                       \\
TORCH_IMPL_FUNC(out_name) (const Tensor& a, const Tensor& b, const Tensor& r) { \\
  the_stub(device_type(), *this);                                          \\
}

MAKE_IMPL(wobble_out, wobble_stub)
MAKE_IMPL(jiggle_out, jiggle_stub)

Tensor& wobble_out(const Tensor& a, const Scalar& s, Tensor& r) {
  return at::wobble_out(r, a, wrapped_scalar_tensor(s));
}
"""


def test_a_structured_kernel_a_file_local_macro_writes_reaches_its_stub():
    """The macro's TORCH_IMPL_FUNC, expanded at each use, reaches the stub it names, even where a plain function
    of the same name (a Scalar overload) only calls the operator again."""
    got = scan(MACRO_IMPLS)
    assert got["wobble_out"] == (("wobble_stub",), ("wobble_out",))
    assert got["jiggle_out"] == (("jiggle_stub",), ())


def test_a_macro_without_an_impl_func_or_used_with_other_arity_expands_to_nothing():
    src = "#define TWICE(x) x; x\nTWICE(foo_stub)\n" + MACRO_IMPLS.replace(
        "MAKE_IMPL(jiggle_out, jiggle_stub)", "MAKE_IMPL(jiggle_out)"
    )
    got = scan(src)
    assert "jiggle_out" not in got and "x" not in got

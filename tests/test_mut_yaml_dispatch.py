"""The yaml reader's dispatch lines: keys, kernels, exact spans and errors, on the fast path and the line scanner."""

from __future__ import annotations

import pytest

from migrate.model import DispatchLine, Span
from migrate.read.yaml_reader import _Scanner, effective_dispatch, read_native_yaml

HEAD = "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
CANONICAL = (
    "# leading comment\n" + HEAD + "    CPU: f_cpu\n"
    "    CUDA, MPS: f_shared  # mps-migrate: ignore[MPS002]\n"
    "    # a comment line\n"
    "\n"
    "    SparseCPU, SparseCUDA, QuantizedCPU: at::native::f_sparse\n"
    "  tags: pointwise\n"
    "\n"
    "- func: g(Tensor self) -> Tensor\n"
    "  dispatch:\n"
    "    CompositeExplicitAutograd: g  # mps-migrate: ignore\n"
)


def both_paths(text: str):
    data = text.encode()
    fast = _Scanner(data, "n.yaml").run(fast=True)
    slow = _Scanner(data, "n.yaml").run(fast=False)
    assert fast == slow
    return data, fast


def check_span(data: bytes, span: Span, text: str) -> None:
    """Bytes, line and character columns of ``span`` all point at ``text``."""
    assert data[span.start : span.end].decode() == text
    assert span.end_line == span.line and span.path == "n.yaml"
    ls = sum(len(x) + 1 for x in data.split(b"\n")[: span.line - 1])
    line = data[ls : data.index(b"\n", ls)].decode()
    assert line[span.column - 1 : span.end_column - 1] == text
    assert len(data[ls : span.start].decode()) == span.column - 1


def check_line(data: bytes, d: DispatchLine, keys: tuple[str, ...], kernel: str, whole: str) -> None:
    assert (d.keys, d.kernel) == (keys, kernel)
    check_span(data, d.span, whole)
    check_span(data, d.kernel_span, kernel)
    assert len(d.key_spans) == len(keys)
    for k, s in zip(keys, d.key_spans):
        check_span(data, s, k)


def test_canonical_dispatch_lines_on_both_paths():
    data, y = both_paths(CANONICAL)
    f, g = y.entries
    assert not y.errors
    cpu, shared, sparse = f.dispatch
    check_line(data, cpu, ("CPU",), "f_cpu", "CPU: f_cpu")
    check_line(data, shared, ("CUDA", "MPS"), "f_shared", "CUDA, MPS: f_shared")
    check_line(
        data,
        sparse,
        ("SparseCPU", "SparseCUDA", "QuantizedCPU"),
        "at::native::f_sparse",
        "SparseCPU, SparseCUDA, QuantizedCPU: at::native::f_sparse",
    )
    assert [d.span.line for d in f.dispatch] == [4, 5, 8]
    (gd,) = g.dispatch
    check_line(data, gd, ("CompositeExplicitAutograd",), "g", "CompositeExplicitAutograd: g")
    assert gd.span.line == 13
    assert effective_dispatch(f) == {
        "CPU": "f_cpu",
        "CUDA": "f_shared",
        "MPS": "f_shared",
        "SparseCPU": "f_sparse",
        "SparseCUDA": "f_sparse",
        "QuantizedCPU": "f_sparse",
    }


def test_fast_path_spans_in_a_later_entry_after_non_ascii_text():
    text = "- func: a(Tensor x) -> Tensor  # é\n  dispatch:\n    CPU: a_cpu\n\n" + HEAD + "    CPU, MPS: f_k\n"
    data, y = both_paths(text)
    check_line(data, y.entries[1].dispatch[0], ("CPU", "MPS"), "f_k", "CPU, MPS: f_k")
    assert y.entries[1].dispatch[0].span.line == 7


@pytest.mark.parametrize(
    "line,keys,kernel,whole",
    [
        ("CPU,CUDA:  f_k", ("CPU", "CUDA"), "f_k", "CPU,CUDA:  f_k"),
        ("CPU ,  CUDA : f_k  # x", ("CPU", "CUDA"), "f_k", "CPU ,  CUDA : f_k"),
        ('CPU: "f_k"', ("CPU",), "f_k", 'CPU: "f_k"'),
        ("XLA, CPU: f_k", ("XLA", "CPU"), "f_k", "XLA, CPU: f_k"),
        ("CPU, MPS: 'f_k'  # mps-migrate: ignore[MPS010, MPS002]", ("CPU", "MPS"), "f_k", "CPU, MPS: 'f_k'"),
    ],
)
def test_line_scanner_dispatch_lines(line, keys, kernel, whole):
    data, y = both_paths(HEAD + "    " + line + "\n")
    (d,) = y.entries[0].dispatch
    assert (d.keys, d.kernel) == (keys, kernel)
    check_span(data, d.span, whole)
    assert data[d.kernel_span.start : d.kernel_span.end] == kernel.encode()
    for k, s in zip(keys, d.key_spans):
        check_span(data, s, k)


def test_non_ascii_columns_count_characters():
    text = HEAD + "    CPU: f_cpu  # ünï\n    MPS: 'fé'\n"
    data, y = both_paths(text)
    cpu = y.entries[0].dispatch[0]
    check_line(data, cpu, ("CPU",), "f_cpu", "CPU: f_cpu")
    (err,) = y.errors
    assert (err.line, err.column) == (4, 11)  # the kernel inside the quotes
    assert err.message == "kernel 'fé' is not a (namespaced) C++ identifier"


@pytest.mark.parametrize(
    "line,column,message",
    [
        ("CPU f_cpu", 5, "dispatch line without ':' (expected 'KEY1, KEY2: kernel')"),
        ("CPU:f_cpu", 8, "expected a space after ':' in dispatch line"),
        ("CPU:f", 8, "expected a space after ':' in dispatch line"),
        ("'CPU': f_cpu", 5, "quoted dispatch keys are not supported"),
        ('"CPU": f_cpu', 5, "quoted dispatch keys are not supported"),
        ("CPU: ''", 11, "dispatch line needs a kernel name after ':'"),
        ("CPU, C-UDA: f", 10, "bad dispatch key 'C-UDA'"),
        ("CPU,  : f", 11, "bad dispatch key ''"),
        ("CPU: f g", 10, "kernel 'f g' is not a (namespaced) C++ identifier"),
    ],
)
def test_dispatch_line_errors_name_the_column(line, column, message):
    got = read_native_yaml((HEAD + "    MPS: ok_mps\n    " + line + "\n").encode(), "n.yaml")
    assert [(e.line, e.column, e.message) for e in got.errors] == [(4, column, message)]
    assert got.entries[0].dispatch[0].kernel == "ok_mps"


def test_a_dispatch_line_with_an_error_keeps_its_valid_kernel_out():
    got = read_native_yaml((HEAD + "    CPU: f g\n    MPS: m\n").encode(), "n.yaml")
    assert [(d.keys, d.kernel) for d in got.entries[0].dispatch] == [(("CPU",), "f g"), (("MPS",), "m")]


def test_a_dispatch_key_with_invalid_utf8_is_reported_not_raised():
    got = read_native_yaml(HEAD.encode() + b"    C\xffPU: f\n    MPS: m\n", "n.yaml")
    assert [(e.line, e.message) for e in got.errors] == [(3, "invalid UTF-8 byte"), (3, "bad dispatch key 'C\ufffdPU'")]
    assert [d.kernel for d in got.entries[0].dispatch] == ["m"]

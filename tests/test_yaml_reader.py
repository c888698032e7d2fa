"""Unit tests of the native_functions.yaml reader on small hand-written snippets.

Every snippet is read twice: by the public reader (fast path for canonical
entries) and by the line scanner alone; both must agree.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from migrate.model import DispatchLine, NativeEntry, NativeYaml, Span
from migrate.read import yaml_fast, yaml_reader
from migrate.read.yaml_reader import effective_dispatch, read_native_yaml, read_native_yaml_file
from migrate.read.yaml_schema import schema_is_out, split_op_name

PATH = "aten/src/ATen/native/native_functions.yaml"
DATA = Path(__file__).parent / "data" / "yaml"


def read(text: str | bytes) -> tuple[bytes, NativeYaml]:
    data = text.encode() if isinstance(text, str) else text
    got = read_native_yaml(data, PATH)
    assert got == yaml_reader._Scanner(data, PATH).run(fast=False), "fast path and line scanner disagree"
    return data, got


def one(text: str | bytes) -> tuple[bytes, NativeEntry]:
    data, got = read(text)
    assert got.errors == ()
    assert len(got.entries) == 1
    return data, got.entries[0]


def text_of(data: bytes, span: Span) -> str:
    return data[span.start : span.end].decode()


def error_lines(got: NativeYaml) -> list[int]:
    return [e.line for e in got.errors]


ATAN2 = """\
# leading comment

- func: atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  device_check: NoCheck   # TensorIterator
  dispatch:
    CPU, CUDA: atan2_out
    MPS: atan2_out_mps
  tags: [core, pointwise]

- func: atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)
  structured_delegate: atan2.out
  variants: method
  tags: pointwise

"""


# ------------------------------------------------------------------ basics
def test_entries_names_and_flags() -> None:
    data, got = read(ATAN2)
    assert got.errors == () and got.path == PATH
    out, inplace = got.entries
    assert (out.name, out.overload, out.overload_name) == ("atan2", "out", "atan2.out")
    assert out.func == "atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"
    assert out.func_line == 3 and out.dispatch_line == 7
    assert out.structured and out.structured_inherits == "TensorIteratorBase"
    assert out.structured_delegate is None and out.is_out and not out.is_inplace
    assert out.tags == ("core", "pointwise")
    assert (inplace.name, inplace.overload) == ("atan2_", "")
    assert inplace.is_inplace and not inplace.is_out and not inplace.structured
    assert inplace.structured_delegate == "atan2.out" and inplace.tags == ("pointwise",)
    assert inplace.dispatch == () and inplace.dispatch_line is None


def test_entry_span_covers_entry_without_trailing_blank_lines() -> None:
    data, got = read(ATAN2)
    out, inplace = got.entries
    assert text_of(data, out.span).startswith("- func: atan2.out(")
    assert text_of(data, out.span).endswith("tags: [core, pointwise]")
    assert (out.span.line, out.span.column, out.span.end_line) == (3, 1, 10)
    assert out.span.end_column == len("  tags: [core, pointwise]") + 1
    assert text_of(data, inplace.span).endswith("  tags: pointwise")
    assert inplace.span.end_line == 15


def test_dispatch_line_spans_are_exact() -> None:
    data, got = read(ATAN2)
    shared, mps = got.entries[0].dispatch
    assert shared.keys == ("CPU", "CUDA") and shared.kernel == "atan2_out"
    assert text_of(data, shared.span) == "CPU, CUDA: atan2_out"
    assert [text_of(data, s) for s in shared.key_spans] == ["CPU", "CUDA"]
    assert text_of(data, shared.kernel_span) == "atan2_out"
    assert (shared.span.line, shared.span.column, shared.span.end_column) == (8, 5, 25)
    assert (shared.key_spans[1].column, shared.kernel_span.column) == (10, 16)
    assert text_of(data, mps.kernel_span) == "atan2_out_mps" and mps.span.line == 9
    assert got.entries[0].kernel_for("MPS") is mps


@pytest.mark.parametrize(
    "line, keys",
    [
        ("CPU,CUDA: foo", ("CPU", "CUDA")),
        ("CPU, CUDA , MPS: foo", ("CPU", "CUDA", "MPS")),
        ("CPU ,CUDA,  MPS  : foo", ("CPU", "CUDA", "MPS")),
        ("CompositeExplicitAutograd: foo", ("CompositeExplicitAutograd",)),
    ],
)
def test_comma_splitting_and_odd_spacing(line: str, keys: tuple[str, ...]) -> None:
    data, e = one(f"- func: f(Tensor x) -> Tensor\n  dispatch:\n    {line}\n")
    (d,) = e.dispatch
    assert d.keys == keys
    assert [text_of(data, s) for s in d.key_spans] == list(keys)
    assert text_of(data, d.span) == line and text_of(data, d.kernel_span) == "foo"
    # torchgen's rule on the key string PyYAML sees
    (yaml_keys,) = yaml.safe_load(data)[0]["dispatch"]
    assert tuple(k.strip() for k in yaml_keys.split(",")) == keys


def test_namespaced_kernel_kept_as_written() -> None:
    data, e = one("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: at::native::f_cpu\n    CUDA: custom::f_cuda\n")
    cpu, cuda = e.dispatch
    assert cpu.kernel == "at::native::f_cpu" and cpu.kernel_name == "f_cpu"
    assert text_of(data, cpu.kernel_span) == "at::native::f_cpu"
    assert effective_dispatch(e) == {"CPU": "f_cpu", "CUDA": "f_cuda"}


def test_comments_and_blank_lines_inside_dispatch_block() -> None:
    text = (
        "- func: f(Tensor x) -> Tensor\n"
        "  dispatch:\n"
        "    # a comment at block indentation\n"
        "# a comment at column 1\n"
        "\n"
        "    CPU: f_cpu  # trailing comment\n"
        "          # a deeper comment\n"
        "    MPS: f_mps\n"
        "  variants: function\n"
    )
    data, e = one(text)
    assert [(d.keys, d.kernel, d.span.line) for d in e.dispatch] == [(("CPU",), "f_cpu", 6), (("MPS",), "f_mps", 8)]
    assert text_of(data, e.dispatch[0].span) == "CPU: f_cpu"
    assert yaml.safe_load(data)[0]["dispatch"] == {"CPU": "f_cpu", "MPS": "f_mps"}


def test_quoted_func_strings() -> None:
    data, got = read(
        '- func: "g.Scalar(Tensor self, str mode=\\"x\\") -> Tensor"  # quoted\n'
        "  dispatch:\n"
        "    CPU: 'g_cpu'\n"
        "- func: 'h(Tensor self, str s=''y'') -> Tensor'\n"
    )
    assert got.errors == ()
    g, h = got.entries
    assert g.func == 'g.Scalar(Tensor self, str mode="x") -> Tensor'
    assert (g.name, g.overload) == ("g", "Scalar")
    assert h.func == "h(Tensor self, str s='y') -> Tensor"
    loaded = yaml.safe_load(data)
    assert [g.func, h.func] == [loaded[0]["func"], loaded[1]["func"]]
    (d,) = g.dispatch
    assert d.kernel == "g_cpu" and text_of(data, d.kernel_span) == "g_cpu" and text_of(data, d.span) == "CPU: 'g_cpu'"


@pytest.mark.parametrize(
    "tags_text, tags",
    [
        ("  tags: core\n", ("core",)),
        ("  tags: [core, pointwise]\n", ("core", "pointwise")),
        ("  tags: [ core,pointwise ]  # x\n", ("core", "pointwise")),
        ("  tags: []\n", ()),
        ("  tags:\n  - core\n  - pointwise\n", ("core", "pointwise")),
        ("  tags:\n    - reduction\n", ("reduction",)),
        ("  tags: dynamic_output_shape # the shape is data dependent\n", ("dynamic_output_shape",)),
    ],
)
def test_tags_forms(tags_text: str, tags: tuple[str, ...]) -> None:
    data, e = one("- func: f(Tensor x) -> Tensor\n" + tags_text + "  variants: function\n")
    assert e.tags == tags
    loaded = yaml.safe_load(data)[0]["tags"]
    assert tuple([loaded] if isinstance(loaded, str) else loaded) == tags


def test_other_keys_precomputed_ufunc_and_flags() -> None:
    text = (
        "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n"
        "  structured: True\n"
        "  precomputed:\n"
        "  - dim -> int dim\n"
        "  ufunc_inner_loop:\n"
        "    Generic: add (AllAndComplex, BFloat16, Half)\n"
        "    ScalarOnly: add (Bool)\n"
        "  dispatch:\n"
        "    SparseCPU: add_out_sparse_cpu\n"
        "  cpp_no_default_args: ['a', \"b\"]\n"
        "- func: _backward(Tensor self) -> ()\n"
        "  manual_kernel_registration: true\n"
    )
    data, got = read(text)
    assert got.errors == ()
    add, bwd = got.entries
    assert add.structured and add.ufunc_inner_loop and add.is_out
    assert effective_dispatch(add) == {
        "SparseCPU": "add_out_sparse_cpu",
        "CPU": "ufunc_add_CPU",
        "CUDA": "ufunc_add_CUDA",
    }
    assert bwd.manual_kernel_registration and not bwd.is_out
    assert effective_dispatch(bwd) == {"CompositeImplicitAutograd": "_backward"}


# ------------------------------------------------------------ schema bits
@pytest.mark.parametrize(
    "func, name, overload, inplace, out",
    [
        ("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "add_", "Tensor", True, False),
        (
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
            "add",
            "out",
            False,
            True,
        ),
        (
            "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
            "max",
            "dim_max",
            False,
            True,
        ),
        (
            "split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()",
            "split_copy",
            "Tensor_out",
            False,
            True,
        ),
        (
            "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
            "_foreach_add_",
            "List",
            True,
            False,
        ),
        ("__iand__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", "__iand__", "Scalar", False, False),
        (
            "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
            "resize_",
            "",
            True,
            False,
        ),
        ("relu(Tensor self) -> Tensor", "relu", "", False, False),
        ("aten::sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "sin", "out", False, True),
        ("_amp_foreach(Tensor(a!)[] self, *, Tensor found) -> ()", "_amp_foreach", "", False, False),
    ],
)
def test_schema_head_inplace_and_out(func: str, name: str, overload: str, inplace: bool, out: bool) -> None:
    _, e = one(f"- func: {func}\n")
    assert (e.name, e.overload, e.is_inplace, e.is_out) == (name, overload, inplace, out)
    assert split_op_name(func) == (name, overload) and schema_is_out(func) == out


# --------------------------------------------------- effective dispatch
@pytest.mark.parametrize(
    "body, expected",
    [
        ("", {"CompositeImplicitAutograd": "f"}),
        ("  dispatch:\n", {"CompositeImplicitAutograd": "f"}),  # YAML null: torchgen treats as absent
        ("  dispatch: {}\n", {}),
        ("  structured_delegate: f.out\n", {}),
        ("  dispatch:\n    CPU: a\n    CPU, CUDA: b\n", {"CPU": "b", "CUDA": "b"}),
        (
            "  dispatch:\n    CompositeExplicitAutogradNonFunctional: f_nf\n",
            {"CompositeExplicitAutogradNonFunctional": "f_nf"},
        ),
    ],
)
def test_effective_dispatch_defaults(body: str, expected: dict[str, str]) -> None:
    _, e = one("- func: f(Tensor self) -> Tensor\n" + body)
    assert effective_dispatch(e) == expected


def test_effective_dispatch_out_default_uses_cpp_name() -> None:
    _, e = one("- func: g.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n")
    assert effective_dispatch(e) == {"CompositeImplicitAutograd": "g_out"}
    _, s = one("- func: g.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n")
    assert effective_dispatch(s) == {}


# --------------------------------------------------------------- bytes
def test_byte_offsets_with_non_ascii_content() -> None:
    text = (
        "# Ünïcödé comment — with multi-byte characters ✓\n"
        '- func: f(Tensor x, str s="é") -> Tensor  # café\n'
        "  dispatch:\n"
        "    CPU, MPS: f_kernel  # naïve ✓\n"
        "    # 注释\n"
        "    CUDA: f_cuda\n"
    )
    data, e = one(text)
    assert e.func == 'f(Tensor x, str s="é") -> Tensor'
    cpu, cuda = e.dispatch
    assert data[cpu.kernel_span.start : cpu.kernel_span.end] == b"f_kernel"
    assert [data[s.start : s.end] for s in cpu.key_spans] == [b"CPU", b"MPS"]
    assert data[cuda.span.start : cuda.span.end] == b"CUDA: f_cuda"
    assert cuda.span.start == data.index(b"    CUDA: f_cuda") + 4
    assert data[e.span.start : e.span.end].endswith(b"CUDA: f_cuda")


def test_columns_count_characters_on_non_ascii_lines() -> None:
    text = "- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: f_cpu  # é\n    'é': x\n"
    _, got = read(text)
    (d,) = got.entries[0].dispatch
    assert (d.kernel_span.column, d.kernel_span.end_column) == (10, 15)
    assert [(e.line, e.column) for e in got.errors] == [(4, 5)]  # quoted keys are refused


def test_lone_cr_and_unicode_line_separators_are_errors() -> None:
    # YAML breaks lines at CR, NEL, LS and PS too: the scanner must not read across them.
    for sep in ("\r", "\u2028", "\x85"):
        text = f"- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: f_cpu # a{sep}MPS: f_mps\n"
        _, got = read(text + GOOD)
        assert error_lines(got) == [3], sep
        assert [e.name for e in got.entries] == ["f", "ok"]


def test_crlf_line_endings() -> None:
    data, e = one(ATAN2.split("\n\n- func: atan2_")[0].replace("\n", "\r\n") + "\r\n")
    assert e.dispatch[0].keys == ("CPU", "CUDA")
    assert text_of(data, e.dispatch[1].span) == "MPS: atan2_out_mps"
    assert e.tags == ("core", "pointwise")
    assert text_of(data, e.span).endswith("tags: [core, pointwise]")


# --------------------------------------------------------------- errors
GOOD = "- func: ok(Tensor x) -> Tensor\n  dispatch:\n    CPU: ok_cpu\n"


@pytest.mark.parametrize(
    "bad, line, words",
    [
        # a dispatch line without ':' (YAML would fold it into a string)
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: f_cpu\n    CUDA f_cuda\n", 4, "without ':'"),
        # "CPU,CUDA:foo" is one plain scalar for YAML, not "key: value"
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    MPS: m\n    CPU,CUDA:foo\n", 4, "space after ':'"),
        # bad indentation
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: a\n   CUDA: b\n", 4, "indentation"),
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: a\n      CUDA: b\n", 4, "indentation"),
        ("- func: f(Tensor x) -> Tensor\n   variants: function\n", 2, "indentation"),
        ("- func: f(Tensor x) -> Tensor\n variants: function\n", 2, "indentation"),
        # a tab
        ("- func: f(Tensor x) -> Tensor\n\tvariants: function\n", 2, "tab"),
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU:\tf\n", 3, "tab"),
        # top-level text that is not an entry
        ("oops\n- func: f(Tensor x) -> Tensor\n", 1, "'- func:"),
        # a key without the space after ':'
        ("- func: f(Tensor x) -> Tensor\n  structured:True\n", 2, "space after ':'"),
        # a mapping inside a plain value
        ("- func: f(Tensor x) -> Tensor\n  variants: a: b\n", 2, "':'"),
    ],
)
def test_yaml_errors_report_the_line_and_parsing_continues(bad: str, line: int, words: str) -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(bad)  # PyYAML refuses it too
    _, got = read(bad + GOOD)
    assert error_lines(got)[:1] == [line], got.errors
    assert words in got.errors[0].message
    assert got.entries[-1].name == "ok" and got.entries[-1].dispatch[0].kernel == "ok_cpu"


@pytest.mark.parametrize(
    "bad, line, words",
    [
        ("- variants: function\n  dispatch:\n    CPU: x\n", 1, "without a 'func:'"),
        # alone in the block, YAML reads "CPU,CUDA:foo" as a string: torchgen rejects a non-dict dispatch
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU,CUDA:foo\n", 3, "space after ':'"),
        ("- func: f(Tensor x) -> Tensor\n  dispatch: f_kernel\n", 2, "indented block"),
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU:\n", 3, "kernel name"),
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU, : f\n", 3, "bad dispatch key"),
        ("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: foo bar\n", 3, "identifier"),
        ("- func: f(Tensor x) -> Tensor\n  structured: Maybe\n", 2, "True or False"),
        ("- func: f(Tensor x) -> Tensor\n  variant: function\n", 2, "unknown key"),
        ("- func: f(Tensor x) -> Tensor\n  variants: function\n  variants: method\n", 3, "duplicate key"),
        ("- func: f(Tensor x)\n", 1, "invalid function schema"),
    ],
)
def test_torchgen_level_errors(bad: str, line: int, words: str) -> None:
    yaml.safe_load(bad)  # valid YAML, but torchgen would reject it
    _, got = read(bad + GOOD)
    assert error_lines(got)[:1] == [line], got.errors
    assert words in got.errors[0].message
    assert got.entries[-1].name == "ok"


def test_multi_line_plain_scalars_are_refused_not_misread() -> None:
    # Valid YAML (a folded plain scalar) that the scanner does not support: an error, never a wrong value.
    bad = "- func: f(Tensor x)\n      -> Tensor\n"
    assert yaml.safe_load(bad)[0]["func"] == "f(Tensor x) -> Tensor"
    _, got = read(bad + GOOD)
    assert error_lines(got) == [1, 2]  # errors come sorted by line
    assert "invalid function schema" in got.errors[0].message  # what is left of it: "f(Tensor x)"
    assert "continuation" in got.errors[1].message
    assert [e.name for e in got.entries] == ["f", "ok"]


def test_non_utf8_reports_line_of_first_bad_byte() -> None:
    data = b"- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: f_cpu # caf\xe9\n    MPS: f_mps\n" + GOOD.encode()
    _, got = read(data)
    assert [(e.line, e.column) for e in got.errors] == [(3, 21)]
    assert "UTF-8" in got.errors[0].message
    f, ok = got.entries
    assert [d.kernel for d in f.dispatch] == ["f_cpu", "f_mps"]
    assert f.dispatch[1].span.start == data.index(b"MPS: f_mps")
    assert ok.dispatch[0].kernel == "ok_cpu"


def test_error_columns() -> None:
    _, got = read("- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: a\n    CUDA b\n  \tvariants: x\n")
    assert [(e.line, e.column) for e in got.errors] == [(4, 5), (5, 3)]


def test_empty_and_comment_only_files() -> None:
    assert read(b"")[1] == NativeYaml(PATH, (), ())
    assert read("# nothing here\n\n")[1] == NativeYaml(PATH, (), ())


def test_no_trailing_newline_and_dash_on_its_own_line() -> None:
    data, got = read("-\n  func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: f_cpu")
    assert got.errors == ()
    (e,) = got.entries
    assert e.func_line == 2 and e.span.line == 1 and text_of(data, e.span).endswith("CPU: f_cpu")


def test_read_file_and_missing_file(tmp_path: Path) -> None:
    f = tmp_path / "native_functions.yaml"
    f.write_bytes(ATAN2.encode())
    got = read_native_yaml_file(f, "x/native_functions.yaml")
    assert got.path == "x/native_functions.yaml" and len(got.entries) == 2
    missing = read_native_yaml_file(tmp_path / "nope.yaml", "nope.yaml")
    assert missing.entries == () and missing.errors[0].message.startswith("cannot read file")


def test_fast_constructed_objects_equal_regular_ones() -> None:
    _, got = read(ATAN2)
    e = got.entries[0]
    for obj in (e, e.span, e.dispatch[0], e.dispatch[0].kernel_span):
        again = dataclasses.replace(obj)  # rebuilt through the generated __init__
        assert again == obj and vars(again) == vars(obj) and hash(again) == hash(obj)
    assert isinstance(e, NativeEntry) and isinstance(e.dispatch[0], DispatchLine)


def test_fast_path_dispatch_spans_are_made_on_first_read_and_equal_the_scanners() -> None:
    data = ATAN2.encode()
    fast = read_native_yaml(data, PATH).entries[0].dispatch
    assert all("_spans" in vars(d) and "span" not in vars(d) for d in fast)  # offsets only, until read
    full = yaml_reader._Scanner(data, PATH).run(fast=False).entries[0].dispatch
    for d, want in zip(fast, full):
        assert d.key_spans == want.key_spans  # the first read makes all three
        assert "_spans" not in vars(d) and (d.span, d.kernel_span) == (want.span, want.kernel_span)
    assert [data[s.start : s.end] for s in fast[0].key_spans] == [b"CPU", b"CUDA"]
    with pytest.raises(AttributeError):
        fast[0].nothing  # noqa: B018


def took_fast_path(data: bytes) -> list[bool]:
    """Per entry after the file's head: did the fast path build it?"""
    chunks = data.split(b"\n- ")
    scanner = yaml_reader._Scanner(data, PATH)
    scanner.plain = True
    off, line, taken = len(chunks[0]) + 1, chunks[0].count(b"\n") + 2, []
    for c in chunks[1:]:
        taken.append(yaml_fast.fast_entry(scanner, c, line, off, c.count(b"\n")))
        line += c.count(b"\n") + 1
        off += len(c) + 3
    return taken


FAST_SHAPES = [
    "- func: f(Tensor x) -> Tensor\n",
    "- func: f(Tensor x) -> Tensor",  # no final newline
    "- func: f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)  # a comment  \n\n# trailing comment\n\n",
    "- func: f_(Tensor(a!) self) -> Tensor(a!)\n  variants: method  # c   \n  # comment\n\n",
    "- func: f.(Tensor x) -> Tensor\n  dispatch: {}\n  tags: [core, pointwise]\n",
    "- func: f(Tensor x) -> (Tensor, Tensor)\n  structured_delegate: g.out\n  tags: core\n  structured: False\n",
    "- func: f(Tensor x) -> Tensor\n  dispatch:\n    CPU: f_cpu\n    CUDA, MPS: f_k\n  manual_kernel_registration: True\n",
    # dispatch lines with comments, blank and comment lines among and after them
    "- func: f(Tensor x) -> Tensor\n  dispatch:\n    # first\n    CPU: f_cpu   # c\n\n  # c\n    CUDA, MPS: f_k\n    # last\n",
    "- func: f(Tensor x) -> Tensor\n  dispatch:  # c\n    CPU: f_cpu\n    CUDA: f_cuda  # c  \n\n",
]


@pytest.mark.parametrize("shape", FAST_SHAPES)
def test_fast_path_takes_canonical_shapes_and_builds_the_scanners_entry(shape: str) -> None:
    text = "# head\n" + shape + ("\n" if not shape.endswith("\n") else "") + "\n" + shape
    data, got = read(text)  # equal to the line scanner's model
    assert got.errors == () and len(got.entries) == 2
    assert took_fast_path(data) == [True, True]
    for e in got.entries:
        for d in e.dispatch:  # spans made on first read, where the line scanner puts them
            assert [text_of(data, s) for s in d.key_spans] == list(d.keys)
            assert text_of(data, d.kernel_span) == d.kernel


@pytest.mark.parametrize(
    "twice",
    [
        "  structured: True\n  structured: False\n",
        "  tags: core\n  device_check: NoCheck\n  tags: [core]\n",
        "  dispatch:\n    CPU: a\n  dispatch:\n    CUDA: b\n",
        "  dispatch: {}\n  dispatch:\n    CPU: a\n",
        "  dispatch:\n    CPU: a\n  # c\n  dispatch: {}\n",
    ],
)
def test_a_duplicate_key_leaves_the_fast_path(twice: str) -> None:
    data, got = read("# head\n- func: f(Tensor x) -> Tensor\n" + twice + "\n" + GOOD)
    assert took_fast_path(data) == [False, True]  # the line scanner reports it
    assert len(got.errors) == 1 and "duplicate key" in got.errors[0].message
    assert [e.name for e in got.entries] == ["f", "ok"]


def yaml_dispatch(loaded_entry: dict[str, object]) -> dict[str, str]:
    """torchgen's reading of a PyYAML-loaded dispatch table: keys split on commas, namespace dropped."""
    out: dict[str, str] = {}
    table = loaded_entry.get("dispatch") or {}
    assert isinstance(table, dict)
    for ks, v in table.items():
        for k in ks.split(","):
            out[k.strip()] = v.rsplit("::", 1)[-1]
    return out


@pytest.mark.skipif(not DATA.is_dir(), reason="no yaml fixtures")
@pytest.mark.parametrize("fixture", sorted(DATA.glob("*.yaml")) if DATA.is_dir() else [], ids=lambda p: p.name)
def test_fixture_files_match_pyyaml(fixture: Path) -> None:
    data, got = read(fixture.read_bytes())
    assert got.errors == ()
    loaded = yaml.safe_load(data)
    assert [e.func for e in got.entries] == [x["func"] for x in loaded]
    for e, x in zip(got.entries, loaded):
        assert {k: d.kernel_name for d in e.dispatch for k in d.keys} == yaml_dispatch(x), e.overload_name


# ---------------------------------------------------------------- fuzzing
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.fuzzing import check_read, examples  # noqa: E402

SEED = (ATAN2 + GOOD + (DATA / "mixed.yaml").read_text()).encode()
NOISE = [
    b" ",
    b"\n",
    b":",
    b": ",
    b"- ",
    b"#",
    b",",
    b"\t",
    b"'",
    b'"',
    b"[",
    b"]",
    b"{}",
    b"\xc3\xa9",
    b"\r",
    b"\xff",
    b"  ",
    b"x",
]


@settings(max_examples=examples(300))
@given(st.lists(st.tuples(st.integers(0, len(SEED)), st.integers(0, 3), st.sampled_from(NOISE)), max_size=6))
def test_mutated_input_never_raises_and_both_paths_agree(edits: list[tuple[int, int, bytes]]) -> None:
    data = SEED
    for at, cut, insert in edits:
        at = min(at, len(data))
        data = data[:at] + insert + data[at + cut :]
    _, got = read(data)  # also asserts fast path == line scanner
    touched = min((min(at, len(SEED)) for at, _, _ in edits), default=None)
    check_read(got, data, lambda: read_native_yaml(data, PATH), touched_from=touched)
    for e in got.entries:
        spans = [e.span] + [s for d in e.dispatch for s in (d.span, d.kernel_span, *d.key_spans)]
        assert all(0 <= s.start <= s.end <= len(data) and s.line <= s.end_line for s in spans)
        for d in e.dispatch:
            raw = data[d.kernel_span.start : d.kernel_span.end]
            assert (
                raw.decode("utf-8", "replace") == d.kernel
                or raw[:1] in (b"'", b'"')
                or "\\" in d.kernel
                or "''" in raw.decode("utf-8", "replace")
            )
    for err in got.errors:
        assert 1 <= err.line <= data.count(b"\n") + 1 and err.column >= 1
    if not got.errors:  # then PyYAML must read the same thing
        loaded = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        assert [e.func for e in got.entries] == [x["func"] for x in loaded]
        for e, x in zip(got.entries, loaded):
            assert yaml_dispatch(x) == {k: d.kernel_name for d in e.dispatch for k in d.keys}
            tags = x.get("tags", [])
            assert e.tags == tuple([tags] if isinstance(tags, str) else tags)
            assert e.structured == bool(x.get("structured")) and e.structured_delegate == x.get("structured_delegate")


@pytest.mark.parametrize(
    "lines, shared",
    [
        (["CPU, CUDA: foo_out", "MPS: foo_out_mps"], "foo_out"),
        (["CPU, CUDA, MPS: foo_out"], None),  # MPS runs it already
        (["CUDA: foo_cuda", "MPS: foo_out_mps"], None),  # no CPU kernel
        (["CPU: foo_old", "MPS: foo_out_mps", "CPU, CUDA: foo_out"], "foo_out"),  # the last CPU line counts
        (["CPU: foo_out", "MPS: foo_out_mps", "CPU, MPS: foo_both"], None),
    ],
)
def test_the_cpu_line_to_share_is_the_last_cpu_line_unless_mps_shares_it(lines, shared) -> None:
    """NativeEntry.cpu_line_to_share: the line port has MPS join; like torchgen, a later line naming CPU
    sets its kernel again."""
    body = "".join(f"    {line}\n" for line in lines)
    _, got = read(f"- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n{body}".encode())
    line = got.entries[0].cpu_line_to_share()
    assert (line.kernel if line is not None else None) == shared

"""migrate.read.xfail_reader on a hand-written snippet and the installed common_mps.py."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.model import CommonMps, ParseError
from migrate.read.xfail_reader import is_table_name, read_common_mps
from tests.fuzzing import check_read, examples

DATA = Path(__file__).parent / "data" / "xfail"
SNIPPET = (DATA / "common_mps_like.py").read_bytes()


@pytest.fixture(scope="module")
def snippet() -> CommonMps:
    return read_common_mps(SNIPPET, "torch/testing/_internal/common_mps.py")


def text(data: bytes, e) -> str:
    return data[e.span.start : e.span.end].decode()


def test_table_names():
    for name in (
        "UNIMPLEMENTED_XFAILLIST",
        "XFAILLIST_GRAD",
        "SKIPLIST",
        "UNIMPLEMENTED_XFAILLIST_SPARSE",
        "SUPPORTED_COMPLEX_OPS",
        "EMPTY_OPS_SKIPLIST",
    ):
        assert is_table_name(name), name
    for name in ("NOT_A_TABLE", "MYXFAILLISTS", "SUPPORTED_OPS"):
        assert not is_table_name(name), name


def test_snippet_entries_in_order(snippet):
    assert snippet.errors == ()
    got = [(e.table, e.key, e.span.line, e.function) for e in snippet.entries]
    assert got == [
        ("MODULE_XFAILLIST", "zeta", 5, None),
        ("SUPPORTED_COMPLEX_OPS", "abs", 11, "ops_modifier"),
        ("SUPPORTED_COMPLEX_OPS", "add", 12, "ops_modifier"),
        ("SUPPORTED_COMPLEX_OPS", "nn.functional.pad", 13, "ops_modifier"),
        ("UNIMPLEMENTED_XFAILLIST", "atan2", 18, "ops_modifier"),
        ("UNIMPLEMENTED_XFAILLIST", "copysign", 19, "ops_modifier"),
        ("UNIMPLEMENTED_XFAILLIST", "nn.functional.gelu", 20, "ops_modifier"),
        ("UNIMPLEMENTED_XFAILLIST", "logaddexp", 27, "ops_modifier"),
        ("EMPTY_OPS_SKIPLIST", "empty", 30, "ops_modifier"),
        ("EMPTY_OPS_SKIPLIST", "new_empty", 30, "ops_modifier"),
        ("XFAILLIST_GRAD", "pow", 33, "nested"),
    ]


def test_snippet_spans_are_the_elements_without_comma(snippet):
    by_key = {e.key: e for e in snippet.entries}
    assert text(SNIPPET, by_key["zeta"]) == '"zeta": None'
    assert text(SNIPPET, by_key["add"]) == '"add"'
    assert text(SNIPPET, by_key["nn.functional.pad"]) == '"nn.functional." "pad"'
    assert text(SNIPPET, by_key["copysign"]) == '"copysign": [torch.float16, torch.bfloat16]'
    assert text(SNIPPET, by_key["new_empty"]) == "'new_empty'"
    assert text(SNIPPET, by_key["pow"]) == '"pow"'
    gelu = by_key["nn.functional.gelu"]
    assert (
        text(SNIPPET, gelu)
        == '"nn.functional.gelu": [\n                torch.int8,\n                torch.uint8,\n            ]'
    )
    assert (gelu.span.line, gelu.span.column, gelu.span.end_line, gelu.span.end_column) == (20, 13, 23, 14)
    assert by_key["logaddexp"].span.column == len("        UNIMPLEMENTED_XFAILLIST.update({") + 1


def test_snippet_values(snippet):
    by_key = {e.key: e for e in snippet.entries}
    assert by_key["atan2"].value == "None"
    assert by_key["copysign"].value == "[torch.float16, torch.bfloat16]"
    assert by_key["abs"].value is None
    assert by_key["nn.functional.gelu"].value.startswith("[\n") and by_key["nn.functional.gelu"].value.endswith("]")


def test_snippet_byte_offsets_after_non_ascii(snippet):
    atan2 = next(e for e in snippet.entries if e.key == "atan2")
    assert atan2.span.start == SNIPPET.index(b'"atan2": None')
    assert SNIPPET[: atan2.span.start].decode() != SNIPPET[: atan2.span.start].decode("latin-1")  # bytes != chars here


def test_snippet_skipped_notes(snippet):
    notes = [(n.line, n.message.split(":")[0]) for n in snippet.skipped]
    assert notes == [
        (24, "UNIMPLEMENTED_XFAILLIST"),  # f-string key
        (25, "UNIMPLEMENTED_XFAILLIST"),  # ** unpacking
        (28, "UNIMPLEMENTED_XFAILLIST"),  # update(NAME)
    ]
    assert "FormattedString" in snippet.skipped[0].message


def test_syntax_error_is_reported_not_raised():
    cm = read_common_mps(b"X_XFAILLIST = {\n    'a': None,\n  ]\n", "bad.py")
    assert cm.entries == ()
    assert len(cm.errors) == 1 and cm.errors[0].line == 3


@settings(max_examples=examples(60))
@given(st.integers(0, len(SNIPPET)), st.binary(max_size=8))
def test_never_raises(cut, junk):
    data = SNIPPET[:cut] + junk + SNIPPET[cut:]
    cm = read_common_mps(data, "fuzz.py")
    assert isinstance(cm, CommonMps)
    for e in cm.entries:
        assert e.span.start < e.span.end
    # not checked: errors point at the edit (an undecodable byte or a NUL is reported at 1:1)
    check_read(cm, data, lambda: read_common_mps(bytes(data), "fuzz.py"))


# ------------------------------------------------------------ the installed common_mps.py
def _real_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")  # locate only; common_mps.py itself is never imported
    if spec is None or not spec.origin:
        pytest.skip("torch not installed")
    p = Path(spec.origin).parent / "testing" / "_internal" / "common_mps.py"
    if not p.is_file():
        pytest.skip("installed torch has no common_mps.py")
    return p


@pytest.fixture(scope="module")
def real() -> tuple[CommonMps, bytes]:
    p = _real_path()
    data = p.read_bytes()
    return read_common_mps(data, "torch/testing/_internal/common_mps.py"), data


def _ast_oracle(data: bytes) -> Counter:
    """Independent count of literal keys per (function, table) with the stdlib ast."""
    counts: Counter = Counter()

    def walk(node, func):
        for child in ast.iter_child_nodes(node):
            f = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            value, names = None, []
            if isinstance(child, ast.Assign):
                names = [t.id for t in child.targets if isinstance(t, ast.Name)]
                value = child.value
            elif isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
                names, value = [child.target.id], child.value
            elif isinstance(child, ast.Expr) and isinstance(child.value, ast.Call):
                fn = child.value.func
                if isinstance(fn, ast.Attribute) and fn.attr == "update" and isinstance(fn.value, ast.Name):
                    names = [fn.value.id]
                    value = child.value.args[0] if child.value.args else None
            for name in names:
                if is_table_name(name):
                    elts = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", [])
                    counts[(f, name)] += sum(
                        1 for k in elts if isinstance(k, ast.Constant) and isinstance(k.value, str)
                    )
            walk(child, f)

    walk(ast.parse(data), None)
    return +counts


def test_real_tables_found(real):
    cm, data = real
    assert cm.errors == ()
    counts = Counter(e.table for e in cm.entries)
    for table in (
        "UNIMPLEMENTED_XFAILLIST",
        "UNDEFINED_XFAILLIST",
        "ON_MPS_XFAILLIST",
        "EMPTY_OPS_SKIPLIST",
        "SKIPLIST",
        "XFAILLIST_GRAD",
        "SKIPLIST_GRAD",
        "SUPPORTED_COMPLEX_OPS",
    ):
        assert counts[table] > 0, table
    assert counts["SUPPORTED_COMPLEX_OPS"] > 100
    assert counts["UNIMPLEMENTED_XFAILLIST"] > 20
    assert {e.function for e in cm.entries} >= {"mps_ops_modifier", "mps_ops_grad_modifier"}


def test_real_counts_match_an_independent_ast_count(real):
    cm, data = real
    mine = Counter((e.function, e.table) for e in cm.entries)
    assert mine == _ast_oracle(data)


def test_real_spans_start_with_the_quoted_key(real):
    cm, data = real
    lines = data.split(b"\n")
    for e in cm.entries:
        t = text(data, e)
        assert t.startswith(('"' + e.key, "'" + e.key)), (e.key, t[:40])
        assert not t.endswith(",")
        assert lines[e.span.line - 1][e.span.column - 1 :].decode().startswith(t.split("\n")[0])
        if e.value is not None:
            assert t.endswith(e.value)


# ------------------------------------------------------------ the ast reading is libcst's
SHAPES = [
    b"X_XFAILLIST = {'a': None, \"b\": [torch.float32], 'c' 'd': (1, 2)}\n",
    b"X_XFAILLIST = {('a'): None}\n",  # grouping parentheses: libcst's range has them
    b"X_XFAILLIST = {'a': (None)}\n",
    b"X_XFAILLIST = ({'a': None})\n",
    b"X_SKIPLIST = ('a', 'b',)\nY_SKIPLIST = 'a', 'b'\nZ_SKIPLIST = ('a'), 'b'\nW_SKIPLIST = ['a', ('b')]\n",
    b"X_SKIPLIST = {'a', # why (\n  'b'}\n",  # a "(" in a comment is no parenthesis
    b"A_XFAILLIST = B_SKIPLIST = {'a': 1}\nC_XFAILLIST: dict = {'b': 2}\nD_XFAILLIST: dict\n",
    b"X_XFAILLIST.update({'a': None}, {'b': None})\nX_XFAILLIST.update(({'c': None}))\n",
    b"X_XFAILLIST.update(a=1)\nX_XFAILLIST.update(*more)\nX_XFAILLIST.update(OTHER)\n",
    b"X_XFAILLIST = {**OTHER, 'a': None}\nY_SKIPLIST = {*OTHER, 'a'}\n",
    b"X_XFAILLIST = {name: None, f(): None, 1: None, None: None, True: None, -1: None, 1.5: None, 2j: None}\n",
    b"X_XFAILLIST = {f'a{b}': None, b'x': None, ...: None, x if y else z: None, [a for a in b]: None}\n",
    b"X_SKIPLIST = OTHER | {'a'}\nY_SKIPLIST = f()\nZ_SKIPLIST = 3\nW_SKIPLIST = 'a'\nV_SKIPLIST = lambda: 1\n",
    b"def f():\n    X_XFAILLIST = {'a': None}\n    class C:\n        Y_SKIPLIST = {'b'}\n"
    b"    if x:\n        Z_SKIPLIST = {'c'}\n    elif y:\n        Z_SKIPLIST = {'d'}\n    else:\n        Z_SKIPLIST = {'e'}\n"
    b"    try:\n        T_SKIPLIST = {'f'}\n    except E:\n        T_SKIPLIST = {'g'}\n    finally:\n        T_SKIPLIST = {'h'}\n"
    b"    for i in x:\n        L_SKIPLIST = {'i'}\n    with m:\n        W_SKIPLIST = {'j'}\n"
    b"    match v:\n        case 1:\n            M_SKIPLIST = {'k'}\nasync def g():\n    A_SKIPLIST = {'l'}\n",
    "X_XFAILLIST = {'é': None, 'ü\\n': [torch.float16],  # ç\n 'b': None}\n".encode(),
    b"X_XFAILLIST = {'a': None}\r\n",
    b"# -*- coding: latin-1 -*-\nX_XFAILLIST = {'a': None}\n",
    b"X_XFAILLIST = {'a': None,\n",
    b"X_XFAILLIST = {'\\d': None}\n",
    b"X_XFAILLIST.update({'a': None}, {'b': None})\n",
    b"X_SKIPLIST = OTHER | {'a'}\nY_SKIPLIST = {-1, a.b, not c, a < b, a and b}\n",
]


def _same_reading(data: bytes) -> bool:
    """Whether the ast reading (when it reads the file) gives what libcst's gives; True when it leaves the file
    to libcst."""
    from migrate.read import xfail_cst, xfail_reader

    fast = xfail_reader.read_tables(data)
    if fast is None:
        return True
    slow = xfail_cst.read_tables(data, "fuzz.py")
    if isinstance(slow, ParseError):  # Python 3.11 reads what libcst's parser refuses: no reading to compare
        return True
    return (list(fast[0]), list(fast[1])) == (list(slow[0]), list(slow[1]))


@pytest.mark.parametrize("k", range(len(SHAPES)))
def test_the_ast_reading_of_each_shape_is_libcsts_or_none(k):
    assert _same_reading(SHAPES[k])


def test_the_usual_shapes_are_read_without_libcst():
    from migrate.read import xfail_reader

    usual = [0, 5, 6, 10, 13, 14, 18, 19, 20]  # strings, comments, chained tables, non-literal keys, blocks, update
    assert [k for k in usual if xfail_reader.read_tables(SHAPES[k]) is None] == []
    # parentheses, unpacking and update's keywords, f-strings/bytes, a string table, CR, coding cookie, bad syntax
    unsure = [1, 2, 3, 4, 7, 8, 9, 11, 12, 15, 16, 17]
    assert [k for k in unsure if xfail_reader.read_tables(SHAPES[k]) is not None] == []


@settings(max_examples=examples(120))
@given(st.sampled_from(SHAPES + [SNIPPET]), st.integers(0, 400), st.binary(max_size=6))
def test_the_ast_reading_of_damaged_shapes_is_libcsts_or_none(source, cut, junk):
    cut = min(cut, len(source))
    assert _same_reading(source[:cut] + junk + source[cut:])


def test_the_real_file_is_read_with_ast_alone(real):
    """torch's common_mps.py has only usual shapes: a cold lint reads it without importing libcst (~0.15 s)."""
    import subprocess
    import sys

    cm, data = real
    assert _same_reading(data)
    code = (
        "import sys; from migrate.read.xfail_reader import read_common_mps; "
        f"cm = read_common_mps(open({str(_real_path())!r}, 'rb').read(), 'x.py'); "
        "print(len(cm.entries), 'libcst' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(cm.entries)), "False"]

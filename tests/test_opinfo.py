"""OpInfo database: fast scan + ast of MPS decorations; MPS015 fixes; test commands."""

from __future__ import annotations

import shutil

import libcst
import pytest

from migrate.index import Index
from migrate.opinfo import installed_opinfo_file
from migrate.opinfo import test_commands as opinfo_test_commands
from migrate.read.opinfo_reader import find_entries
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root
from tests.helpers import MINI, OPINFO, run_cli


def test_fixture_entries():
    data = (MINI / OPINFO).read_bytes()
    entries = find_entries(data, OPINFO)
    names = [(e.kind, e.name, e.variant) for e in entries]
    assert names == [
        ("BinaryUfuncInfo", "atan2", ""),
        ("UnaryUfuncInfo", "exp", ""),
        ("UnaryUfuncInfo", "exp", "extremal"),
        ("BinaryUfuncInfo", "hypot", ""),
        ("ForeachFuncInfo", "exp", ""),
    ]  # the commented-out entry is not read
    atan2 = entries[0]
    decos = [(d.decorator, d.cls, d.test) for d in atan2.mps_decorations]
    # the toleranceOverride is not an expectation; the whole-class skip has no test name
    assert decos == [
        ("expectedFailure", "TestConsistency", "test_output_match"),
        ("expectedFailure", "TestCommon", "test_out"),
        ("skip", "TestCommon", None),
    ]
    d = atan2.mps_decorations[0]
    assert data[d.span.start : d.span.end].startswith(b"DecorateInfo(unittest.expectedFailure, 'TestConsistency'")
    assert entries[1].mps_decorations[0].comma_fix is not None  # first of a 2-tuple without trailing comma
    assert entries[2].formatted_name == "exp_extremal"


def test_real_opinfo_database_scan():
    f = installed_opinfo_file()
    if f is None:
        pytest.skip("torch's common_methods_invocations.py not installed")
    data = f.read_bytes()
    entries = find_entries(data, "cmi.py")
    decos = [d for e in entries for d in e.mps_decorations]
    assert len(entries) > 800 and len(decos) > 250  # 924 entries, 330 MPS expectations in torch 2.13.0
    spans = sorted((e.span.start, e.span.end) for e in entries)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # entries never overlap
    for d in decos[:: max(1, len(decos) // 40)]:
        text = data[d.span.start : d.span.end].decode()
        assert text.startswith("DecorateInfo(") and "mps" in text
        libcst.parse_expression(text)
    rounds = [e.formatted_name for e in find_entries(data, "cmi.py", ["round"]) if e.kind != "ForeachFuncInfo"]
    assert rounds == ["round", "round_decimals_0", "round_decimals_3", "round_decimals_neg_3"]


def test_fix_removes_only_affected_and_keeps_python_valid(tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(MINI, tree)
    p = run_cli("lint", str(tree), "--fix", "--unsafe-fixes", "--select", "MPS015")
    assert p.returncode == 0, p.stdout + p.stderr
    text = (tree / OPINFO).read_text()
    libcst.parse_module(text)
    assert (
        "'TestConsistency', 'test_output_match',\n                                     device_type='mps')" not in text
    )
    assert "'TestCommon', 'test_out', device_type='mps'" in text  # unrelated test: kept
    assert "toleranceOverride" in text and "ForeachFuncInfo('exp'" in text
    assert "skips=(DecorateInfo(unittest.expectedFailure, 'TestJit', 'test_variant_consistency_jit'),)" in text
    assert "# atan2 on MPS went through MPSGraph" in text  # comments stay
    hypot = text[text.index("BinaryUfuncInfo('hypot'") :]
    assert "test_output_match" in hypot  # hypot is still MPSGraph


def test_fix_command_prints_test_commands(tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(MINI, tree)
    p = run_cli("fix", "exp", "--root", str(tree), "--unsafe-fixes")
    lines = [line.strip() for line in p.stderr.splitlines() if line.strip().startswith("python test/")]
    assert lines == [
        "python test/test_mps.py -k test_output_match_exp",
        "python test/test_mps.py -k test_output_match_exp_extremal",
    ]
    assert "time it before/after: mps-migrate bench exp --root TREE -o bench_exp.py" in p.stderr


def test_test_commands_from_installed_database_when_tree_has_none():
    root = pytorch_260_root()  # the fetched 2.6.0 tree carries no OpInfo database
    ix = Index(load_tree(root))
    assert ix.tree.opinfo_files == []
    if installed_opinfo_file() is None:
        pytest.skip("torch's common_methods_invocations.py not installed")
    assert opinfo_test_commands(ix, "round") == [
        f"python test/test_mps.py -k test_output_match_{n}"
        for n in ("round", "round_decimals_0", "round_decimals_3", "round_decimals_neg_3")
    ]
    assert opinfo_test_commands(ix, "softplus") == [
        "python test/test_mps.py -k test_output_match_nn_functional_softplus"
    ]


def test_port_write_prints_test_commands(tmp_path):
    from tests.helpers import FIXTURES

    tree = tmp_path / "t"
    shutil.copytree(FIXTURES / "port", tree)
    p = run_cli("port", "hypot", "--root", str(tree), "--write")
    assert p.returncode == 0, p.stderr
    assert "python test/test_mps.py -k test_output_match_hypot" in p.stderr


def test_opinfo_definitions_modules_are_read_too():
    root = pytorch_260_root()
    ix = Index(load_tree(root))
    # special.i0e and linalg.cross live in torch/testing/_internal/opinfo/definitions/*.py
    assert opinfo_test_commands(ix, "special_i0e") == ["python test/test_mps.py -k test_output_match_special_i0e"]
    assert opinfo_test_commands(ix, "linalg_cross") == ["python test/test_mps.py -k test_output_match_linalg_cross"]


def _heads_by_word_regex(data: bytes, names) -> list[tuple[int, str, str]]:
    """(start, kind, name) of each head, as the former ``\\b(\\w*Info)\\(`` scan found them (find_entries' spec)."""
    import re

    alt = b"|".join(re.escape(n.encode()) for n in sorted(set(names), key=len, reverse=True))
    rx = re.compile(rb"\b(\w*Info)\(\s*(['\"])(" + alt + rb")\2")
    return [(m.start(1), m.group(1).decode(), m.group(3).decode()) for m in rx.finditer(data)]


def test_entry_heads_match_a_word_scan():
    data = (
        b"Info('exp', x)\n"
        b"  UnaryUfuncInfo( 'exp', a=1),\n"
        b'foo.BinaryInfo("atan2")\n'
        b"_Private9Info('exp')\n"
        b"\xc3\xa9Info('exp')\n"
        b"InfoInfo('exp') NotInfo ('exp') Info('expm1') XInfo('ex')\n"
        b"# OpInfo('exp')\n"
        b"OpInfo('atan2', aten_name='atan2')"
    )
    names = ["exp", "atan2", "expm1"]
    got = [(e.span.start, e.kind, e.name) for e in find_entries(data, "x.py", names)]
    assert got == [h for h in _heads_by_word_regex(data, names) if h[0] != data.index(b"OpInfo('exp')")]
    assert [k for _, k, _ in got] == ["Info", "UnaryUfuncInfo", "BinaryInfo", "_Private9Info", "Info", "InfoInfo"] + [
        "Info",
        "OpInfo",
    ]


def test_entry_heads_of_a_real_database_match_a_word_scan():
    from tests.corpus import pytorch_270a0_root

    data = (pytorch_270a0_root() / OPINFO).read_bytes()
    names = ["exp", "atan2", "round", "add", "sub", "mul", "div", "clamp", "where", "sigmoid"]
    heads = [h for h in _heads_by_word_regex(data, names) if b"#" not in data[data.rfind(b"\n", 0, h[0]) + 1 : h[0]]]
    got = [(e.span.start, e.kind, e.name) for e in find_entries(data, OPINFO, names)]
    assert len(got) > 10 and got == heads


def test_line_index_matches_a_full_line_table():
    import bisect

    from migrate.read.opinfo_reader import _LineIndex

    data = b"a\n\nbc\xc3\xa9d\n  e\nf"
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
    lines = _LineIndex(data)
    for pos in (7, 0, 3, 12, len(data), 2, 8, 7, 1, 9):  # out of order and repeated, as spans ask
        line = bisect.bisect_right(starts, pos)
        assert lines.line_of(pos) == (line, starts[line - 1])


def test_bracket_matching_skips_words_as_the_full_scan_does():
    from migrate.read import opinfo_reader as o

    def by_full_scan(data, open_at):
        depth = 0
        for m in o._TOKENS.finditer(data, open_at):
            if m.group() in o._OPEN:
                depth += 1
            elif m.group() in o._CLOSE:
                depth -= 1
                if depth == 0:
                    return m.end()
        return None

    data = (
        b"f(a, xr')' + rb\")\" + fooRb'(' # )\n"
        b"  '''\n)''' + br(x)[0], {'k': \"\\\")\"}, u'\\'(' r'\n, g(h(i)) # ( \n) tail ("
    )
    opens = [i for i, c in enumerate(data) if c in b"([{"]
    assert len(opens) > 8
    for i in opens:
        assert o._matching_close(data, i) == by_full_scan(data, i)
    assert o._matching_close(data, 1) is not None and o._matching_close(data, len(data) - 1) is None


def test_names_the_head_scan_cannot_match_are_still_found():
    """Plain names (letters, digits, ``_``, ``.``) are kept from one scan of every head; any other name is
    looked for by a pattern of its own."""
    data = b"op_db = [\n    UnaryUfuncInfo('a-b', ref=None),\n    UnaryUfuncInfo('exp', ref=None),\n    OpInfo('\xc3\xa9t\xc3\xa9'),\n]\n"
    assert [e.name for e in find_entries(data, "x.py", ["a-b", "exp"])] == ["a-b", "exp"]
    assert [e.name for e in find_entries(data, "x.py", ["exp"])] == ["exp"]
    assert [e.name for e in find_entries(data, "x.py", ["\u00e9t\u00e9"])] == ["\u00e9t\u00e9"]
    assert find_entries(data, "x.py", []) == []
    assert [e.name for e in find_entries(data, "x.py")] == ["exp"]  # every entry: the plain names


def test_a_family_no_opinfo_tests_gets_the_test_of_the_opinfo_calling_it(capsys, monkeypatch):
    """leaky_relu_backward has no OpInfo: autograd runs it for nn.functional.leaky_relu, whose gradient test is the
    one to run on a Mac; a forward family (padding) gets the caller's output test, its variant in the name."""
    from migrate.opinfo import caller_test_command, print_next_steps

    grad = "python test/test_mps.py -k test_output_grad_match_nn_functional_leaky_relu"
    assert caller_test_command("nn.functional.leaky_relu", "leaky_relu_backward") == grad
    pad = caller_test_command("nn.functional.interpolate:nearest-exact", "_upsample_nearest_exact1d")
    assert pad == "python test/test_mps.py -k test_output_match_nn_functional_interpolate_nearest-exact"

    class NoEntries:
        opinfo = None

    import migrate.opinfo as opinfo

    monkeypatch.setattr(opinfo, "test_commands", lambda index, family: [])
    print_next_steps(NoEntries(), "leaky_relu_backward", called_by="nn.functional.leaky_relu")
    assert grad in capsys.readouterr().err
    print_next_steps(NoEntries(), "leaky_relu_backward")
    assert "no OpInfo entry tests leaky_relu_backward: test it by hand" in capsys.readouterr().err

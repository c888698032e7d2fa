"""Fixes: golden trees, safety (atomic, no overlap, idempotent, byte-exact), torchgen and ruamel round trips."""

from __future__ import annotations

import difflib
import filecmp
import io
import shutil
from pathlib import Path

import pytest

from migrate.apply import plan_fixes
from migrate.errors import UsageError
from migrate.fixloop import fix_to_fixed_point, write_outcome
from migrate.model import Edit, Finding, Fix, Span
from tests.helpers import COMMON_MPS, FIXTURES, MINI, OPS, YAML, lint_json, run_cli

GOLDEN = FIXTURES / "golden"


@pytest.fixture()
def tree(tmp_path):
    dst = tmp_path / "tree"
    shutil.copytree(MINI, dst)
    return dst


def tree_diff(before: Path, after: Path) -> str:
    """Unified diff of every file that differs, in the format of ``lint --diff``."""
    from migrate.apply import unified_diff

    out = []
    for f in sorted(p for p in before.rglob("*") if p.is_file()):
        rel = f.relative_to(before).as_posix()
        old, new = f.read_bytes(), (after / rel).read_bytes()
        if old != new:
            out.append(unified_diff(rel, old, new))
    return "".join(out)


@pytest.mark.parametrize("golden,flags", [("mini-safe.diff", []), ("mini-unsafe.diff", ["--unsafe-fixes"])])
def test_golden_after_fix(tree, golden, flags):
    expected = (GOLDEN / golden).read_text()
    assert run_cli("lint", str(tree), "--diff", *flags).stdout == expected  # --diff shows it
    p = run_cli("lint", str(tree), "--fix", "--format", "json", *flags)
    assert p.returncode == 1  # unfixable findings remain
    assert tree_diff(MINI, tree) == expected  # --fix writes exactly that


def test_every_fix_kind_in_golden():
    safe = (GOLDEN / "mini-safe.diff").read_text()
    unsafe = (GOLDEN / "mini-unsafe.diff").read_text()
    # dispatch rewrite of a half-migrated family: .out already shared, Scalar_out still MPSGraph
    assert (
        "-    CPU, CUDA: copysign_scalar_out\n-    MPS: copysign_scalar_out_mps\n+    CPU, CUDA, MPS: copysign_scalar_out\n"
        in safe
    )
    # an MPS-only line with the shared kernel's own name merges too
    assert "+    CPU, CUDA, MPS: softplus_out\n" in safe
    # dead implementations with their leading comment; helpers still used stay
    assert "-TORCH_IMPL_FUNC(atan2_out_mps)" in safe and "-Tensor& copysign_scalar_out_mps(" in safe
    assert "-// Left behind by the atan2 migration" in safe
    assert "binaryOpTensor(const" not in safe and "-static void binaryOpScalar" not in safe
    assert "-CREATE_MPS_STRUCTURED_UNARY_TORCH_IMPL_FUNC(exp_out_mps, exponent)" in safe
    assert "-CREATE_MPS_STRUCTURED_UNARY_TORCH_IMPL_FUNC(exp2_out_mps" not in safe
    # stale includes only
    assert "-#include <ATen/ops/atan2_native.h>" in safe and "-#include <ATen/ops/hypot_native.h>" not in safe
    # stale xfails need --unsafe-fixes; comments around them stay
    assert "common_mps.py" not in safe
    assert '-            "atan2": None,' in unsafe and '-            "hypot"' not in unsafe
    assert "-            # not implemented natively yet" not in unsafe


def test_fix_is_idempotent_and_fixed_codes_are_gone(tree):
    run_cli("lint", str(tree), "--fix", "--unsafe-fixes")
    snapshot = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    again = run_cli("lint", str(tree), "--fix", "--unsafe-fixes", "--format", "json")
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == snapshot
    assert "applied" not in again.stderr
    codes = {f["code"] for f in lint_json(tree)}
    assert not codes & {"MPS001", "MPS004", "MPS005", "MPS009"}
    assert run_cli("lint", str(tree), "--diff").stdout == ""


def test_diff_writes_nothing_and_exit_codes(tree):
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    p = run_cli("lint", str(tree), "--diff")
    assert p.returncode == 1 and p.stdout.startswith("--- a/")
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before
    clean = run_cli("lint", str(tree), "--diff", "--select", "MPS003")
    assert clean.returncode == 0 and clean.stdout == ""


def test_only_intended_bytes_change(tree):
    outcome = fix_to_fixed_point(tree)
    for path, new in outcome.new.items():
        old = outcome.original[path].decode().splitlines(keepends=True)
        cur = new.decode().splitlines(keepends=True)
        sm = difflib.SequenceMatcher(a=old, b=cur, autojunk=False)
        changed_old = [line for tag, i1, i2, _, _ in sm.get_opcodes() if tag != "equal" for line in old[i1:i2]]
        if path == YAML:
            # only the MPS lines and the shared lines they joined
            assert all("MPS:" in line or "CPU, CUDA:" in line for line in changed_old), changed_old
        # every unchanged line is byte-identical and in order
        kept = [line for tag, i1, i2, _, _ in sm.get_opcodes() if tag == "equal" for line in old[i1:i2]]
        assert len(kept) + len(changed_old) == len(old)


def backend_index(yaml_path: Path) -> dict[tuple[str, str], str]:
    import torchgen.gen as tg

    tags = Path(tg.__file__).parent / "packaged" / "ATen" / "native" / "tags.yaml"
    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    parsed = tg.parse_native_yaml(str(yaml_path), str(tags))
    out = {}
    for key, idx in parsed.backend_indices.items():
        for op, meta in idx.index.items():
            out[(str(op), str(key))] = meta.kernel
    return out


def test_torchgen_sees_only_the_intended_mps_changes(tree):
    before = backend_index(tree / YAML)
    run_cli("lint", str(tree), "--fix")
    after = backend_index(tree / YAML)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {("copysign.Scalar_out", "MPS")}
    assert after[("copysign.Scalar_out", "MPS")] == "copysign_scalar_out"
    assert after[("softplus.out", "MPS")] == before[("softplus.out", "MPS")] == "softplus_out"


def ruamel_roundtrip(text: str) -> str:
    from ruamel.yaml import YAML

    y = YAML()
    y.preserve_quotes = True
    y.width = 1000
    y.boolean_representation = ["False", "True"]
    buf = io.StringIO()
    y.dump(y.load(text), buf)
    return buf.getvalue()


def test_nativefunctions_formatter_stays_a_no_op(tree):
    text = (tree / YAML).read_text()
    assert ruamel_roundtrip(text) == text
    run_cli("lint", str(tree), "--fix")
    fixed = (tree / YAML).read_text()
    assert fixed != text and ruamel_roundtrip(fixed) == fixed


def test_overlapping_fixes_later_one_dropped():
    src = {"f": b"0123456789"}

    def finding(code, start, end, rep):
        return Finding(code, "m", Span("f", 1, 1, 1, 2, 0, 1), fix=Fix(code, (Edit("f", start, end, rep),)))

    plan = plan_fixes([finding("A", 2, 5, "x"), finding("B", 4, 7, "y"), finding("C", 8, 9, "z")], src)
    assert plan.new_texts["f"] == b"01x567z9"
    assert [f.code for f, _ in plan.dropped] == ["B"] and "overlaps" in plan.dropped[0][1]


def test_unsafe_fixes_need_opt_in():
    src = {"f": b"abc"}
    f = Finding("X", "m", Span("f", 1, 1, 1, 2, 0, 1), fix=Fix("d", (Edit("f", 0, 1, ""),), safe=False))
    assert plan_fixes([f], src).new_texts == {}
    assert plan_fixes([f], src, unsafe=True).new_texts == {"f": b"bc"}


def test_changed_on_disk_is_refused_and_nothing_written(tree):
    outcome = fix_to_fixed_point(tree)
    assert len(outcome.new) >= 2
    victim = sorted(outcome.new)[-1]
    (tree / victim).write_bytes((tree / victim).read_bytes() + b"\n// edited meanwhile\n")
    snapshot = {p: (tree / p).read_bytes() for p in outcome.new}
    with pytest.raises(UsageError, match="changed on disk"):
        write_outcome(tree, outcome)
    assert {p: (tree / p).read_bytes() for p in outcome.new} == snapshot


def test_write_is_atomic_and_keeps_mode(tree):
    f = tree / OPS / "BinaryOps.mm"
    f.chmod(0o640)
    ino = f.stat().st_ino
    run_cli("lint", str(tree), "--fix")
    assert f.stat().st_mode & 0o777 == 0o640
    assert f.stat().st_ino != ino  # replaced by rename, not rewritten in place
    assert not [p for p in f.parent.iterdir() if p.name.endswith(".tmp")]


def test_fix_command_one_family(tree):
    p = run_cli("fix", "atan2", "--root", str(tree), "--unsafe-fixes", "--format", "json")
    assert p.returncode == 0, p.stderr
    mm = (tree / OPS / "BinaryOps.mm").read_text()
    assert "atan2_out_mps" not in mm and "atan2_native.h" not in mm
    assert "copysign_scalar_out_mps" in mm  # another family: untouched
    assert '"atan2": None' not in (tree / COMMON_MPS).read_text()
    assert '"exp": [torch.bfloat16]' in (tree / COMMON_MPS).read_text()
    assert (tree / YAML).read_bytes() == (MINI / YAML).read_bytes()


def test_fix_command_unknown_family(tree):
    p = run_cli("fix", "nosuchop", "--root", str(tree))
    assert p.returncode == 2 and "nosuchop" in p.stderr


def test_fix_command_diff(tree):
    p = run_cli("fix", "copysign", "--root", str(tree), "--diff")
    assert p.returncode == 1
    assert "+    CPU, CUDA, MPS: copysign_scalar_out" in p.stdout
    assert filecmp.cmp(tree / YAML, MINI / YAML, shallow=False)


XFAIL_CASES = [
    # (source, key to remove, expected)
    (
        'T_XFAILLIST = {\n    "a": None,\n    "atan2": None,\n    "b": None,\n}\n',
        "atan2",
        'T_XFAILLIST = {\n    "a": None,\n    "b": None,\n}\n',
    ),
    (
        'T_XFAILLIST = {\n    "a": None,\n    "atan2": [torch.float16]  # why\n}\n',
        "atan2",
        'T_XFAILLIST = {\n    "a": None,\n}\n',
    ),
    ('T_XFAILLIST = {"a": None, "atan2": None, "b": None}\n', "atan2", 'T_XFAILLIST = {"a": None, "b": None}\n'),
    ('T_XFAILLIST = {"atan2": None}\n', "atan2", "T_XFAILLIST = {}\n"),
    ('T_XFAILLIST = {"a": None, "atan2": None}\n', "atan2", 'T_XFAILLIST = {"a": None}\n'),
    (
        'T_XFAILLIST = {\n    # keep me\n    "atan2": None,\n    # and me\n}\n',
        "atan2",
        "T_XFAILLIST = {\n    # keep me\n    # and me\n}\n",
    ),
    ('T_SKIPLIST = {\n    "x",\n    "atan2",\n}\n', "atan2", 'T_SKIPLIST = {\n    "x",\n}\n'),
]


@pytest.mark.parametrize("src,key,expected", XFAIL_CASES)
def test_xfail_removal_stays_valid(src, key, expected):
    import ast

    import libcst

    from migrate.fixes import FixBuilder
    from migrate.read.xfail_reader import read_common_mps

    data = src.encode()
    cm = read_common_mps(data, "c.py")
    entry = next(e for e in cm.entries if e.key == key)

    class _Tree:
        sources = {"c.py": data}

    class _Ix:
        tree = _Tree()

    fix = FixBuilder(_Ix()).remove_xfail(entry)
    (edit,) = fix.edits
    out = (data[: edit.start] + edit.replacement.encode() + data[edit.end :]).decode()
    assert out == expected
    libcst.parse_module(out)
    ast.parse(out)


def _fix_in_memory(ix_files: dict[str, bytes], span_text: bytes):
    """The MPS005 fix of the include ``span_text`` in ``ops/A.mm`` of ``ix_files``."""
    from migrate.fixes import FixBuilder

    data = ix_files["ops/A.mm"]
    start = data.index(span_text)
    fb = FixBuilder.__new__(FixBuilder)
    fb._src = lambda path: ix_files[path]
    fix = fb.remove_include(Span("ops/A.mm", 1, 1, 1, 1, start, start + len(span_text)), "remove")
    (edit,) = fix.edits
    return data[: edit.start] + edit.replacement.encode() + data[edit.end :]


def test_the_last_include_of_a_conditional_block_takes_the_block_with_it():
    inc = b"#include <ATen/ops/zz_native.h>"
    alone = b"#include <a.h>\n\n#ifdef AT_PER_OPERATOR_HEADERS\n" + inc + b"\n#endif\n\nnamespace x {}\n"
    assert _fix_in_memory({"ops/A.mm": alone}, inc) == b"#include <a.h>\n\nnamespace x {}\n"
    two = b"#ifdef AT_PER_OPERATOR_HEADERS\n" + inc + b"\n#include <ATen/ops/yy_native.h>\n#endif\n"
    assert (
        _fix_in_memory({"ops/A.mm": two}, inc)
        == b"#ifdef AT_PER_OPERATOR_HEADERS\n#include <ATen/ops/yy_native.h>\n#endif\n"
    )
    other = b"#ifdef AT_PER_OPERATOR_HEADERS\n" + inc + b"\n#else\n#include <ATen/Functions.h>\n#endif\n"
    assert _fix_in_memory({"ops/A.mm": other}, inc).startswith(b"#ifdef AT_PER_OPERATOR_HEADERS\n#else\n")


def test_a_port_leaves_no_type_or_namespace_only_the_removed_code_used():
    from migrate.port.text_edits import _without_dead_types

    old = (
        b"namespace at::native {\nnamespace mps {\n\nstruct G : public Base {\n  int a;\n};\n\n"
        b"static void helper(G* g) {}\n\n} // namespace mps\n\nstruct Kept {\n};\n} // namespace at::native\n"
    )
    new = b"namespace at::native {\nnamespace mps {\n\nstruct G : public Base {\n  int a;\n};\n\n} // namespace mps\n"
    new += b"\nstruct Kept {\n};\n} // namespace at::native\n"
    assert _without_dead_types(old, new) == b"namespace at::native {\n\nstruct Kept {\n};\n} // namespace at::native\n"
    still = new.replace(b"\nstruct Kept", b"\nvoid f(G* g);\nstruct Kept")
    assert _without_dead_types(old, still) == still  # G is still named: it stays

"""Fix builders, planner, fix loop and atomic writer, in-process: exact edits and what they leave behind."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from migrate.apply import atomic_write, plan_fixes, unified_diff
from migrate.errors import UsageError
from migrate.fixes import FixBuilder
from migrate.fixloop import fix_to_fixed_point, write_outcome
from migrate.model import Edit, Finding, Fix, Span
from tests.helpers import FIXTURES, MINI, OPS, YAML

GOLDEN = FIXTURES / "golden"


@pytest.fixture()
def tree(tmp_path):
    dst = tmp_path / "tree"
    shutil.copytree(MINI, dst)
    return dst


def finding(code: str, *edits: tuple[int, int, str], safe: bool = True, path: str = "f") -> Finding:
    return Finding(
        code, "m", Span(path, 1, 1, 1, 2, 0, 1), fix=Fix(code, tuple(Edit(path, s, e, r) for s, e, r in edits), safe)
    )


def outcome_diff(outcome) -> str:
    return "".join(unified_diff(p, outcome.original[p], outcome.new[p]) for p in sorted(outcome.new))


# ------------------------------------------------------------------ fix loop
@pytest.mark.parametrize("golden,unsafe", [("mini-safe.diff", False), ("mini-unsafe.diff", True)])
def test_fixed_point_matches_golden_and_is_written(tree, golden, unsafe):
    outcome = fix_to_fixed_point(tree, unsafe=unsafe)
    assert outcome_diff(outcome) == (GOLDEN / golden).read_text()
    assert outcome.rounds == 2  # removing dead functions exposes their includes
    assert {f.code for f in outcome.applied} >= {"MPS001", "MPS004", "MPS005"}
    assert ("MPS009" in {f.code for f in outcome.applied}) == unsafe
    assert not [f for f in outcome.result.findings if f.fix and (unsafe or f.fix.safe)]
    assert set(outcome.original) == set(outcome.new)
    assert all(outcome.original[p] == (MINI / p).read_bytes() for p in outcome.original)
    write_outcome(tree, outcome)
    assert all((tree / p).read_bytes() == data for p, data in outcome.new.items())
    again = fix_to_fixed_point(tree, unsafe=unsafe)
    assert (again.new, again.applied, again.rounds) == ({}, [], 0)


def test_fixed_point_keep_limits_the_fixes_and_reuses_a_read_tree(tree):
    from migrate.tree import load_tree

    outcome = fix_to_fixed_point(tree, keep=lambda f, ix: f.code == "MPS010", tree=load_tree(tree))
    assert list(outcome.new) == [YAML]
    assert [f.code for f in outcome.applied] == ["MPS010"]
    new = outcome.new[YAML].decode()
    assert "    CPU, CUDA, MPS: softplus_out\n" in new and "    MPS: softplus_out\n" not in new
    assert "copysign_scalar_out_mps" in new


def test_fix_loop_records_dropped_overlaps(tree):
    outcome = fix_to_fixed_point(tree, keep=lambda f, ix: f.code in ("MPS001", "MPS002"))
    dropped = {(f.code, reason) for f, reason in outcome.dropped}
    assert outcome.rounds == 1 and [f.code for f in outcome.applied] == ["MPS001"]
    assert dropped == set()  # MPS002's fix is the same fix: applied once, not "overlapping"


def test_write_outcome_refuses_a_changed_file_and_writes_none(tree):
    outcome = fix_to_fixed_point(tree)
    first, last = sorted(outcome.new)[0], sorted(outcome.new)[-1]
    (tree / first).write_bytes(b"edited\n")
    snapshot = {p: (tree / p).read_bytes() for p in outcome.new}
    with pytest.raises(UsageError) as e:
        write_outcome(tree, outcome)
    assert str(e.value) == f"{tree / first}: file changed on disk since it was read; nothing written"
    assert {p: (tree / p).read_bytes() for p in outcome.new} == snapshot
    (tree / first).unlink()
    with pytest.raises(UsageError) as e:
        write_outcome(tree, outcome)
    assert str(e.value) == f"{tree / first}: cannot read before writing: No such file or directory"
    assert (tree / last).read_bytes() == snapshot[last]


# ------------------------------------------------------------------ planner
def test_plan_applies_bottom_up_and_drops_overlaps():
    src = {"f": b"0123456789", "g": b"abc"}
    plan = plan_fixes(
        [
            finding("A", (2, 5, "x")),
            finding("B", (4, 7, "y")),
            finding("C", (8, 9, "zz"), (0, 1, "")),
            finding("D", (0, 0, "!"), path="g"),
        ],
        src,
    )
    assert plan.new_texts == {"f": b"1x567zz9", "g": b"!abc"}
    assert [f.code for f in plan.applied] == ["A", "C", "D"]
    assert [(f.code, r) for f, r in plan.dropped] == [("B", "its edit of f overlaps an earlier fix")]


def test_plan_adjacent_edits_do_not_clash_but_two_inserts_at_one_place_do():
    src = {"f": b"0123456789"}
    plan = plan_fixes([finding("A", (2, 4, "")), finding("B", (4, 6, "")), finding("C", (0, 2, "ab"))], src)
    assert plan.new_texts == {"f": b"ab6789"} and not plan.dropped
    plan = plan_fixes([finding("A", (3, 3, "x")), finding("B", (3, 3, "y")), finding("C", (3, 5, "z"))], src)
    assert plan.new_texts == {"f": b"012xz56789"}
    assert [f.code for f, _ in plan.dropped] == ["B"]
    plan = plan_fixes([finding("A", (3, 6, "x")), finding("B", (4, 4, "y"))], src)
    assert [f.code for f, _ in plan.dropped] == ["B"]  # an insert inside a replaced range


def test_plan_skips_unsafe_and_repeated_fixes():
    src = {"f": b"abcdef"}
    unsafe = finding("U", (0, 1, ""), safe=False)
    same = Fix("S", (Edit("f", 2, 3, "X"),))
    twice = [
        Finding("S", "m", Span("f", 1, 1, 1, 2, 0, 1), fix=same),
        Finding("T", "n", Span("f", 2, 1, 2, 2, 0, 1), fix=same),
    ]
    plan = plan_fixes([unsafe, *twice, Finding("N", "m", Span("f", 1, 1, 1, 2, 0, 1))], src)
    assert plan.new_texts == {"f": b"abXdef"} and [f.code for f in plan.applied] == ["S"] and not plan.dropped
    plan = plan_fixes([unsafe, *twice], src, unsafe=True)
    assert plan.new_texts == {"f": b"bXdef"} and [f.code for f in plan.applied] == ["U", "S"]
    assert plan_fixes([], src).new_texts == {}


def test_unified_diff_names_both_sides():
    assert unified_diff("p/x.mm", b"a\nb\n", b"a\nc\n") == "--- a/p/x.mm\n+++ b/p/x.mm\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    assert unified_diff("x", b"same\n", b"same\n") == ""


# ------------------------------------------------------------- atomic write
def test_atomic_write_replaces_keeps_mode_and_leaves_no_temp(tmp_path):
    f = tmp_path / "x.mm"
    f.write_bytes(b"old")
    f.chmod(0o640)
    ino = f.stat().st_ino
    atomic_write(f, b"new", b"old")
    assert f.read_bytes() == b"new"
    assert f.stat().st_mode & 0o7777 == 0o640 and f.stat().st_ino != ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mm"]


def test_atomic_write_refuses_changed_or_missing_file(tmp_path):
    f = tmp_path / "x.mm"
    f.write_bytes(b"changed")
    with pytest.raises(UsageError) as e:
        atomic_write(f, b"new", b"old")
    assert str(e.value) == f"{f}: file changed on disk since it was read; not written"
    assert f.read_bytes() == b"changed"
    with pytest.raises(UsageError) as e:
        atomic_write(tmp_path / "missing.mm", b"new", b"old")
    assert str(e.value) == f"{tmp_path / 'missing.mm'}: cannot read before writing: No such file or directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mm"]


def test_atomic_write_failure_removes_the_temp_file(tmp_path, monkeypatch):
    f = tmp_path / "x.mm"
    f.write_bytes(b"old")

    def boom(*a):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(UsageError, match="x.mm: cannot write: disk full"):
        atomic_write(f, b"new", b"old")
    assert f.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["x.mm"]


# ----------------------------------------------------------------- builders
def delete(data: bytes, rng: tuple[int, int]) -> bytes:
    s, e = rng
    return data[:s] + data[e:]


ELEMENT_CASES = [
    # (text, element, text after removing it)
    (b'x = [\n    "a",  # why\n    "b",\n]\n', b'"a"', b'x = [\n    "b",\n]\n'),
    (b'x = [\n    "a",\n    "b"\n]\n', b'"b"', b'x = [\n    "a",\n]\n'),
    (b'x = ["a", "b", "c"]\n', b'"b"', b'x = ["a", "c"]\n'),
    (b'x = ["a", "b" , "c"]\n', b'"b"', b'x = ["a", "c"]\n'),
    (b'x = ["a", "b",\t"c"]\n', b'"b"', b'x = ["a", "c"]\n'),
    (b'x = ["a", "b", "c"]\n', b'"c"', b'x = ["a", "b"]\n'),
    (b'x = ["a",  \t"c"]\n', b'"c"', b'x = ["a"]\n'),
    (b'x = ("a",\n     "b")\n', b'"a"', b'x = ("b")\n'),
    (b'x = ("a",  \n\t "b")\n', b'"a"', b'x = ("b")\n'),
    (b'x = ("a",\n"b")\n', b'"a"', b'x = ("b")\n'),
    (b'x = ["a", "b"\t, "c"]\n', b'"b"', b'x = ["a", "c"]\n'),
    (b'    "a", "b",\n', b'"a"', b'    "b",\n'),
    (b'x = ["c"]\n', b'"c"', b"x = []\n"),
    (b'"c"]', b'"c"', b"]"),
    (b'"a",', b'"a"', b""),
]


@pytest.mark.parametrize("text,element,expected", ELEMENT_CASES)
def test_element_range_removes_one_element_and_its_separator(text, element, expected):
    s = text.index(element)
    assert delete(text, FixBuilder(None).element_range(text, s, s + len(element))) == expected


def test_line_helpers():
    data = b"ab\ncd\n\nef"
    assert [FixBuilder.line_start(data, p) for p in (0, 2, 3, 5, 6, 7, 9)] == [0, 0, 3, 3, 6, 7, 7]
    assert [FixBuilder.line_end(data, p) for p in (0, 2, 3, 6, 7, 9)] == [3, 3, 6, 7, 9, 9]
    assert (FixBuilder.line_start(b"\nab", 2), FixBuilder.line_end(b"\nab", 0)) == (1, 1)  # a first empty line


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


HEAD = "#include <ATen/native/mps/OperationUtils.h>\n"


@pytest.mark.parametrize(
    "before,after",
    [
        # the leading comment belongs to the definition; one blank line stays
        (
            HEAD
            + "\n// gone\n// really\nTensor& dead_mps(Tensor& out) {\n  return out;\n}\n\nint keep() { return 1; }\n",
            HEAD + "\nint keep() { return 1; }\n",
        ),
        # at the top of the file
        (
            "Tensor& dead_mps(Tensor& out) {\n  return out;\n}\n\nint keep() { return 1; }\n",
            "int keep() { return 1; }\n",
        ),
        # last in the file
        (HEAD + "\nTensor& dead_mps(Tensor& out) {\n  return out;\n}\n", HEAD + "\n"),
        # no blank line before: the one after stays
        (
            HEAD
            + "int keep() { return 1; }\nTensor& dead_mps(Tensor& out) {\n  return out;\n}\n\nint more() { return 2; }\n",
            HEAD + "int keep() { return 1; }\n\nint more() { return 2; }\n",
        ),
        # a trailing ';' goes with the definition
        (HEAD + "\nTensor& dead_mps(Tensor& out) {\n  return out;\n};\n", HEAD + "\n"),
        # a comment above a blank line is not the definition's
        (HEAD + "// unrelated\n\nTensor& dead_mps(Tensor& out) {\n  return out;\n}\n", HEAD + "// unrelated\n\n"),
        # an empty // line is a comment line too
        (
            HEAD + "//\nTensor& dead_mps(Tensor& out) {\n  return out;\n}\nint keep() { return 1; }\n",
            HEAD + "int keep() { return 1; }\n",
        ),
        # first in the file, a comment last in the file stays
        (
            "Tensor& dead_mps(Tensor& out) {\n  return out;\n}\n\nint keep() { return 1; }\n// the end\n",
            "int keep() { return 1; }\n// the end\n",
        ),
        # after two blank lines at the top: one blank line of the pair around it goes
        (
            "\n\nTensor& dead_mps(Tensor& out) {\n  return out;\n}\n\nint keep() { return 1; }\n",
            "\n\nint keep() { return 1; }\n",
        ),
        # a block comment line is a comment too; code before it is not
        (
            HEAD + "int keep() { return 1; }\n/* old\n * still\n */\nTensor& dead_mps(Tensor& out) { return out; }\n",
            HEAD + "int keep() { return 1; }\n",
        ),
    ],
)
def test_dead_function_removal_text(tmp_path, before, after):
    write(tmp_path, YAML, "- func: keep(Tensor self) -> Tensor\n")
    write(tmp_path, f"{OPS}/Dead.mm", before)
    outcome = fix_to_fixed_point(tmp_path, keep=lambda f, ix: f.code == "MPS004")
    assert outcome.new[f"{OPS}/Dead.mm"].decode() == after


def test_dead_function_sharing_a_line_is_reported_without_fix(tmp_path):
    write(tmp_path, YAML, "- func: keep(Tensor self) -> Tensor\n")
    write(tmp_path, f"{OPS}/Dead.mm", "int x = 1; Tensor& dead_mps(Tensor& out) {\n  return out;\n}\n")
    from migrate.lint import lint_tree
    from migrate.tree import load_tree

    (f,) = [f for f in lint_tree(load_tree(tmp_path)).findings if f.code == "MPS004"]
    assert f.kernel == "dead_mps" and f.fix is None


GRAPH_MM = """#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
static void k_kernel_mps(TensorIteratorBase& iter) {
  lib.exec_unary_kernel(iter, "k");
}
REGISTER_DISPATCH(k_stub, &k_kernel_mps)
Tensor& k_out_mps(const Tensor& self, Tensor& out) {
  MPSGraph* g = nullptr;
  return out;
}
}
"""


@pytest.mark.parametrize(
    "entry,fixed",
    [
        # rerouted: MPS joins the shared line
        ("  dispatch:\n    CPU, CUDA: k_out\n    MPS: k_out_mps\n", "  dispatch:\n    CPU, CUDA, MPS: k_out\n"),
        ("  dispatch:\n    MPS: k_out_mps\n    CPU, CUDA: k_out\n", "  dispatch:\n    CPU, CUDA, MPS: k_out\n"),
        # not rerouted: registered manually, or no line gives both CPU and CUDA the shared kernel
        ("  manual_kernel_registration: True\n  dispatch:\n    CPU, CUDA: k_out\n    MPS: k_out_mps\n", None),
        ("  dispatch:\n    CPU: k_out\n    MPS: k_out_mps\n", None),
        (
            "  dispatch:\n    CPU, CUDA, XPU: k_out\n    CUDA: k_out_cuda\n    MPS: k_out_mps\n",
            "  dispatch:\n    CPU, CUDA, MPS, XPU: k_out\n    CUDA: k_out_cuda\n",
        ),
    ],
)
def test_reroute_to_the_shared_kernel_only_when_legal(tmp_path, entry, fixed):
    head = "- func: k.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
    write(tmp_path, YAML, head + entry)
    write(tmp_path, f"{OPS}/K.mm", GRAPH_MM)
    write(tmp_path, "aten/src/ATen/native/mps/kernels/K.metal", "REGISTER_UNARY_OP(k, float, float);\n")
    outcome = fix_to_fixed_point(tmp_path, keep=lambda f, ix: f.code == "MPS002")
    assert outcome.new.get(YAML) == (None if fixed is None else (head + fixed).encode())


@pytest.mark.parametrize(
    "line,merged",
    [
        ("    CPU, CUDA: s_out\n    MPS: s_out\n", "    CPU, CUDA, MPS: s_out\n"),
        ("    MPS: s_out\n    CPU,CUDA: s_out\n", "    CPU,CUDA,MPS: s_out\n"),
        ("    CPU: s_out\n    MPS: s_out\n", "    CPU, MPS: s_out\n"),
        ("    CPU, XPU: s_out\n    MPS: s_out\n", "    CPU, XPU, MPS: s_out\n"),
        ("    CPU, CUDA: s_other\n    MPS: s_out\n", None),
    ],
)
def test_mps_only_line_merges_into_the_line_with_the_same_kernel(tmp_path, line, merged):
    head = "- func: s.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
    write(tmp_path, YAML, head + line)
    outcome = fix_to_fixed_point(tmp_path, keep=lambda f, ix: f.code == "MPS010")
    assert outcome.new.get(YAML) == (None if merged is None else (head + merged).encode())


def test_overlapping_fixes_wait_for_the_next_round(tmp_path):
    fams = ("a", "b")
    write(
        tmp_path,
        YAML,
        "".join(
            f"- func: {n}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
            f"    CPU, CUDA, MPS: {n}_out\n\n"
            for n in fams
        ),
    )
    write(
        tmp_path,
        f"{OPS}/K.mm",
        "namespace at::native {\n"
        + "".join(
            f'static void {n}_kernel_mps(TensorIteratorBase& iter) {{\n  lib.exec_unary_kernel(iter, "{n}");\n}}\n'
            f"REGISTER_DISPATCH({n}_stub, &{n}_kernel_mps)\n"
            for n in fams
        )
        + "}\n",
    )
    write(
        tmp_path,
        "aten/src/ATen/native/mps/kernels/K.metal",
        "".join(f"REGISTER_UNARY_OP({n}, float, float);\n" for n in fams),
    )
    cm = "torch/testing/_internal/common_mps.py"
    write(tmp_path, cm, 'ON_MPS_XFAILLIST = {"a": None, "b": None}\n')
    outcome = fix_to_fixed_point(tmp_path, unsafe=True)
    assert outcome.new == {cm: b"ON_MPS_XFAILLIST = {}\n"}
    assert outcome.rounds == 2 and [f.code for f in outcome.applied] == ["MPS009", "MPS009"]
    assert [(f.code, r) for f, r in outcome.dropped] == [("MPS009", f"its edit of {cm} overlaps an earlier fix")]
    assert fix_to_fixed_point(tmp_path).new == {}  # the fixes are unsafe


def test_atomic_write_renames_from_the_same_folder(tmp_path, monkeypatch):
    f = tmp_path / "x.mm"
    f.write_bytes(b"old")
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append((Path(src).parent, Path(src).read_bytes(), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    atomic_write(f, b"new", b"old")
    assert renames == [(tmp_path, b"new", f)]  # a rename within one file system is atomic


def test_no_reroute_to_a_stub_nothing_registers_for_mps(tmp_path):
    head = "- func: k.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
    write(tmp_path, YAML, head + "  dispatch:\n    CPU, CUDA: k_out\n    MPS: k_out_mps\n")
    write(tmp_path, f"{OPS}/K.mm", GRAPH_MM.replace("REGISTER_DISPATCH(k_stub, &k_kernel_mps)", ""))
    write(tmp_path, "aten/src/ATen/native/K.h", "namespace at::native {\nDECLARE_DISPATCH(unary_fn, k_stub)\n}\n")
    outcome = fix_to_fixed_point(tmp_path, keep=lambda f, ix: f.code == "MPS002")
    assert outcome.new == {} and outcome.applied == []


def test_fixed_point_lints_every_round_with_the_config_and_paths_given(tree):
    from migrate.config import Config

    outcome = fix_to_fixed_point(tree, Config(select=["MPS005"]))
    assert sorted(outcome.new) == [f"{OPS}/BinaryOps.mm", f"{OPS}/UnaryOps.mm"]
    assert {f.code for f in outcome.applied} == {"MPS005"} and outcome.rounds == 1
    outcome = fix_to_fixed_point(tree, only=[YAML, f"{OPS}/BinaryOps.mm"])
    assert sorted(outcome.new) == [f"{OPS}/BinaryOps.mm", YAML]
    assert outcome.rounds == 2


def test_fixed_point_starts_from_the_tree_given_and_passes_the_index_to_keep(tree):
    from migrate.tree import load_tree

    text = (tree / YAML).read_bytes().replace(b"    MPS: softplus_out\n", b"")
    outcome = fix_to_fixed_point(
        tree,
        tree=load_tree(tree, {YAML: text}),
        keep=lambda f, ix: f.overload in ix.entries and ix.entries[f.overload].name == "copysign",
    )
    assert outcome.original[YAML] == text and b"softplus_out\n    MPS" not in outcome.new[YAML]
    assert [f.overload for f in outcome.applied] == ["copysign.Scalar_out"]


def test_plan_goes_on_after_findings_without_fix():
    src = {"f": b"abc"}
    plan = plan_fixes([Finding("N", "m", Span("f", 1, 1, 1, 2, 0, 1)), finding("A", (0, 1, "X"))], src)
    assert plan.new_texts == {"f": b"Xbc"} and [f.code for f in plan.applied] == ["A"]

"""MPS022's fix: the overridden key goes from the earlier line, every other byte stays."""

from __future__ import annotations

import pytest

from migrate.fixloop import fix_to_fixed_point
from tests.helpers import YAML
from tests.test_rule_cases import build

HEAD = "- func: atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
TAIL = "  tags: pointwise\n"


def fixed(tmp_path, lines: list[str], unsafe: bool) -> tuple[str, list]:
    text = HEAD + "".join(f"    {line}\n" for line in lines) + TAIL
    root = build(tmp_path / "t", {"yaml": text})
    outcome = fix_to_fixed_point(root, unsafe=unsafe, keep=lambda f, ix: f.code == "MPS022")
    new = outcome.new.get(YAML, text.encode()).decode()
    assert new.startswith(HEAD) and new.endswith(TAIL)
    return new[len(HEAD) : -len(TAIL)], outcome.applied


@pytest.mark.parametrize(
    "lines, unsafe, after",
    [
        # different kernels: unsafe (the later line may be the stale one), so --fix alone leaves it
        (["CPU, CUDA, MPS: atan2_out", "MPS: atan2_out_mps"], False, None),
        (["CPU, CUDA, MPS: atan2_out", "MPS: atan2_out_mps"], True, ["CPU, CUDA: atan2_out", "MPS: atan2_out_mps"]),
        (["MPS, CPU: atan2_out", "MPS: atan2_out_mps"], True, ["CPU: atan2_out", "MPS: atan2_out_mps"]),
        (["CPU,MPS ,CUDA: atan2_out", "MPS: atan2_out_mps"], True, ["CPU ,CUDA: atan2_out", "MPS: atan2_out_mps"]),
        # the same kernel: safe
        (["MPS: atan2_out", "CPU, CUDA, MPS: atan2_out"], False, ["CPU, CUDA, MPS: atan2_out"]),
        (
            ["CPU, MPS: atan2_out", "CUDA: atan2_cuda", "CPU, MPS: atan2_out"],
            False,
            ["CUDA: atan2_cuda", "CPU, MPS: atan2_out"],
        ),
        (["CPU, MPS, CUDA: atan2_out", "MPS: atan2_out"], False, ["CPU, CUDA: atan2_out", "MPS: atan2_out"]),
    ],
)
def test_the_fix_removes_the_overridden_key(tmp_path, lines, unsafe, after):
    got, applied = fixed(tmp_path, lines, unsafe)
    want = lines if after is None else after
    assert got == "".join(f"    {line}\n" for line in want)
    assert bool(applied) == (after is not None)
    assert all(f.code == "MPS022" for f in applied)


def test_findings_name_the_key_the_overriding_line_and_its_kernel(tmp_path):
    from migrate.config import Config
    from migrate.lint import lint_tree
    from migrate.tree import load_tree

    text = HEAD + "    CPU, CUDA, MPS: atan2_out\n    CPU: atan2_cpu\n    MPS: atan2_out_mps\n" + TAIL
    root = build(tmp_path / "t", {"yaml": text})
    got = lint_tree(load_tree(root), Config(select=["MPS022"])).findings
    assert [(f.line, f.column, f.end_column, f.overload, f.kernel, f.fix.safe) for f in got] == [
        (3, 5, 8, "atan2.out", "atan2_out", False),
        (3, 16, 19, "atan2.out", "atan2_out", False),
    ]
    assert [f.message.split(";")[0] for f in got] == [
        "CPU is given again on line 4 (atan2_cpu)",
        "MPS is given again on line 5 (atan2_out_mps)",
    ]
    assert [f.fix.description for f in got] == [
        "remove the CPU of atan2.out's line 3, which line 4 overrides",
        "remove the MPS of atan2.out's line 3, which line 5 overrides",
    ]

"""MPS022's fix: the overridden key goes from the earlier line, every other byte stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrate.fixloop import fix_to_fixed_point
from tests.helpers import YAML
from migrate.checks.mps022_shadowed_dispatch_key import DUPLICATE
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
    assert [f.message for f in got] == [
        "CPU is given again on line 4: torchgen keeps that line's atan2_cpu, so this CPU has no effect",
        "MPS is given again on line 5: torchgen keeps that line's atan2_out_mps, so this MPS has no effect",
    ]
    assert [f.fix.description for f in got] == [
        "remove the CPU of atan2.out's line 3, which line 4 overrides",
        "remove the MPS of atan2.out's line 3, which line 5 overrides",
    ]


def test_on_the_wheels_yaml_torchgen_reads_the_same_before_and_after_the_fix(tmp_path):
    """The premise and the fix, against torchgen: in the torch wheel's native_functions.yaml with MPS added to
    shared lines above their old MPS lines, torchgen routes MPS by the later lines; with one MPS line doubled
    too, it refuses the file.  MPS022 reports the seven, and its fixes (unsafe ones too) give back the yaml
    whose backend index torchgen read before the doubling."""
    import re

    import torchgen

    from tests.helpers import run_cli
    from tests.test_fix import backend_index

    text = (Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml").read_text()
    pairs = list(re.finditer(r"\n    CPU, CUDA: (\w+)\n    MPS: (\w+)\n", text))[:6]
    assert len(pairs) == 6, "the wheel's yaml has fewer shared-line + MPS-line pairs than this test edits"
    edited, last = [], 0
    for m in pairs:
        edited += [text[last : m.start()], f"\n    CPU, CUDA, MPS: {m[1]}\n    MPS: {m[2]}\n"]
        last = m.end()
    edited.append(text[last:])
    text = "".join(edited)
    root = tmp_path / "t"
    (root / YAML).parent.mkdir(parents=True)
    (root / YAML).write_text(text)
    before = backend_index(root / YAML)
    for m in pairs:  # torchgen keeps the later line
        assert [k for k, v in before.items() if k[1] == "MPS" and v == m[2]], m[2]
    twice = re.search(r"\n    MPS: (\w+)\n", text[last + 400 :])
    at = last + 400 + twice.end()
    text = text[:at] + f"    MPS: {twice[1]}\n" + text[at:]
    (root / YAML).write_text(text)
    with pytest.raises(AssertionError, match="duplicate key"):  # one MPS key twice: torchgen refuses the file
        backend_index(root / YAML)
    lint = run_cli("lint", str(root), "--select", "MPS022", "--format", "json")
    assert len(json.loads(lint.stdout)) == 7
    run_cli("lint", str(root), "--select", "MPS022", "--fix", "--unsafe-fixes")
    assert (root / YAML).read_text() != text
    assert backend_index(root / YAML) == before
    again = run_cli("lint", str(root), "--select", "MPS022", "--format", "json")
    assert json.loads(again.stdout) == []


def test_every_entry_and_line_is_read_and_a_duplicate_key_names_its_lines(tmp_path):
    """Entries with one line, or with no key named twice, before the ones reported; a duplicate map key and
    an override later in the same entry; each finding's fields and its fix."""
    from migrate.config import Config
    from migrate.lint import lint_tree
    from migrate.tree import load_tree

    text = (
        "- func: a(Tensor self) -> Tensor\n  dispatch:\n    CPU: a_cpu\n\n"
        "- func: b(Tensor self) -> Tensor\n  dispatch:\n    CPU: b_cpu\n    MPS: b_mps\n\n"
        "- func: c.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
        "    MPS: c_out_mps\n    MPS: c_out_metal\n    CPU: c_old\n    CPU, CUDA: c_out\n"
    )
    root = build(tmp_path / "t", {"yaml": text})
    got = lint_tree(load_tree(root), Config(select=["MPS022"])).findings
    assert [(f.line, f.column, f.overload, f.kernel, f.fix.safe) for f in got] == [
        (12, 5, "c.out", "c_out_mps", False),
        (14, 5, "c.out", "c_old", False),
    ]
    assert got[0].message == f"MPS is given again on line 13: {DUPLICATE}"
    assert got[0].end_column == len("    MPS: c_out_mps") + 1  # the whole line: its keys are the map key
    assert [f.fix.description for f in got] == [
        "remove the line of c.out's line 12, which line 13 overrides",
        "remove the line of c.out's line 14, which line 15 overrides",
    ]
    data = (root / YAML).read_bytes()
    assert [[(data[e.start : e.end], e.replacement) for e in f.fix.edits] for f in got] == [
        [(b"    MPS: c_out_mps\n", "")],
        [(b"    CPU: c_old\n", "")],
    ]


def test_explain_says_which_earlier_lines_name_mps_without_effect(tmp_path):
    from migrate.index import Index
    from migrate.tree import load_tree

    text = HEAD + "    CPU, CUDA, MPS: atan2_out\n    Meta, MPS: atan2_out_meta\n    MPS: atan2_out_mps\n"
    text += "- func: hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
    text += "    CPU, CUDA: hypot_out\n    MPS: hypot_out_mps\n"
    text += "- func: xlogy.OutTensor(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n"
    text += "    CPU, CUDA, MPS: xlogy_out\n    MPS: xlogy_out_mps\n"
    ix = Index(load_tree(build(tmp_path / "t", {"yaml": text})))
    hops = ix.routes["atan2.out"].hops
    assert hops[0] == f"MPS: atan2_out_mps @ {YAML}:5"
    notes = (
        "line 3 (CPU, CUDA, MPS: atan2_out) names MPS too, without effect: this later line wins (MPS022)",
        "line 4 (Meta, MPS: atan2_out_meta) names MPS too, without effect: this later line wins (MPS022)",
    )
    assert hops[1:3] == notes and [h for h in hops if "MPS022" in h] == list(notes)
    assert not [h for h in ix.routes["hypot.out"].hops if "MPS022" in h]  # CPU and CUDA lines shadow no MPS
    assert ix.routes["xlogy.OutTensor"].hops[1].startswith("line 12 (CPU, CUDA, MPS: xlogy_out) names MPS too")


STALE_YAML = """- func: rnd(Tensor self) -> Tensor
  structured_delegate: rnd.out

- func: rnd.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA, MPS: rnd_out
    MPS: rnd_out_mps
  tags: pointwise

- func: rnd.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    MPS: rnd_decimals_out_mps
"""
STALE_OPS = """namespace at::native {
static void rnd_kernel_mps(TensorIteratorBase& iter) {
  LAUNCH
}
REGISTER_DISPATCH(rnd_stub, &rnd_kernel_mps)
TORCH_IMPL_FUNC(rnd_out_mps)(const Tensor& self, const Tensor& out) {
  MPSGraph* g = nullptr;
}
Tensor& rnd_decimals_out_mps(const Tensor& self, int64_t decimals, Tensor& out) {
  lib.exec_unary_kernel(iter, "rnd_decimals");
  return out;
}
}
"""
STALE_METAL = "REGISTER_UNARY_OP(rnd, float, float);\nREGISTER_UNARY_OP(rnd_decimals, float, float);\n"


GRAPH_BODY = "MPSGraph* g = nullptr;"
METAL_BODY = 'lib.exec_unary_kernel(iter, "rnd");'
STALE = "remove rnd.out's line 7 (MPSGraph kernel rnd_out_mps): MPS runs the shared line 6's rnd_out"
DROP = "remove the MPS of rnd.out's line 6, which line 7 overrides"


@pytest.mark.parametrize(
    "launch, registered, old_body, unsafe, after, fix",
    [
        # the shared stub's MPS side launches a registered Metal kernel: the old MPSGraph line goes (safe)
        (METAL_BODY, True, GRAPH_BODY, False, ["CPU, CUDA, MPS: rnd_out"], STALE),
        # it names no kernel that can be checked: the same edit, unsafe
        ("rnd_helper(iter);", True, GRAPH_BODY, False, None, None),
        ("rnd_helper(iter);", True, GRAPH_BODY, True, ["CPU, CUDA, MPS: rnd_out"], STALE),
        # no MPS registration of the stub: MPS would not run native Metal there, so MPS leaves the shared line
        (METAL_BODY, False, GRAPH_BODY, True, ["CPU, CUDA: rnd_out", "MPS: rnd_out_mps"], DROP),
        (METAL_BODY, False, GRAPH_BODY, False, None, None),
        # the old line runs Metal too: nothing says which line is stale
        (METAL_BODY, True, METAL_BODY, True, ["CPU, CUDA: rnd_out", "MPS: rnd_out_mps"], DROP),
    ],
)
def test_a_migration_left_half_done_loses_its_old_mps_line(tmp_path, launch, registered, old_body, unsafe, after, fix):
    _old_line_fix(tmp_path, STALE_YAML, launch, registered, old_body, unsafe, after, fix)


def test_an_earlier_mps_line_shared_with_no_device_backend_loses_its_mps(tmp_path):
    """``SparseMPS, MPS: rnd_out`` is no shared line (no CPU, CUDA, ... key): MPS leaves it, the later line stays."""
    yaml = STALE_YAML.replace("    CPU, CUDA, MPS: rnd_out\n", "    SparseMPS, MPS: rnd_out\n")
    after = ["SparseMPS: rnd_out", "MPS: rnd_out_mps"]
    drop = "remove the MPS of rnd.out's line 6, which line 7 overrides"
    _old_line_fix(tmp_path, yaml, METAL_BODY, True, GRAPH_BODY, True, after, drop, "    SparseMPS, MPS: rnd_out\n")


def _old_line_fix(
    tmp_path, yaml, launch, registered, old_body, unsafe, after, fix, first="    CPU, CUDA, MPS: rnd_out\n"
):
    ops = STALE_OPS.replace("LAUNCH", launch).replace(GRAPH_BODY, old_body)
    if not registered:
        ops = ops.replace("REGISTER_DISPATCH(rnd_stub, &rnd_kernel_mps)\n", "")
    root = build(tmp_path / "t", {"yaml": yaml, "ops/Ops.mm": ops, "kernels/K.metal": STALE_METAL})
    outcome = fix_to_fixed_point(root, unsafe=unsafe, keep=lambda f, ix: f.code == "MPS022")
    new = outcome.new.get(YAML, yaml.encode()).decode()
    block = first + "    MPS: rnd_out_mps\n"
    want = block if after is None else "".join(f"    {line}\n" for line in after)
    assert block in yaml and new == yaml.replace(block, want)
    assert [f.fix.description for f in outcome.applied] == ([] if fix is None else [fix])


def test_mps001_sends_a_half_done_migration_to_fix(tmp_path):
    from migrate.config import Config
    from migrate.lint import lint_tree
    from migrate.tree import load_tree

    ops = STALE_OPS.replace("LAUNCH", 'lib.exec_unary_kernel(iter, "rnd");')
    root = build(tmp_path / "t", {"yaml": STALE_YAML, "ops/Ops.mm": ops, "kernels/K.metal": STALE_METAL})
    (f,) = lint_tree(load_tree(root), Config(select=["MPS001"])).findings
    assert (f.line, f.fix) == (7, None)  # MPS001's own reroute has no MPS-free line to join: MPS022's fix does it
    assert f.message.endswith("; next: mps-migrate fix rnd")
    meta_first = STALE_YAML.replace(
        "    CPU, CUDA, MPS: rnd_out\n", "    Meta: rnd_meta\n    CPU, CUDA, MPS: rnd_out\n"
    )
    root = build(tmp_path / "m", {"yaml": meta_first, "ops/Ops.mm": ops, "kernels/K.metal": STALE_METAL})
    (f,) = lint_tree(load_tree(root), Config(select=["MPS001"])).findings
    assert f.message.endswith("; next: mps-migrate fix rnd")  # the line naming MPS, not the entry's first
    unregistered = ops.replace("REGISTER_DISPATCH(rnd_stub, &rnd_kernel_mps)\n", "")
    root = build(tmp_path / "u", {"yaml": STALE_YAML, "ops/Ops.mm": unregistered, "kernels/K.metal": STALE_METAL})
    (f,) = lint_tree(load_tree(root), Config(select=["MPS001"])).findings
    assert f.message.endswith("; next: mps-migrate port rnd")  # no MPS side of the stub yet: a port


@pytest.mark.parametrize(
    "launch, unsafe, after, fix",
    [
        (METAL_BODY, False, ["CPU, CUDA, MPS: rnd_out"], STALE),  # proven: safe, applied without --unsafe-fixes
        ("rnd_helper(iter);", False, None, None),  # unproven: unsafe, left alone
        ("rnd_helper(iter);", True, ["CPU, CUDA, MPS: rnd_out"], STALE),
    ],
)
def test_mps001_old_line_fix_says_which_line_goes_and_is_as_safe_as_its_proof(tmp_path, launch, unsafe, after, fix):
    """The old-line fix is MPS001's (``stale_mps_line``, applied through MPS022): its description, edit and safety."""
    _old_line_fix(tmp_path, STALE_YAML, launch, True, GRAPH_BODY, unsafe, after, fix)

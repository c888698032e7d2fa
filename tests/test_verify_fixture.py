"""verify on fixtures/mini: the real functors pass; deliberately broken kernels
(one per reproducible regression class of docs/domain.md section 7) fail with
exit 1 and a useful first-failing-element report."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
import torch

from migrate.cli import main
from migrate.device.cpu.backend import torch_include_dir
from migrate.verify.host import storage_start_read
from migrate.verify.report import to_text
from migrate.verify.run import Options, first_failure, verify

MINI = Path(__file__).resolve().parent.parent / "fixtures" / "mini"
KERNELS = "aten/src/ATen/native/mps/kernels"
FLOATS = [torch.float32, torch.float16, torch.bfloat16]


@pytest.fixture(scope="module")
def reports():
    return {fam: verify(MINI, fam) for fam in ("atan2", "copysign", "exp")}


def failing(report):
    return {(c.dtype, c.layout): c for c in report.cells if c.status == "FAIL"}


def copy_tree(tmp_path: Path, with_headers: bool = False) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(MINI, root)
    if with_headers:
        shutil.copytree(torch_include_dir() / "c10" / "metal", root / "c10" / "metal")
    return root


def edit(root: Path, rel: str, old: str, new: str) -> None:
    f = root / rel
    text = f.read_text()
    assert old in text, f"{old!r} not in {rel}"
    f.write_text(text.replace(old, new, 1))


def header_patch(root: Path, old: str, new: str) -> tuple[str, str]:
    """A unified diff changing the tree's c10/metal/indexing.h (applied in memory by verify)."""
    rel = "c10/metal/indexing.h"
    text = (root / rel).read_text()
    assert old in text, old
    changed = text.replace(old, new, 1)
    diff = "".join(difflib.unified_diff(text.splitlines(True), changed.splitlines(True), f"a/{rel}", f"b/{rel}"))
    return diff, "regression.diff"


# ------------------------------------------------------------ clean kernels
# the fixture's common_mps.py still expects these OpInfos to fail on MPS (it is MPS009's fixture)
MINI_STALE = {"atan2": "UNIMPLEMENTED_XFAILLIST", "copysign": "ON_MPS_XFAILLIST", "exp": "ON_MPS_XFAILLIST"}


@pytest.mark.parametrize("family", ["atan2", "copysign", "exp"])
def test_fixture_functors_pass_against_torch_cpu(reports, family):
    r = reports[family]
    assert not [c for c in r.cells if c.status in ("FAIL", "BLOCKED")], to_text(r)
    # every sample passes where the tree expects a failure: XPASS (stale expectation), which exits 1
    xpass = [c for c in r.cells if c.status == "XPASS"]
    assert xpass and all(c.layout.startswith("opinfo:") and c.expected.table == MINI_STALE[family] for c in xpass)
    assert r.exit_code == 1
    assert "the expectation is stale: remove " in to_text(r) and "(MPS009's fix)" in to_text(r)  # common_mps.py
    ran = [c for c in r.cells if c.cases]
    assert {c.dtype for c in ran} >= {"float32", "float16", "bfloat16"}
    assert all(c.stats.elements or c.layout == "empty" for c in ran)


def test_every_generated_binary_variant_is_exercised(reports):
    kernels = set().union(*(c.kernels for c in reports["copysign"].cells))
    for variant in [
        "dense",
        "dense_ilp4",
        "strided",
        "dense_broadcast",
        "dense_broadcast_rhs",
        "dense_scalar",
        "dense_scalar_lhs",
        "dense_scalar_cast",
        "dense_cast",
        "strided_cast",
    ]:
        assert any(k.startswith(f"copysign_{variant}_") for k in kernels), variant
    unary = set().union(*(c.kernels for c in reports["exp"].cells))
    for variant in ["dense_scalar", "dense", "strided", "dense_castout"]:
        assert any(k.startswith(f"exp_{variant}_") for k in unary), variant


def test_references_and_their_disagreement_are_reported(reports):
    cs = reports["copysign"]
    assert cs.references == ["torch-cpu", "old-mpsgraph"]
    # the fixture's MPSGraph copysign ignores the sign of -0.0: reported apart, not a kernel failure
    text = to_text(cs)
    assert "the old MPSGraph path differed from CPU here" in text and "-0.0" in text
    assert any("old MPSGraph reference unavailable:" in n for n in reports["exp"].notes)


def test_coverage_gaps_are_noted(reports):
    notes = " ".join(reports["exp"].notes)
    assert "complex64" in notes and "int64" in notes


# ----------------------------------------------------- regression classes
def test_wrong_sign_of_negative_zero_is_caught(tmp_path):
    root = copy_tree(tmp_path)
    edit(
        root,
        f"{KERNELS}/BinaryKernel.metal",
        "::metal::copysign(float(a), float(b)));",
        "::metal::copysign(float(a), float(b) == 0 ? 1.0f : float(b)));",
    )
    r = verify(root, "copysign", opts=Options(dtypes=[torch.float32], layouts=["contiguous", "odd_size"]))
    assert r.exit_code == 1
    cell = failing(r)[("float32", "contiguous")]
    assert "-0.0" in first_failure(cell) and "copysign_dense" in first_failure(cell)


def test_python_scalar_read_with_the_wrong_type_is_caught(tmp_path):
    # pytorch#152582: torch.copysign(t, -2.0) wrong; here the scalar_cast kernel reads the
    # wrapped float scalar with the tensor's type (patched indexing.h, applied with --patch)
    root = copy_tree(tmp_path, with_headers=True)
    patch = header_patch(
        root,
        "val_at_offs<om_t>(scalar, 0, static_cast<ScalarType>(sizes_types.w));",
        "val_at_offs<om_t>(scalar, 0, static_cast<ScalarType>(sizes_types.z));",
    )
    r = verify(root, "copysign", patch, Options(dtypes=[torch.float16], layouts=["python_scalar", "contiguous"]))
    assert r.exit_code == 1
    bad = failing(r)
    assert set(bad) == {("float16", "python_scalar")}
    assert "-2.0" in first_failure(bad[("float16", "python_scalar")])


def test_cpu_scalar_read_at_storage_start_is_caught():
    # #187229: a 0-dim CPU scalar with a storage offset was read at offset 0 (a host bug:
    # injected into the emulated host's binding; the cpu_scalar_offset layout catches it)
    r = verify(
        MINI,
        "copysign",
        opts=Options(
            dtypes=[torch.float32], layouts=["cpu_scalar_offset", "python_scalar"], scalar_read=storage_start_read
        ),
    )
    assert r.exit_code == 1
    assert set(failing(r)) == {("float32", "cpu_scalar_offset")}


def test_kernel_writing_its_read_only_input_is_caught(tmp_path):
    # #186580: a read-only buffer bound as writable
    root = copy_tree(tmp_path, with_headers=True)
    patch = header_patch(
        root,
        "  output[index] = f(input[index]);",
        "  output[index] = f(input[index]);\n  const_cast<device T*>(input)[index] = T(0);",
    )
    r = verify(root, "exp", patch, Options(dtypes=[torch.float32], layouts=["odd_size"]))
    assert r.exit_code == 1
    assert "input buffer was modified" in first_failure(failing(r)[("float32", "odd_size")])


def test_castout_that_writes_nothing_is_caught(tmp_path):
    # #197715: a cast-out to an unsupported dtype silently wrote nothing (sentinel-filled output)
    root = copy_tree(tmp_path, with_headers=True)
    patch = header_patch(
        root,
        "    T value) {\n  switch (type) {",
        "    T value) {\n  if (type == ScalarType::Half) return;\n  switch (type) {",
    )
    r = verify(root, "exp", patch, Options(dtypes=[torch.float32], layouts=["out_cast", "contiguous"]))
    assert r.exit_code == 1
    bad = failing(r)
    assert set(bad) == {("float32", "out_cast")}
    assert "exp_dense_castout_float" in first_failure(bad[("float32", "out_cast")])


def test_ilp_tail_not_a_multiple_of_the_width_is_caught(tmp_path):
    # partial groups (#187788 class): the ILP tail loop drops the last element
    root = copy_tree(tmp_path, with_headers=True)
    patch = header_patch(
        root,
        "    for (uint i = base; i < numel; ++i) {\n      output[i] = f(input[i]);",
        "    for (uint i = base; i + 1 < numel; ++i) {\n      output[i] = f(input[i]);",
    )
    r = verify(root, "exp", patch, Options(dtypes=[torch.float32], layouts=["odd_size", "strided"]))
    assert r.exit_code == 1
    bad = failing(r)
    assert set(bad) == {("float32", "odd_size")}  # the strided kernel has no ILP tail
    msg = first_failure(bad[("float32", "odd_size")])
    assert "at [36]" in msg and "exp_dense_float_float" in msg


def test_exp_that_flushes_subnormals_is_caught(tmp_path):
    root = copy_tree(tmp_path)
    edit(
        root,
        f"{KERNELS}/UnaryKernel.metal",
        "return static_cast<T>(precise::exp(float(x)));",
        "const float y = precise::exp(float(x));\n"
        "    return static_cast<T>(::metal::fabs(y) < 1.17549435e-38f ? 0.0f : y);",
    )
    r = verify(root, "exp", opts=Options(dtypes=[torch.float32], layouts=["contiguous"], atol=0.0))
    assert r.exit_code == 1
    assert "e-39" in first_failure(failing(r)[("float32", "contiguous")]) or "e-4" in first_failure(
        failing(r)[("float32", "contiguous")]
    )


def test_reference_is_pluggable():
    from migrate.verify.references import TorchCpuReference

    class OffByOne(TorchCpuReference):
        name = "off-by-one"

        def compute(self, case):
            return super().compute(case) + 1

    opts = Options(dtypes=[torch.float32], layouts=["odd_size"])
    r = verify(MINI, "exp", opts=opts, references=[OffByOne("exp")])
    assert r.references == ["off-by-one"] and r.exit_code == 1
    assert verify(MINI, "exp", opts=opts, references=[TorchCpuReference("exp")]).exit_code == 0


def test_checked_mode_runs_clean_kernels():
    r = verify(
        MINI, "copysign", opts=Options(dtypes=[torch.float16], layouts=["broadcast", "python_scalar"], checked=True)
    )
    assert r.exit_code == 0, to_text(r)


# -------------------------------------------------------------------- CLI
def test_cli_json_and_exit_codes(tmp_path, capsys):
    rc = main(
        [
            "verify",
            "atan2",
            "--root",
            str(MINI),
            "--dtypes",
            "float32,int32",
            "--layouts",
            "contiguous,broadcast",
            "--format",
            "json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["ok"] and doc["kernel"]["name"] == "atan2" and doc["seed"] == 1234
    assert {(c["dtype"], c["layout"]) for c in doc["cells"]} == {
        (d, x) for d in ("float32", "int32") for x in ("contiguous", "broadcast")
    }
    root = copy_tree(tmp_path)
    edit(root, f"{KERNELS}/BinaryKernel.metal", "precise::atan2(float(a), float(b)));", "undeclared_fn(a));")
    # a kernel file that does not compile fails (exit 1): the compiler's error once, at the top (issue 40)
    assert main(["verify", "atan2", "--root", str(root), "--layouts", "contiguous"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith(f"COMPILE ERROR {KERNELS}/BinaryKernel.metal:") and "BLOCKED" in out


def test_cli_patch_from_stdin_that_does_not_apply(monkeypatch, capsys):
    import io

    monkeypatch.setattr(
        "sys.stdin",
        io.StringIO(
            "--- a/aten/src/ATen/native/mps/kernels/UnaryKernel.metal\n"
            "+++ b/aten/src/ATen/native/mps/kernels/UnaryKernel.metal\n@@ -1,1 +1,1 @@\n-no such line\n+x\n"
        ),
    )
    assert main(["verify", "exp", "--root", str(MINI), "--patch", "-"]) == 2
    err = capsys.readouterr().err
    assert "UnaryKernel.metal:1" in err and "does not match" in err


# ----------------------------------------------------------- OpInfo samples
@pytest.mark.parametrize("family", ["atan2", "copysign", "exp"])
def test_opinfo_samples_run_next_to_own_cases(reports, family):
    r = reports[family]
    ran, ok = r.totals(opinfo=True)
    assert r.opinfo_names == [family] and ran >= 9 and ok == ran
    cells = [c for c in r.cells if c.layout == f"opinfo:{family}"]
    assert {c.dtype for c in cells if c.cases} >= {"float32", "float16", "bfloat16"}
    text = to_text(r)
    assert f"OpInfo samples ({family}): " in text and "own cases: " in text
    doc = json.loads(__import__("migrate.verify.report", fromlist=["to_json"]).to_json(r))
    assert doc["summary"]["opinfo"]["ran"] == ran and doc["summary"]["cases"]["ran"] > 0


def test_opinfo_names_come_from_the_trees_database(reports):
    # the fixture database has exp and exp.extremal (not in torch's op_db) and no copysign entry
    assert any(
        "OpInfo exp.extremal is in the database source but not in the installed torch's op_db" in n
        for n in reports["exp"].notes
    )
    assert any("no entry for copysign; names from the installed torch's" in n for n in reports["copysign"].notes)
    ov = "\n".join(reports["copysign"].overloads)
    assert "copysign.Tensor: OpInfo copysign" in ov and "copysign.Scalar: OpInfo copysign" in ov
    assert "copysign.out: no OpInfo sample calls it" in ov


def test_no_opinfo_samples_when_disabled():
    r = verify(MINI, "atan2", opts=Options(dtypes=[torch.float32], layouts=["odd_size", "opinfo"], opinfo=False))
    assert r.opinfo_names == [] and r.totals(opinfo=True) == (0, 0)

"""MPS001 and its reroute fix on fixtures/reroute: which families are half-migrated, which
reroutes are offered, which are safe, and the exact dispatch line a reroute writes."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers import FIXTURES, YAML, lint_json, run_cli

TREE = FIXTURES / "reroute"


@pytest.fixture(scope="module")
def findings():
    return lint_json(TREE)


def mps001(findings) -> dict[str, dict]:
    return {f["overload"]: f for f in findings if f["code"] == "MPS001"}


def routes() -> dict[str, dict]:
    p = run_cli("explain", "--all", "--root", str(TREE), "--format", "json")
    assert p.returncode == 0, p.stderr
    return {r["overload"]: r for r in json.loads(p.stdout)}


def test_half_migrated_families(findings):
    assert set(mps001(findings)) == {
        "copysign.Scalar_out",
        "nextafter.Scalar_out",
        "fmin.Scalar_out",
        "atan2.Scalar_out",
    }


def test_shared_line_in_half_migrated_family_gets_no_reroute(findings):
    r = routes()
    # atan2.out is native Metal, atan2.Scalar_out is MPSGraph: half-migrated ...
    assert r["atan2.out"]["impl"] == "metal" and r["atan2.Scalar_out"]["impl"] == "mpsgraph"
    f = mps001(findings)["atan2.Scalar_out"]
    # ... but its MPS kernel shares the CPU, CUDA line: no MPS line to reroute, the next step is a port
    assert f["fix"] is None and f["message"].endswith("next: mps-migrate port atan2")
    diff = run_cli("lint", str(TREE), "--diff", "--unsafe-fixes").stdout
    assert not [ln for ln in diff.splitlines() if ln.startswith(("-", "+")) and "atan2" in ln]


def test_mixed_overload_does_not_make_a_family_half_migrated(findings):
    r = routes()
    assert r["xlogy.OutTensor"]["impl"] == "mixed" and r["xlogy.OutScalar_Other"]["impl"] == "mpsgraph"
    assert not [f for f in findings if f["code"] == "MPS001" and f["overload"].startswith("xlogy")]


def test_no_reroute_onto_a_broken_kernel(findings):
    # nextafter's stub calls a Metal kernel no .metal file defines (MPS007): no fix, safe or not
    assert any(f["code"] == "MPS007" and '"nextafter"' in f["message"] for f in findings)
    assert mps001(findings)["nextafter.Scalar_out"]["fix"] is None
    diff = run_cli("lint", str(TREE), "--diff", "--unsafe-fixes").stdout
    assert "    MPS: nextafter_scalar_out_mps\n" in (TREE / YAML).read_text()
    assert "-    MPS: nextafter_scalar_out_mps\n" not in diff


def test_reroute_safety(findings):
    fixes = {o: f["fix"] for o, f in mps001(findings).items()}
    assert fixes["copysign.Scalar_out"]["safe"] is True  # the stub's kernel name is a literal that exists
    assert fixes["fmin.Scalar_out"]["safe"] is False  # chosen at run time: unproven
    safe = run_cli("lint", str(TREE), "--diff").stdout
    unsafe = run_cli("lint", str(TREE), "--diff", "--unsafe-fixes").stdout
    assert "+    CPU, CUDA, MPS: copysign_scalar_out\n" in safe
    assert "-    MPS: fmin_scalar_out_mps\n" not in safe
    assert "+    CPU, CUDA, MPS: fmin_scalar_out\n" in unsafe


@pytest.mark.parametrize(
    "shared, fixed",
    [
        ("CPU,CUDA", "CPU,CUDA,MPS"),  # separator style kept
        ("CPU , CUDA", "CPU , CUDA , MPS"),
        ("CUDA, CPU", "CUDA, MPS, CPU"),  # MPS goes right after CUDA, not last
        ("CUDA,CPU", "CUDA,MPS,CPU"),
    ],
)
def test_rerouted_line_keeps_style_and_puts_mps_after_cuda(tmp_path, shared, fixed):
    root = tmp_path / "t"
    shutil.copytree(TREE, root)
    text = (root / YAML).read_text()
    old = "    CPU, CUDA: copysign_scalar_out\n"
    assert text.count(old) == 1
    (root / YAML).write_text(text.replace(old, f"    {shared}: copysign_scalar_out\n"))
    run_cli("lint", str(root), "--fix")
    lines = (root / YAML).read_text().splitlines()
    assert f"    {fixed}: copysign_scalar_out" in lines
    assert "    MPS: copysign_scalar_out_mps" not in lines

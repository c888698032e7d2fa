"""The whole lint on both real trees (2.6.0: before c10/metal; 2.7.0a0: main of March 2025).

Every file there is valid upstream code: no MPS900.  The 2.7.0a0 expectations were checked by
hand against the tree's files (see the notes at each assertion).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.helpers import OPS, run_cli

TREES = {"2.6.0": pytorch_260_root, "2.7.0a0": pytorch_270a0_root}


def lint(root: Path) -> list[dict]:
    p = run_cli("lint", str(root), "--format", "json")
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def findings_270a0() -> list[dict]:
    return lint(pytorch_270a0_root())


@pytest.mark.parametrize("version", sorted(TREES))
def test_no_parse_errors(version, findings_270a0):
    found = findings_270a0 if version == "2.7.0a0" else lint(TREES[version]())
    assert [f for f in found if f["code"] == "MPS900"] == []


def test_270a0_precise_rules(findings_270a0):
    by_code: dict[str, list[dict]] = {}
    for f in findings_270a0:
        by_code.setdefault(f["code"], []).append(f)
    # remainder.Scalar_Tensor's kernel redispatches to at::remainder; scatter_reduce.two_out's
    # expanded-index stub is taken only on CPU (can_use_expanded_index_path): neither is MPS006
    assert by_code.get("MPS006", []) == []
    # round.decimals runs exec_unary_kernel(iter, "round_decimals"); round.out runs the MPSGraph
    # body of REGISTER_MPS_UNARY_STUB(round, round)
    (half,) = by_code["MPS001"]
    assert half["overload"] == "round.out" and half["fix"] is None
    assert half["message"].endswith("next: mps-migrate port round")
    for code in ("MPS003", "MPS004", "MPS007"):
        assert by_code.get(code, []) == [], code


def test_270a0_routes_of_the_former_false_positives():
    root = pytorch_270a0_root()
    p = run_cli("explain", "--all", "--root", str(root), "--format", "json")
    routes = {r["overload"]: r for r in json.loads(p.stdout)}
    rem = routes["remainder.Scalar_Tensor"]
    assert (rem["impl"], rem["hops"][-1]) == ("delegating", "composite: calls at::remainder")
    sc = routes["scatter_reduce.two_out"]
    assert sc["impl"] == "mpsgraph" and "REGISTER_DISPATCH(scatter_reduce_two_stub" in " ".join(sc["hops"])
    assert routes["masked_fill_.Scalar"]["impl"] == "metal"  # getMPSScalar packs bytes for mtl_setArgs


def _mirror(src: Path, dst: Path, skip: set[Path]) -> None:
    """``dst`` with the folders of ``src`` and a symlink per file (``skip``: dangling links)."""
    for dirpath, _, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            target = Path(dirpath, name)
            (dst / rel / name).symlink_to(dst / "missing" if rel / name in skip else target)


def test_270a0_with_one_unreadable_host_file(tmp_path):
    root = pytorch_270a0_root()
    broken = Path(OPS) / "UnaryOps.mm"
    for part in ("aten/src/ATen/native", "c10/metal"):
        _mirror(root / part, tmp_path / part, {broken.relative_to(part)} if broken.is_relative_to(part) else set())
    found = lint(tmp_path)
    counts = Counter(f["code"] for f in found)
    assert counts["MPS003"] == 0 and counts["MPS006"] == 0  # before: 35 MPS003 "defined nowhere"
    (err,) = [f for f in found if f["code"] == "MPS900"]
    assert err["path"] == broken.as_posix() and "checks that may be incomplete: MPS001" in err["message"]

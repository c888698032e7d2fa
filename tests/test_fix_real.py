"""Every safe fix on a copy of the real PyTorch 2.6.0 tree: applied, torchgen still parses, second run is a no-op."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.corpus import pytorch_260_root
from tests.helpers import YAML, run_cli


@pytest.fixture(scope="module")
def fixed_copy(tmp_path_factory):
    root = pytorch_260_root()
    dst = tmp_path_factory.mktemp("t26") / "pytorch"
    shutil.copytree(root / "aten", dst / "aten")
    p = run_cli("lint", str(dst), "--fix", "--format", "json")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    return root, dst, p.stderr


def test_safe_fixes_applied(fixed_copy):
    root, dst, err = fixed_copy
    assert "applied 4 fixes in 4 file(s)" in err  # the four stale includes (see README's numbers)
    changed = [
        p
        for p in (dst / "aten").rglob("*")
        if p.is_file() and p.read_bytes() != (root / p.relative_to(dst)).read_bytes()
    ]
    assert len(changed) == 4
    for p in changed:
        old = (root / p.relative_to(dst)).read_text().splitlines()
        new = p.read_text().splitlines()
        assert len(old) - len(new) == 1 and all(line in old for line in new)


def test_second_run_is_a_no_op(fixed_copy):
    _, dst, _ = fixed_copy
    p = run_cli("lint", str(dst), "--diff")
    assert p.returncode == 0 and p.stdout == ""


def test_tree_torchgen_still_parses(fixed_copy):
    root, dst, _ = fixed_copy
    code = (
        "import sys, torchgen.gen as g; p = g.parse_native_yaml(sys.argv[1], sys.argv[2]);"
        "print(len(p.native_functions))"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(dst / YAML), str(root / YAML).replace("native_functions", "tags")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(root),
    )
    assert out.returncode == 0, out.stderr[-500:]
    assert int(out.stdout) > 2500

"""A wheel built from the repository (the `wheel` fixture, tests/conftest.py) carries rules/ and kernels/ and runs."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from tests.helpers import MINI


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "migrate/checks/mps001_half_migrated.py" in names  # a rule: code, docs and check in one module
    assert "migrate/_data/rules/markers.yaml" in names
    assert any(n.startswith("migrate/_data/kernels/") for n in names)
    assert "migrate/cli.py" in names
    assert not any(n.startswith(("tests/", "fixtures/")) for n in names)


def test_installed_wheel_runs(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(target), "MPS_MIGRATE_NO_CACHE": "1"}
    where = subprocess.run(
        [sys.executable, "-c", "import migrate.resources as r; print(r.__file__); print(r.rules_dir())"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    mod, rules = where.stdout.split()
    assert mod.startswith(str(target)) and rules.startswith(str(target))
    p = subprocess.run(
        [sys.executable, "-m", "migrate", "lint", str(MINI), "--format", "concise"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert p.returncode == 1 and "MPS001" in p.stdout, p.stderr
    r = subprocess.run(
        [sys.executable, "-m", "migrate", "rule", "MPS004"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert "dead-implementation" in r.stdout

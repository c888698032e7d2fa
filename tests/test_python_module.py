"""Subprocesses of the installed packages run the installed code even when started from a PyTorch checkout,
whose ``torch/`` and ``torchgen/`` folders would otherwise shadow it (the checkout's torchgen writes
registrations for its own era's headers: ``DimnameList``, which the 2.13 headers no longer declare)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from migrate.resources import python_module

REPO = Path(__file__).resolve().parents[1]


def test_a_module_of_the_working_folder_does_not_shadow_the_installed_one(tmp_path):
    shadow = tmp_path / "torchgen"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("")
    (shadow / "gen.py").write_text("import sys\nprint('the checkout torchgen')\nsys.exit(3)\n")
    proc = subprocess.run(python_module("torchgen.gen", "--help"), cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and "the checkout torchgen" not in proc.stdout
    assert "--per-operator-headers" in proc.stdout  # the installed torchgen's own options


def test_every_python_subprocess_of_the_package_goes_through_python_module():
    bare = []
    for path in (REPO / "migrate").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"sys\.executable\s*,\s*\"-m\"", text):
            bare.append(str(path.relative_to(REPO)))
    assert bare == []

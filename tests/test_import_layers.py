"""The package's layers (pyproject's [tool.importlinter], drawn in docs/architecture.md): lint-imports keeps them,
and every top-level module of migrate/ sits in one of them (a new module must be placed)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.helpers import REPO


def _contracts() -> list[dict]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_lint_imports_keeps_every_contract():
    exe = Path(sys.executable).with_name("lint-imports")
    p = subprocess.run([str(exe)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    assert re.search(r"Contracts: (\d+) kept, 0 broken", p.stdout)


def test_every_top_level_module_is_in_a_layer():
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    placed = {name.strip() for band in layers for name in re.split(r"[|:]", band)}
    package = REPO / "migrate"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert modules - placed == set(), "place these in pyproject's layers"
    assert placed - modules == set(), "these layers name no module"

"""The project's own code stays clean under its configured linter and formatter (pyproject.toml [tool.ruff])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["migrate", "tests", "bench"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args, *PATHS], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean():
    out = _ruff("check", "--quiet")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_ruff_format_is_clean():
    out = _ruff("format", "--check", "--quiet")
    assert out.returncode == 0, "run `ruff format migrate tests bench`:\n" + out.stdout[-3000:] + out.stderr[-1000:]

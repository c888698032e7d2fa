"""Every test starts from the same random state: random inputs are reproducible.
The ``wheel`` of the repository is built once per session."""
from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.fixture(autouse=True)
def _seed_torch():
    try:
        import torch
    except ImportError:  # torch-free tests still run
        yield
        return
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """The project's wheel, built from the repository (tests/test_packaging.py, tests/test_install.py)."""
    from tests.helpers import REPO

    out = tmp_path_factory.mktemp("dist")
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0 and ("Could not find a version" in p.stderr or "No matching distribution" in p.stderr):
        pytest.skip("cannot fetch the build backend (hatchling): " + p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr
    wheels = list(out.glob("mps_migrate-*.whl"))
    assert len(wheels) == 1
    return wheels[0]

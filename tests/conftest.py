"""Hermetic, reproducible tests.

- Every test starts from the same random state: random inputs are reproducible.
- One temporary cache folder per session (``MPS_MIGRATE_CACHE``, inherited by the CLI
  subprocesses): the user's ~/.cache/mps-migrate is never read or written.  Cold, the
  CPU backend compiles each kernel file once per session (minutes on a busy 2-core
  machine); ``MPS_MIGRATE_TEST_CACHE=/some/folder`` keeps a cache between local runs.
- hypothesis: the derandomized ``ci`` profile by default (the same examples every run);
  ``HYPOTHESIS_PROFILE=long`` draws ten times as many random ones (tests.fuzzing.examples).
- The ``wheel`` of the repository is built once per session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from tests.fuzzing import load_profile

load_profile()

_CACHE: list[str] = []


def pytest_configure(config):
    kept = os.environ.get("MPS_MIGRATE_TEST_CACHE", "")
    if not kept:
        _CACHE.append(tempfile.mkdtemp(prefix="mps-migrate-test-cache-"))
    os.environ["MPS_MIGRATE_CACHE"] = kept or _CACHE[0]
    os.environ.pop("MPS_MIGRATE_NO_CACHE", None)  # the tests exercise the cache


def pytest_unconfigure(config):
    for d in _CACHE:
        shutil.rmtree(d, ignore_errors=True)


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
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if p.returncode != 0 and ("Could not find a version" in p.stderr or "No matching distribution" in p.stderr):
        pytest.skip("cannot fetch the build backend (hatchling): " + p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr
    wheels = list(out.glob("mps_migrate-*.whl"))
    assert len(wheels) == 1
    return wheels[0]

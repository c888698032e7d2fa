"""`pip install mps-migrate` is a light, lint-only install: no torch, numpy or compiler (ziglang).

The repository's wheel (the ``wheel`` fixture, tests/conftest.py) goes into a fresh virtualenv with its
dependencies only, from the indexes pip is configured with. Every light command must print there
exactly what it prints in the test environment (torch and ziglang installed); port and verify must
say which extra to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from migrate.cli import main
from migrate.errors import EXTRA_OF_MODULE
from tests.helpers import KERNELS, MINI, OPS, REPO, YAML

LIB_LIMIT = 60 * 2**20  # bytes: the lint-only virtualenv's lib/
HEAVY = ("torch", "numpy", "ziglang")
VERIFY_HINT = "pip install 'mps-migrate[verify]'"


@pytest.fixture(scope="module")
def light(wheel, tmp_path_factory):
    """A fresh virtualenv holding the wheel and its (non-extra) dependencies."""
    venv = tmp_path_factory.mktemp("lint-only") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    p = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if p.returncode != 0 and ("Could not find a version" in p.stderr or "No matching distribution" in p.stderr):
        pytest.skip("cannot fetch the dependencies: " + p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr
    return venv


def _env(tmp_path) -> dict:
    return {**os.environ, "MPS_MIGRATE_CACHE": str(tmp_path / "cache")}


def run_light(venv, tmp_path, *args: str) -> subprocess.CompletedProcess:
    """The installed console script; run outside the repository, so the source tree is not importable."""
    return subprocess.run(
        [str(venv / "bin" / "mps-migrate"), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )


def run_full(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "migrate", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )


def test_no_torch_numpy_or_compiler(light):
    p = subprocess.run(
        [
            str(light / "bin" / "python"),
            "-c",
            f"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m)])",
        ],
        capture_output=True,
        text=True,
        cwd=light,
    )
    assert p.stdout.strip() == "[]", p.stdout + p.stderr


def test_lints_the_fixture(light, tmp_path):
    p = run_light(light, tmp_path, "lint", str(MINI), "--format", "json")
    assert p.returncode == 1, p.stderr
    found = {(f["code"], f["path"], f["line"], f.get("overload")) for f in json.loads(p.stdout)}
    assert ("MPS001", YAML, 36, "copysign.Scalar_out") in found


@pytest.mark.parametrize(
    "args",
    [
        ("lint", str(MINI), "--format", "json"),
        ("lint", str(MINI), "--diff"),
        ("fix", "copysign", "--root", str(MINI), "--diff"),
        ("explain", "copysign", "--root", str(MINI)),
        ("rule", "--all"),
        ("status", "--root", str(MINI), "--format", "json"),
        ("lintrunner", str(MINI / OPS / "BinaryOps.mm"), str(MINI / KERNELS / "BinaryKernel.metal")),
        ("port", "--list", "--root", str(MINI)),
    ],
    ids=lambda a: " ".join(x for x in a if not x.startswith("/"))[:40],
)
def test_light_commands_match_the_full_install(light, tmp_path, args):
    got, want = run_light(light, tmp_path, *args), run_full(tmp_path, *args)
    assert want.stdout, want.stderr  # the comparison means something
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)


def test_installed_size(light):
    lib = light / "lib"
    total = sum(os.lstat(os.path.join(d, f)).st_size for d, _, files in os.walk(lib) for f in files)
    assert total <= LIB_LIMIT, f"{lib}: {total / 2**20:.1f} MB"


@pytest.mark.parametrize(
    "command, args",
    [
        ("verify", ("atan2", "--root", str(MINI))),
        ("port", ("exp2", "--root", str(MINI))),  # which dtypes to register: torch CPU decides
    ],
)
def test_command_needing_torch_names_the_extra(light, tmp_path, command, args):
    p = run_light(light, tmp_path, command, *args)
    assert p.returncode == 2
    assert p.stderr == f"mps-migrate: error: {command} needs torch, which is not installed: {VERIFY_HINT}\n"
    assert p.stdout == ""


def test_cpu_backend_names_the_extra(light, tmp_path):
    p = subprocess.run(
        [str(light / "bin" / "python"), "-c", "from migrate.device import get_backend; get_backend('cpu')"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1] == f"ModuleNotFoundError: No module named 'ziglang': {VERIFY_HINT}"


def test_verify_without_the_compiler_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ziglang", None)  # how Python marks a module not importable
    assert main(["verify", "atan2", "--root", str(MINI), "--no-opinfo", "--dtypes", "float32"]) == 2
    assert (
        capsys.readouterr().err == f"mps-migrate: error: verify needs ziglang, which is not installed: {VERIFY_HINT}\n"
    )


def test_extras_match_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    name = lambda req: req.split(";")[0].split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip().lower()  # noqa: E731
    assert not {name(r) for r in project["dependencies"]} & set(HEAVY)
    for module, extra in EXTRA_OF_MODULE.items():
        assert module in {name(r) for r in project["optional-dependencies"][extra]}
    assert "torch==2.13.0" in project["optional-dependencies"]["verify"]
    assert "mps-migrate[verify]" in project["optional-dependencies"]["test"]

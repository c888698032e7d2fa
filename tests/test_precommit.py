"""The hooks of .pre-commit-hooks.yaml, run by the real pre-commit in a temporary git repository.

The repository holds fixtures/precommit/tree (a finished migration); the refused commit copies
fixtures/precommit/stale over it (problems with safe fixes only), so "after mps-migrate-fix the
commit passes" means the fixes removed every problem, not that the hook saw nothing.
The hooks run as `language: system` from a `repo: local` config built from our hook file:
offline, and with the mps-migrate entry point of this environment (its bin/ put on PATH).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import FIXTURES, OPS, REPO, YAML

BIN = Path(sys.executable).parent
PRE_COMMIT = shutil.which("pre-commit", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
pytestmark = [
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install pre-commit)"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(
        shutil.which("mps-migrate", path=str(BIN)) is None,
        reason="the mps-migrate entry point is not installed next to this Python",
    ),
]


def hooks() -> dict[str, dict]:
    return {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def local_config() -> str:
    out = []
    for h in hooks().values():
        h = dict(h, language="system")
        h.pop("minimum_pre_commit_version", None)
        if h["id"] == "mps-migrate-fix":
            h["stages"] = ["manual"]  # run on request: `pre-commit run mps-migrate-fix --hook-stage manual`
        out.append(h)
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": out}]}, sort_keys=False)


@pytest.fixture()
def repo(tmp_path):
    root = tmp_path / "pytorch"
    shutil.copytree(FIXTURES / "precommit" / "tree", root)
    (root / ".pre-commit-config.yaml").write_text(local_config())
    env = dict(
        os.environ,
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        MPS_MIGRATE_CACHE=str(tmp_path / "cache"),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(tmp_path),
    )

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)

    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "config", "user.email", "t@example.com"],
        ["git", "config", "user.name", "t"],
        ["git", "config", "commit.gpgsign", "false"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "base"],
    ):
        p = run(*cmd)
        assert p.returncode == 0, p.stderr
    p = run(PRE_COMMIT, "install")
    assert p.returncode == 0, p.stdout + p.stderr
    run.root = root
    return run


def commits(run) -> int:
    return int(run("git", "rev-list", "--count", "HEAD").stdout)


def add_stale(root: Path) -> None:
    shutil.copytree(FIXTURES / "precommit" / "stale", root, dirs_exist_ok=True)


def test_hook_file_shape():
    h = hooks()
    assert set(h) == {"mps-migrate", "mps-migrate-fix"}
    assert h["mps-migrate"]["entry"] == "mps-migrate lint --since=HEAD"
    assert h["mps-migrate-fix"]["entry"] == "mps-migrate lint --fix --since=HEAD"
    import re

    for hook in h.values():
        assert hook["pass_filenames"] is True and hook["require_serial"] is True
        files = re.compile(hook["files"])
        for path in (
            YAML,
            f"{OPS}/UnaryOps.mm",
            "aten/src/ATen/native/mps/OperationUtils.h",
            "aten/src/ATen/native/mps/kernels/UnaryKernel.metal",
            "torch/testing/_internal/common_mps.py",
        ):
            assert files.search(path), path
        for path in (
            "aten/src/ATen/native/BinaryOps.cpp",
            "aten/src/ATen/native/cuda/UnaryOps.cu",
            "torch/testing/_internal/common_methods_invocations.py",
            "README.md",
        ):
            assert not files.search(path), path


def test_stale_commit_refused_then_fixed(repo):
    root = repo.root
    add_stale(root)
    metal = root / "aten/src/ATen/native/mps/kernels/UnaryKernel.metal"
    metal.write_text(metal.read_text() + "// the change this commit is about\n")
    assert repo("git", "add", "-A").returncode == 0
    refused = repo("git", "commit", "-m", "half-done migration")
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out
    assert commits(repo) == 1
    for code in ("MPS010", "MPS004", "MPS005"):
        assert code in out, out
    assert "MPS002" not in out  # the inventory advice is ignored by the hook's default args

    fixed = repo(PRE_COMMIT, "run", "mps-migrate-fix", "--hook-stage", "manual")
    assert fixed.returncode != 0 and "files were modified by this hook" in fixed.stdout, fixed.stdout
    yaml_text = (root / YAML).read_text()
    assert "    CPU, CUDA, MPS: log1p_out\n" in yaml_text and "    MPS: log1p_out\n" not in yaml_text
    ops = (root / OPS / "UnaryOps.mm").read_text()
    assert "expm1_out_mps" not in ops and "expm1_native.h" not in ops and "signbit_out_mps" in ops

    assert repo("git", "add", "-A").returncode == 0
    passed = repo("git", "commit", "-m", "finished migration")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert commits(repo) == 2
    # the whole tree is clean, not just what the hook looked at
    whole = repo(str(BIN / "mps-migrate"), "lint", ".", "--extend-ignore=MPS002", "--format", "concise")
    assert whole.returncode == 0 and whole.stdout == "All checks passed.\n", whole.stdout


def test_only_what_a_commit_brings_blocks(repo):
    """Warnings committed earlier (MPS004, MPS005 in UnaryOps.mm) do not block a commit touching that file:
    one that only adds a comment (shifting every line below it) passes, one that adds a finding fails and
    names that finding alone."""
    add_stale(repo.root)
    assert repo("git", "add", "-A").returncode == 0
    assert repo("git", "commit", "-q", "--no-verify", "-m", "legacy problems, bypassing hooks").returncode == 0
    ops = repo.root / OPS / "UnaryOps.mm"
    legacy = repo(str(BIN / "mps-migrate"), "lint", str(ops), "--extend-ignore=MPS002", "--format", "concise")
    assert legacy.returncode == 1 and "MPS004" in legacy.stdout and "MPS005" in legacy.stdout, legacy.stdout

    ops.write_text("// a comment above everything\n" + ops.read_text())
    metal = repo.root / "aten/src/ATen/native/mps/kernels/UnaryKernel.metal"
    metal.write_text(metal.read_text() + "// a comment\n")
    assert repo("git", "add", "-A").returncode == 0
    p = repo("git", "commit", "-m", "comments only")
    assert p.returncode == 0, p.stdout + p.stderr
    assert commits(repo) == 3

    text = ops.read_text()
    end = text.rindex("} // namespace")
    ops.write_text(
        text[:end] + "static uint32_t signbit_count(const Tensor& self) {\n"
        "  uint32_t n = self.numel();\n  return n;\n}\n\n" + text[end:]
    )
    assert repo("git", "add", "-A").returncode == 0
    p = repo("git", "commit", "-m", "a new narrowing")
    out = p.stdout + p.stderr
    assert p.returncode != 0 and commits(repo) == 3, out
    assert "MPS013" in out and "uint32_t n = self.numel()" in out, out
    assert "MPS004" not in out and "MPS005" not in out, out
    assert "Found 1 finding: 1 warning. (2 known findings not shown)" in out, out

"""lintrunner integration: the adapter's messages, and the real lintrunner on a temporary git repository
configured with the `.lintrunner.toml` snippet documented in docs/integrations.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, MINI, OPS, REPO, YAML, run_cli

BIN = Path(sys.executable).parent
LINTRUNNER = shutil.which("lintrunner", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
FIELDS = ["path", "line", "char", "code", "severity", "name", "original", "replacement", "description"]


def messages(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.fixture()
def stale(tmp_path):
    root = tmp_path / "pytorch"
    shutil.copytree(FIXTURES / "precommit" / "tree", root)
    shutil.copytree(FIXTURES / "precommit" / "stale", root, dirs_exist_ok=True)
    return root


def test_adapter_schema_and_one_fix_per_file(stale, tmp_path):
    files = [stale / YAML, stale / OPS / "UnaryOps.mm", stale / OPS / "UnaryKernel.mm"]
    pathsfile = tmp_path / "paths.txt"
    pathsfile.write_text("".join(f"{f}\n" for f in files))
    p = run_cli("lintrunner", f"@{pathsfile}")
    assert p.returncode == 0, p.stderr
    msgs = messages(p.stdout)
    assert all(list(m) == FIELDS and m["code"] == "MPSMIGRATE" for m in msgs)
    assert all(m["severity"] in ("error", "warning", "advice", "disabled") for m in msgs)
    assert all(Path(m["path"]).is_absolute() for m in msgs)
    fixes = [m for m in msgs if m["replacement"] is not None]
    assert sorted(Path(m["path"]).name for m in fixes) == ["UnaryOps.mm", "native_functions.yaml"]
    ops = next(m for m in fixes if m["path"].endswith("UnaryOps.mm"))
    assert ops["original"] == (stale / OPS / "UnaryOps.mm").read_text()
    assert "expm1_out_mps" not in ops["replacement"] and "signbit_out_mps" in ops["replacement"]
    assert "MPS004" in ops["description"] and "MPS005" in ops["description"] and (ops["line"], ops["char"]) == (8, 1)
    rest = [m for m in msgs if m["replacement"] is None]
    assert [(m["name"], m["line"], m["char"]) for m in rest] == [("MPS002 mpsgraph-route", 34, 5)]
    assert (stale / OPS / "UnaryOps.mm").read_text() == (FIXTURES / "precommit/stale" / OPS / "UnaryOps.mm").read_text()


def test_adapter_reports_findings_only_in_given_files(tmp_path):
    root = tmp_path / "mini"
    shutil.copytree(MINI, root)
    p = run_cli("lintrunner", str(root / OPS / "HistogramKernel.mm"))
    msgs = messages(p.stdout)
    assert msgs and {Path(m["path"]).name for m in msgs} == {"HistogramKernel.mm"}
    assert {m["name"].split()[0] for m in msgs} == {"MPS011", "MPS012", "MPS013", "MPS014"}


def test_adapter_failures_are_null_path_messages(tmp_path):
    outside = tmp_path / "x.mm"
    outside.write_text("")
    for args in ([f"@{tmp_path / 'missing.txt'}"], [str(outside)]):
        p = run_cli("lintrunner", *args)
        assert p.returncode == 0 and p.stderr == ""
        (m,) = messages(p.stdout)
        assert m["path"] is None and m["severity"] == "error" and m["code"] == "MPSMIGRATE"
        assert str(tmp_path) in m["description"]


def test_adapter_reports_a_broken_tree_without_crashing(stale):
    (stale / YAML).write_bytes(b"\xff\xfe not yaml: [\n")
    p = run_cli("lintrunner", str(stale / YAML))
    assert p.returncode == 0 and "Traceback" not in p.stderr
    assert messages(p.stdout)  # a parse-error finding or a null-path failure, never silence


def documented_config() -> str:
    doc = (REPO / "docs" / "integrations.md").read_text()
    (toml,) = re.findall(r"```toml\n(.*?)```", doc, re.S)
    return toml.replace("'python3',\n    '-m',", f"'{sys.executable}',\n    '-m',")


def lintrunner_repo(root: Path, tmp_path: Path):
    """``root`` as a git repository configured with the documented snippet; returns run(*cmd)."""
    config = documented_config()
    assert sys.executable in config and "@{{PATHSFILE}}" in config and "'--since=HEAD'" in config
    (root / ".lintrunner.toml").write_text(config)
    env = dict(
        os.environ,
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(tmp_path),
        MPS_MIGRATE_CACHE=str(tmp_path / "cache"),
        PYTHONPATH=str(REPO),
    )

    def run(*cmd):
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)

    def commit(message):
        for cmd in (
            ["git", "add", "-A"],
            ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", message],
        ):
            assert run(*cmd).returncode == 0

    assert run("git", "init", "-q").returncode == 0
    commit("base")
    run.commit = commit
    run.data = ["--data-path", str(tmp_path / "lintrunner-data")]
    return run


needs_lintrunner = [
    pytest.mark.skipif(LINTRUNNER is None, reason="lintrunner is not installed (pip install lintrunner)"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@needs_lintrunner[0]
@needs_lintrunner[1]
def test_real_lintrunner_reports_then_applies(tmp_path):
    root = tmp_path / "pytorch"
    shutil.copytree(FIXTURES / "precommit" / "tree", root)
    run = lintrunner_repo(root, tmp_path)
    shutil.copytree(FIXTURES / "precommit" / "stale", root, dirs_exist_ok=True)  # the change under review
    data = run.data
    first = run(LINTRUNNER, *data, "--output", "json")
    found = messages(first.stdout)
    assert first.returncode == 1, first.stdout + first.stderr
    assert {m["name"] for m in found} == {"fixes MPS004, MPS005", "MPS010 kernel-naming"}, found
    assert not any(m["path"] is None for m in found)

    applied = run(LINTRUNNER, *data, "-a")
    assert "Successfully applied all patches" in applied.stdout, applied.stdout + applied.stderr
    assert "    CPU, CUDA, MPS: log1p_out\n" in (root / YAML).read_text()
    assert "expm1_out_mps" not in (root / OPS / "UnaryOps.mm").read_text()

    again = run(LINTRUNNER, *data, "--all-files", "--output", "json")
    assert again.returncode == 0 and messages(again.stdout) == [], again.stdout + again.stderr


@needs_lintrunner[0]
@needs_lintrunner[1]
def test_real_lintrunner_reports_only_what_a_change_brings(stale, tmp_path):
    """Problems already committed (MPS004/MPS005/MPS010) are not reported for a change that only adds
    comments; a change adding a finding gets that finding alone."""
    run = lintrunner_repo(stale, tmp_path)
    ops = stale / OPS / "UnaryOps.mm"
    ops.write_text("// a comment above everything\n" + ops.read_text())
    (stale / YAML).write_text("# a comment\n" + (stale / YAML).read_text())
    quiet = run(LINTRUNNER, *run.data, "--output", "json")
    assert quiet.returncode == 0 and messages(quiet.stdout) == [], quiet.stdout + quiet.stderr
    text = ops.read_text()
    end = text.rindex("} // namespace")
    ops.write_text(
        text[:end] + "static uint32_t n_of(const Tensor& t) {\n  uint32_t n = t.numel();\n  return n;\n}\n" + text[end:]
    )
    loud = run(LINTRUNNER, *run.data, "--output", "json")
    found = messages(loud.stdout)
    assert loud.returncode == 1 and [m["name"] for m in found] == ["MPS013 unchecked-numel-narrowing"], found

"""The whole-lint result cache (migrate/result_cache.py) serves a result only for the same inputs.

A tiny tree whose yaml names ``hypot_out_mps``: MPS003 unless Hypot.mm defines it.  Entries are
garbled on purpose to tell a served entry from a fresh lint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate import codec, result_cache
from migrate.config import Config
from tests.helpers import YAML
from tests.test_parse_cache import fake_dist, package  # noqa: F401 (a fixture)

HOST = "aten/src/ATen/native/mps/operations/Hypot.mm"
DEFINES = (
    "namespace at::native {{\nTensor& {}(const Tensor& self, const Tensor& other, Tensor& out) {{ return out; }}\n}}\n"
)


@pytest.fixture()
def tree(tmp_path) -> Path:
    root = tmp_path / "tree"
    (root / HOST).parent.mkdir(parents=True)
    (root / YAML).write_text(
        "- func: hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  dispatch:\n    MPS: hypot_out_mps\n"
    )
    (root / HOST).write_text(DEFINES.format("hypot_out_mpz"))  # not the yaml's kernel: MPS003
    return root


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def garble(cache: Path) -> int:
    """Make every stored result say "no findings"."""
    blobs = [p for p in (cache / "results").iterdir() if p.name.startswith("c")]
    for p in blobs:
        p.write_bytes(codec.dumps(()))
    return len(blobs)


def test_same_size_rewrite_with_the_old_mtime_is_linted_again(tree, tmp_path, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(result_cache, "RACY_S", -1e9)  # trust every stat at once (no racy window)
    host = tree / HOST
    old = host.stat()
    assert codes(result_cache.lint_findings(tree, Config(), None)[0]) == ["MPS003"]
    assert any(p.name.startswith("s") for p in (tmp_path / "cache/results").iterdir())  # a stat alias
    real = result_cache._content_key
    monkeypatch.setattr(result_cache, "_content_key", None)  # unchanged stats: served without reading a file
    assert codes(result_cache.lint_findings(tree, Config(), None)[0]) == ["MPS003"]
    monkeypatch.setattr(result_cache, "_content_key", real)
    host.write_text(DEFINES.format("hypot_out_mps"))  # same size, same inode
    os.utime(host, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert host.stat().st_size == old.st_size and host.stat().st_mtime_ns == old.st_mtime_ns
    findings, sources = result_cache.lint_findings(tree, Config(), None)
    assert findings == []
    host.write_text(DEFINES.format("hypot_out_mpz"))  # back to the first bytes: MPS003 again
    findings, sources = result_cache.lint_findings(tree, Config(), None)
    assert codes(findings) == ["MPS003"] and sources[YAML].startswith(b"- func: hypot.out")


def test_entry_is_served_only_for_the_same_paths_config_and_overlay(tree, tmp_path, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    assert codes(result_cache.lint_findings(tree, Config(), None)[0]) == ["MPS003"]
    assert garble(tmp_path / "cache") == 1
    assert result_cache.lint_findings(tree, Config(), None)[0] == []  # same inputs: the (garbled) entry
    assert codes(result_cache.lint_findings(tree, Config(), [YAML])[0]) == ["MPS003"]
    assert codes(result_cache.lint_findings(tree, Config(select=["MPS003"]), None)[0]) == ["MPS003"]
    overlay = {HOST: DEFINES.format("hypot_out_mps").encode()}
    assert result_cache.lint_findings(tree, Config(), None, overlay)[0] == []
    overlay = {HOST: DEFINES.format("hypot_out_mpq").encode()}
    assert codes(result_cache.lint_findings(tree, Config(), None, overlay)[0]) == ["MPS003"]


def lint_json(tree: Path, cache: Path, pythonpath: list[Path]) -> list[str]:
    env = dict(os.environ, MPS_MIGRATE_CACHE=str(cache), PYTHONPATH=os.pathsep.join(map(str, pythonpath)))
    env.pop("MPS_MIGRATE_NO_CACHE", None)
    p = subprocess.run(
        [sys.executable, "-m", "migrate", "lint", str(tree), "--format", "json", "--exit-zero"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree.parent,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return [f["code"] for f in json.loads(p.stdout)]


def test_stale_result_from_other_code_or_versions_is_not_served(tree, tmp_path, package):  # noqa: F811
    cache = tmp_path / "cache"
    assert lint_json(tree, cache, [package]) == ["MPS003"]
    garble(cache)
    assert lint_json(tree, cache, [package]) == []  # the same code: served
    check = package / "migrate/checks/mps003_undefined_kernel.py"  # no reader: outside the parse cache's key
    check.write_bytes(check.read_bytes() + b"\n# changed\n")
    assert lint_json(tree, cache, [package]) == ["MPS003"]
    garble(cache)
    fakes = tmp_path / "fake"
    fake_dist(fakes, "tree-sitter-cpp", "99.0")
    assert lint_json(tree, cache, [fakes, package]) == ["MPS003"]


def test_table_entry_is_keyed_by_the_table_bytes(tmp_path, monkeypatch):
    """Rule tables go through the parse cache (marshal): other bytes under the same name never get old data."""
    from migrate.tables import load_yaml_bytes

    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    assert load_yaml_bytes("t.yaml", b"files: [a, b]\n") == {"files": ["a", "b"]}
    entries = [p for p in (tmp_path / "cache/tables").rglob("*") if p.is_file()]
    assert len(entries) == 1
    entries[0].write_bytes(__import__("marshal").dumps({"files": ["served"]}))
    assert load_yaml_bytes("t.yaml", b"files: [a, b]\n") == {"files": ["served"]}  # a hit
    assert load_yaml_bytes("t.yaml", b"files: [c]\n") == {"files": ["c"]}

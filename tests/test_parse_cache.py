"""The parse cache is keyed by everything that decides a model: a change to any of it misses.

Each run is a fresh process reading a tiny tree (its yaml and a native header, whose stub
scan is cached too) against one cache folder; a miss shows as new cache entries.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate import codec
from migrate.model import NativeYaml
from tests.helpers import REPO, YAML

# What decides a cached model: the code of every module whose output is cached ...
KEY_MODULES = [
    "model.py",
    "codec.py",
    "tables.py",
    "tree.py",
    *sorted(p.relative_to(REPO / "migrate").as_posix() for p in (REPO / "migrate/read").glob("*.py")),
]
KEY_TABLES = ["registration.yaml", "dispatch.yaml", "markers.yaml"]
# ... and the versions of what runs it
KEY_PACKAGES = ["mps-migrate", "tree-sitter", "tree-sitter-cpp", "libcst", "pyyaml"]

READ = """
import json, os, sys
if os.environ.get("FAKE_PYTHON"):
    sys.version = os.environ["FAKE_PYTHON"]
from pathlib import Path
from migrate.tree import load_tree
t = load_tree(Path(sys.argv[1]))
print(json.dumps({"entries": [e.overload_name for e in t.yaml.entries], "stubs": sorted(t.declared_stubs),
                  "migrate": str(Path(sys.modules["migrate"].__file__).parent)}))
"""


@pytest.fixture()
def tree(tmp_path) -> Path:
    root = tmp_path / "tree"
    (root / YAML).parent.mkdir(parents=True)
    (root / YAML).write_text(
        "- func: hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  dispatch:\n    CPU, CUDA: hypot_out\n    MPS: hypot_out_mps\n"
    )
    (root / "aten/src/ATen/native/BinaryOps.h").write_text("DECLARE_DISPATCH(structured_binary_fn, hypot_stub)\n")
    return root


@pytest.fixture()
def package(tmp_path) -> Path:
    """A copy of the package and its tables, importable through PYTHONPATH, free to edit."""
    dst = tmp_path / "pkg"
    shutil.copytree(REPO / "migrate", dst / "migrate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", dst / "rules")
    return dst


def fake_dist(where: Path, dist: str, version: str) -> None:
    """An installed distribution's metadata, as pip writes it (shadows the real one when earlier on sys.path)."""
    info = where / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")


def read(tree: Path, cache: Path, pythonpath: list[Path], **env) -> dict:
    full = dict(os.environ, MPS_MIGRATE_CACHE=str(cache), PYTHONPATH=os.pathsep.join(map(str, pythonpath)), **env)
    full.pop("MPS_MIGRATE_NO_CACHE", None)
    p = subprocess.run(
        [sys.executable, "-c", READ, str(tree)], capture_output=True, text=True, env=full, cwd=tree.parent, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def entries(cache: Path) -> set[Path]:
    return {p for p in (cache / "models").rglob("*") if p.is_file() and not p.name.startswith(".")}


def test_each_key_input_misses(tree, package, tmp_path):
    cache = tmp_path / "cache"
    base = read(tree, cache, [package])
    assert base["migrate"] == str(package / "migrate")  # the copy is what runs
    assert base == {**base, "entries": ["hypot.out"], "stubs": ["hypot_stub"]}
    seen = entries(cache)
    assert len(seen) == 2  # the yaml and the header's stub scan
    assert read(tree, cache, [package]) == base and entries(cache) == seen  # same inputs: a hit

    def misses(what: str, **env) -> None:
        nonlocal seen
        assert read(tree, cache, [package, *env.pop("extra_path", [])], **env) == base
        now = entries(cache)
        assert len(now - seen) == 2, f"{what}: served from entries written before it changed"
        seen = now

    for rel in KEY_MODULES + [f"../rules/{t}" for t in KEY_TABLES]:
        f = package / "migrate" / rel
        f.write_bytes(f.read_bytes() + b"\n# changed\n")
        misses(rel)
    misses("Python version", FAKE_PYTHON="3.99.0 (fake)")
    for dist in KEY_PACKAGES:
        fakes = tmp_path / f"fake-{dist}"
        fake_dist(fakes, dist, "99.0")
        misses(dist, extra_path=[fakes])


@pytest.mark.parametrize("dist", ["mps-migrate", "tree-sitter-cpp"])
def test_stale_entry_from_another_version_is_not_served(tree, tmp_path, dist):
    """Entries written under another version of ``dist``, here garbled, never reach this version."""
    cache, old = tmp_path / "cache", tmp_path / "old"
    fake_dist(old, dist, "0.0.1")
    assert read(tree, cache, [old, REPO])["entries"] == ["hypot.out"]
    stale = entries(cache)
    assert stale
    for f in stale:  # what an older reader might have made of the same bytes: nothing
        model = codec.loads(f.read_bytes())
        f.write_bytes(codec.dumps(NativeYaml(YAML, ()) if isinstance(model, NativeYaml) else ((), ())))
    now = read(tree, cache, [REPO])
    assert now["entries"] == ["hypot.out"] and now["stubs"] == ["hypot_stub"]

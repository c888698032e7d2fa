"""Every configuration example of the README works when pasted into `.mps-migrate.toml` or `pyproject.toml`.

The README's `[tool.mps-migrate]` example pasted into `.mps-migrate.toml` used to fail with
"unknown setting(s): tool" (issue 14).
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import tomllib

import pytest

from tests.helpers import MINI, REPO, lint_json, run_cli

TABLE = ("tool", "mps-migrate")


def config_examples() -> list[str]:
    blocks = re.findall(r"```toml\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    return [b for b in blocks if "[tool.mps-migrate]" in b]


def test_the_readme_has_a_configuration_example():
    assert config_examples()


@pytest.mark.parametrize("target", [".mps-migrate.toml", "pyproject.toml"])
@pytest.mark.parametrize("n", range(len(config_examples())))
def test_readme_configuration_example_works(tmp_path, target, n):
    example = config_examples()[n]
    table = tomllib.loads(example)[TABLE[0]][TABLE[1]]
    tree = tmp_path / "tree"
    shutil.copytree(MINI, tree)
    (tree / target).write_text(example)
    p = run_cli("lint", str(tree), "--format", "json")
    assert p.returncode in (0, 1) and p.stderr.startswith("Found "), p.stderr
    found = lint_json(tree)
    every = lint_json(MINI)
    assert found, "the example turned every rule off"
    codes = {f["code"] for f in found}
    for prefix in table.get("ignore", []):
        assert not any(c.startswith(prefix) for c in codes), prefix
    if "select" in table:
        assert all(any(c.startswith(s) for s in table["select"]) for c in codes)
    for pattern, ignored in table.get("per-file-ignores", {}).items():
        assert not [f for f in found if fnmatch.fnmatch(f["path"], pattern) and f["code"] in ignored]
        assert [f for f in every if fnmatch.fnmatch(f["path"], pattern) and f["code"] in ignored], (
            pattern
        )  # it mattered
    for code, severity in table.get("severity", {}).items():
        assert {f["severity"] for f in found if f["code"] == code} == {severity}, code

"""The README stays true: its quick-start commands exist, its links resolve; the rule table of docs/rules.md is
generated from rules/."""

from __future__ import annotations

import re

from tests.helpers import REPO, run_cli


def test_rule_table_in_sync():
    readme = (REPO / "docs" / "rules.md").read_text()
    m = re.search(r"<!-- rules:start[^>]*-->\n(.*?)<!-- rules:end -->", readme, re.S)
    assert m, "rules markers missing"
    table = run_cli("rule", "--all", "--format", "markdown").stdout
    assert m.group(1) == table, (
        "docs/rules.md rule table is stale: regenerate with `mps-migrate rule --all --format markdown`"
    )


def test_quick_start_commands():
    lines = [line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("python3 -m venv")]
    assert len(lines) == 2
    assert lines[0].endswith("mps-migrate lint fixtures/mini")
    assert "torch" not in lines[0] and "[" not in lines[0]  # the light install: no extra (tests/test_install.py)
    assert lines[1].endswith("python -m pytest -q")
    ci = (REPO / ".ci" / "run").read_text()
    assert "python -m pytest -q" in ci


def test_readme_links_resolve():
    """Every relative link of the README and of docs/*.md names a file that exists."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.relative_to(REPO)}: {target}"


def test_every_command_row_is_short():
    """The README's command table: one short line per command (the details are in docs/commands.md)."""
    readme = (REPO / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `mps-migrate")]
    assert len(rows) >= 10
    assert all(len(row) <= 200 for row in rows), max(rows, key=len)

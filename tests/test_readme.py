"""The README stays true: its rule table is generated from rules/, its quick-start commands exist."""

from __future__ import annotations

import re

from tests.helpers import REPO, run_cli


def test_rule_table_in_sync():
    readme = (REPO / "README.md").read_text()
    m = re.search(r"<!-- rules:start[^>]*-->\n(.*?)<!-- rules:end -->", readme, re.S)
    assert m, "rules markers missing"
    table = run_cli("rule", "--all", "--format", "markdown").stdout
    assert m.group(1) == table, "README rule table is stale: regenerate with `mps-migrate rule --all --format markdown`"


def test_quick_start_commands():
    lines = [line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("python3 -m venv")]
    assert len(lines) == 2
    assert lines[0].endswith("mps-migrate lint fixtures/mini")
    assert "torch" not in lines[0] and "[" not in lines[0]  # the light install: no extra (tests/test_install.py)
    assert lines[1].endswith("python -m pytest -q")
    ci = (REPO / ".ci" / "run").read_text()
    assert "python -m pytest -q" in ci

"""``mps-migrate bench``: a ready script timing a family on a Mac before and after a change.

The script is migrate/mac_bench_template.py with the family's OpInfo targets (from the
tree's OpInfo database, as the test commands of ``fix``/``port``) written in.
"""

from __future__ import annotations

from pathlib import Path

from migrate.errors import UsageError
from migrate.opinfo import family_entries

TEMPLATE = Path(__file__).with_name("mac_bench_template.py")
TARGETS_LINE = "TARGETS = []  # mps-migrate: targets (OpInfo name, variant_test_name)"


def targets(index, family: str) -> list[tuple[str, str]]:
    return sorted({(e.name, e.variant) for e in family_entries(index, family)})


def render_script(index, family: str) -> str:
    found = targets(index, family)
    if not found:
        raise UsageError(f"no OpInfo entry tests {family}: nothing to time", index.tree.yaml.path)
    text = TEMPLATE.read_text(encoding="utf-8")
    assert TARGETS_LINE in text and 'FAMILY = "FAMILY"' in text
    text = text.replace('FAMILY = "FAMILY"', f"FAMILY = {family!r}", 1)
    return text.replace(TARGETS_LINE, f"TARGETS = {found!r}  # OpInfo (name, variant_test_name), from mps-migrate", 1)

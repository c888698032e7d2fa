"""A rule's code, name, severity, what it reads, fix safety and documentation are its check module's docstring
(ruff's way: the doc is where the rule is); ``Rule.from_doc`` reads it, ``rule MPSNNN`` prints it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from migrate.checks import RULES
from migrate.model import Severity
from migrate.rulebook import FixSafety, Rule

DOC = """MPS999 made-up-rule: a title for developers.

More words for developers.

Severity: advice. Reads: yaml, metal. Fix safety: unsafe.

## What it does
Finds things.

## Why it matters
They matter.

## Example
  code();   // indented, kept

## Fix
Edit them.
"""


def _message(x: str) -> str:
    return f"thing {x}"


def test_a_docstring_gives_every_field():
    r = Rule.from_doc(DOC, _message, None, "here")
    assert (r.code, r.name, r.severity, r.reads) == ("MPS999", "made-up-rule", Severity.ADVICE, ("yaml", "metal"))
    assert r.doc.fix_safety is FixSafety.UNSAFE and r.doc.summary == "Finds things.\n"
    assert r.doc.example == "  code();   // indented, kept\n" and r.doc.fix == "Edit them.\n"
    assert r.message_template == "thing {x}"
    text = r.text()
    assert text.startswith("# MPS999 (made-up-rule)\n\nDefault severity: advice\n\n## What it does\nFinds things.")
    assert text.endswith("## Fix\nEdit them. (fix safety: unsafe)\n")


@pytest.mark.parametrize(
    "doc, words",
    [
        (DOC.replace("MPS999 made-up-rule:", "MPS999:"), "opens 'MPSNNN name: ...'"),
        (DOC.replace("Severity: advice. ", "Severity advice. "), "Severity:"),
        (DOC.replace("## Why it matters", "## Why"), "unknown section '## Why'"),
        (DOC.replace("advice", "loud"), "'loud' is not a valid Severity"),
    ],
)
def test_a_malformed_docstring_names_the_module(doc, words):
    with pytest.raises(ValueError, match="^here: ") as err:
        Rule.from_doc(doc, _message, None, "here")
    assert words in str(err.value)


def test_every_rule_module_documents_its_rule_in_its_docstring():
    for rule in RULES:
        module = sys.modules[rule.message.__module__]
        assert module.__doc__.startswith(f"{rule.code} {rule.name}: "), rule.code
        assert Rule.from_doc(module.__doc__, rule.message, rule.check) == rule


def test_rules_read_their_docstrings_from_source_under_python_OO():
    """-OO strips docstrings: the rule reads its module's source instead."""
    proc = subprocess.run([sys.executable, "-OO", "-m", "migrate", "rule", "MPS004"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# MPS004 (dead-implementation)") and "## Why it matters" in proc.stdout

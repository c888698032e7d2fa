"""A rule that raises (a bug of mps-migrate) costs its own findings only: lint reports the other rules'
findings, names the failed rule in one line and exits 3; nothing is cached, written or fixed from such a
result."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
import subprocess

import pytest

import migrate.checks
from migrate import cache
from migrate.cli import main
from migrate.errors import RulesFailed
from migrate.lint import lint_root
from migrate.registry import all_rules
from tests.helpers import MINI

BROKEN = "MPS002"


def _broken_check(index):
    yield from ()
    raise ZeroDivisionError("a bug in the rule")


class Breaker:
    """Makes MPS002 raise, and work again (migrate.checks.RULES is the registry all_rules reads, once)."""

    def __init__(self, monkeypatch) -> None:
        self.mp = monkeypatch

    def on(self) -> None:
        self.mp.delenv("MPS_MIGRATE_DEBUG", raising=False)
        rules = migrate.checks.RULES
        self.mp.setattr(
            migrate.checks,
            "RULES",
            tuple(dataclasses.replace(r, check=_broken_check) if r.code == BROKEN else r for r in rules),
        )
        all_rules.cache_clear()

    def off(self) -> None:
        self.mp.undo()
        all_rules.cache_clear()


@pytest.fixture
def breaker(monkeypatch):
    b = Breaker(monkeypatch)
    yield b
    b.off()


@pytest.fixture
def broken_rule(breaker):
    breaker.on()


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "mini"
    shutil.copytree(MINI, root)
    return root


def _lint_json(root) -> list[dict]:
    return json.loads(_run(["lint", str(root), "--format", "json"])[1])


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_the_other_rules_findings_are_reported_and_the_rule_named(tree, breaker):
    expected = [f for f in _lint_json(tree) if f["code"] != BROKEN]
    assert expected and len(expected) < len(_lint_json(tree))  # the fixture has MPS002 findings and others
    breaker.on()
    with cache.disable_cache():  # the result cache holds the working rule's result for this tree
        code, out, err = _run(["lint", str(tree), "--format", "json"])
    assert code == 3
    assert json.loads(out) == expected
    lines = err.splitlines()
    assert lines[-1].startswith(f"mps-migrate: rule {BROKEN} failed, so its findings are missing: internal error:")
    assert re.search(
        r"ZeroDivisionError: a bug in the rule at migrate/|ZeroDivisionError: a bug in the rule;", lines[-1]
    )
    assert "Traceback" not in err


def test_a_failed_lint_is_not_cached(tree, breaker):
    breaker.on()
    assert _run(["lint", str(tree), "--format", "json"])[0] == 3
    breaker.off()  # the rule works again: its findings come back, so no cached result lacked them
    found = _lint_json(tree)
    assert any(f["code"] == BROKEN for f in found)


def test_lint_tree_raises_with_the_other_findings(tree, broken_rule):
    with cache.disable_cache():
        with pytest.raises(RulesFailed) as info:
            lint_root(tree)
    exc = info.value
    assert list(exc.failed) == [BROKEN] and isinstance(exc.failed[BROKEN], ZeroDivisionError)
    assert exc.result.findings and all(f.code != BROKEN for f in exc.result.findings)
    assert isinstance(exc.__cause__, ZeroDivisionError)


def test_fix_and_baseline_write_nothing_from_a_failed_lint(tree, broken_rule, tmp_path):
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    baseline = tmp_path / "baseline.json"
    for argv in (["lint", str(tree), "--fix"], ["lint", str(tree), "--write-baseline", str(baseline)]):
        code, _, err = _run(argv)
        assert code == 3, argv
        assert err.strip().splitlines()[-1].startswith(f"mps-migrate: rule {BROKEN} failed"), argv
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before
    assert not baseline.exists()


def test_debug_mode_raises_the_rule_s_own_exception(tree, broken_rule, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_DEBUG", "1")
    monkeypatch.setenv("MPS_MIGRATE_NO_CACHE", "1")
    with pytest.raises(ZeroDivisionError):
        main(["lint", str(tree)])


def test_the_lintrunner_adapter_reports_the_others_with_no_fix_and_names_the_rule(tree, broken_rule):
    files = [str(p) for p in sorted(tree.rglob("*.mm"))]
    code, out, _ = _run(["lintrunner", *files])
    assert code == 0  # lintrunner reads the messages, not the exit code
    messages = [json.loads(line) for line in out.splitlines()]
    failures = [m for m in messages if m["path"] is None]
    assert [m["name"] for m in failures] == ["a rule failed"]
    assert failures[0]["description"].startswith(f"rule {BROKEN} failed, so its findings are missing")
    found = [m for m in messages if m["path"] is not None]
    assert found and all(m["replacement"] is None for m in found)
    assert not any(m["name"].startswith(BROKEN) for m in found)


def test_since_a_revision_the_others_findings_there_are_known(tree, broken_rule):
    def git(*args):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tree, check=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "x")
    with cache.disable_cache():
        code, out, err = _run(["lint", "--since", "HEAD", str(tree)])
    assert code == 3
    assert out.startswith("All checks passed. (") and "known findings not shown" in out  # HEAD's are known
    assert err.strip().splitlines() == [err.strip().splitlines()[0]]
    assert err.startswith(f"mps-migrate: rule {BROKEN} failed")

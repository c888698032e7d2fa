"""Every rule's own cases (rules/cases/MPSNNN.yaml): trees that must and must not be reported."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from migrate.checks import RULES
from migrate.config import Config
from migrate.lint import lint_tree
from migrate.rulebook import FixSafety
from migrate.tree import load_tree
from tests.helpers import COMMON_MPS, KERNELS, OPINFO, OPS, REPO, YAML

CASES = REPO / "rules" / "cases"
SHORT = {"yaml": YAML, "common_mps": COMMON_MPS, "opinfo": OPINFO}
PREFIX = {"native/": "aten/src/ATen/native/", "ops/": f"{OPS}/", "kernels/": f"{KERNELS}/"}
DEFAULT_YAML = "- func: a(Tensor self) -> Tensor\n"


def full_path(short: str) -> str:
    if short in SHORT:
        return SHORT[short]
    for p, rel in PREFIX.items():
        if short.startswith(p):
            return rel + short[len(p) :]
    return short


def load_cases() -> list:
    out = []
    for f in sorted(CASES.glob("MPS*.yaml")):
        data = yaml.safe_load(f.read_text())
        for kind in ("report", "pass"):
            for case in data.get(kind) or ():
                out.append(pytest.param(f.stem, kind, case, id=f"{f.stem}-{kind}-{case['name']}"))
    return out


ALL = load_cases()


def build(root: Path, files: dict[str, str]) -> Path:
    files = {full_path(k): v for k, v in files.items()}
    files.setdefault(YAML, DEFAULT_YAML)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.mark.parametrize("code, kind, case", ALL)
def test_rule_case(tmp_path, code, kind, case):
    root = build(tmp_path / "t", case["files"])
    every = lint_tree(load_tree(root), Config(select=[code, "MPS900"])).findings
    if code != "MPS900":  # a case's files are valid code: nothing passes (or is reported) for being unreadable
        assert [f.message for f in every if f.code == "MPS900"] == []
    found = [f for f in every if f.code == code]
    got = sorted(f"{f.path}:{f.line}" for f in found)
    if kind == "pass":
        assert got == [], [f.message for f in found]
        return
    want = sorted(f"{full_path(a.rsplit(':', 1)[0])}:{a.rsplit(':', 1)[1]}" for a in case["at"])
    assert got == want, [f.message for f in found]
    for f in found:
        assert case.get("message", "") in f.message
    assert fix_kinds(found) == case_fixes(case), "the case's `fix:` says what fix each finding carries"
    if "fixed" in case:  # the text of each file the fixes edit, after every fix (safe or unsafe) is applied
        assert fixed_texts(tmp_path / "t", found) == {full_path(k): v for k, v in case["fixed"].items()}


def fixed_texts(root: Path, found) -> dict[str, str]:
    """Path -> text of each file the findings' fixes edit, after ``mps-migrate fix --unsafe-fixes`` would apply them."""
    from migrate.apply import plan_fixes

    paths = {e.path for f in found if f.fix for e in f.fix.edits}
    plan = plan_fixes(found, {p: (root / p).read_bytes() for p in paths}, unsafe=True)
    assert not plan.dropped
    return {p: data.decode() for p, data in plan.new_texts.items()}


FIX_KINDS = ("safe", "unsafe", "none")


def fix_kinds(found) -> list[str]:
    """The kind of fix of each finding, in the order of their places (as a case's ``at`` sorts)."""
    ordered = sorted(found, key=lambda f: (f.path, f.line, f.column))
    return ["none" if f.fix is None else "safe" if f.fix.safe else "unsafe" for f in ordered]


def case_fixes(case) -> list[str]:
    """A report case's ``fix``: one kind for all its findings, or one per place of ``at`` in sorted order;
    no ``fix``: its findings carry none."""
    fix = case.get("fix", "none")
    kinds = [fix] * len(case["at"]) if isinstance(fix, str) else list(fix)
    assert len(kinds) == len(case["at"]) and set(kinds) <= set(FIX_KINDS), case["name"]
    return kinds


def declared_fixes() -> dict[str, set[str]]:
    """Per rule, the kinds of fix its report cases say their findings carry."""
    out: dict[str, set[str]] = {r.code: set() for r in RULES}
    for p in ALL:
        code, kind, case = p.values
        if kind == "report":
            out[code].update(case_fixes(case))
    return out


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_a_rule_s_fix_safety_is_what_its_cases_show(rule):
    """``rule CODE`` and the README's fix column tell the truth: a `safe` rule's cases show a safe fix and no
    unsafe one, an `unsafe` rule's the reverse, a `mixed` rule's both, a `none` rule's no fix at all (a
    case may lack what a fix needs: "none" beside the others is allowed)."""
    kinds = declared_fixes()[rule.code] - {"none"}
    want = {
        FixSafety.SAFE: {"safe"},
        FixSafety.UNSAFE: {"unsafe"},
        FixSafety.MIXED: {"safe", "unsafe"},
        FixSafety.NONE: set(),
    }[rule.fix_safety]
    assert kinds == want, f"{rule.code} says its fix is {rule.fix_safety}; its cases show {sorted(kinds) or 'none'}"


def test_every_rule_has_cases_of_both_kinds():
    have = {(p.values[0], p.values[1]) for p in ALL}
    missing = [f"{r.code} {kind}" for r in RULES for kind in ("report", "pass") if (r.code, kind) not in have]
    assert not missing, f"rules without cases: {missing}"
    assert {p.values[0] for p in ALL} <= {r.code for r in RULES}  # no case file for an unknown code


def test_a_rule_makes_the_finding_the_dataclass_makes():
    import dataclasses
    import pickle

    from migrate.model import Edit, Finding, Fix, Span

    span, fix = Span("a.mm", 3, 1, 3, 9, 10, 18), Fix("join", (Edit("a.mm", 1, 2, "x"),))
    for rule in RULES:
        for kw in ({}, {"overload": "o.out", "kernel": "k", "fix": fix, "family": "o"}):
            made = rule.finding(span, "message", **kw)
            init = Finding(rule.code, "message", span, rule.severity, **kw)
            assert made == init and hash(made) == hash(init) and repr(made) == repr(init)
            assert list(made.__dict__) == [f.name for f in dataclasses.fields(Finding)] == list(init.__dict__)
            assert pickle.dumps(made) == pickle.dumps(init)
            with pytest.raises(dataclasses.FrozenInstanceError):
                made.message = "other"

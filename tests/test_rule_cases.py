"""Every rule's own cases (rules/cases/MPSNNN.yaml): trees that must and must not be reported."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from migrate.checks import RULES
from migrate.config import Config
from migrate.lint import lint_tree
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

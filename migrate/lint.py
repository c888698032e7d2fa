"""Lint a tree: read -> index -> rules -> findings."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from migrate.config import Config
from migrate.errors import RulesFailed
from migrate.index import Index, under
from migrate.model import Finding, Severity
from migrate.rule_pool import flow_lead, metal_findings, metal_key, run_rules
from migrate.registry import all_rules
from migrate.suppress import filter_suppressed
from migrate.tree import Tree, load_tree


@dataclass
class LintResult:
    tree: Tree
    index: Index
    findings: list[Finding]


def lint_root(
    root: Path, overlay: dict[str, bytes] | None = None, config: Config | None = None, only: list[str] | None = None
) -> LintResult:
    """``lint_tree(load_tree(root, overlay), config, only)``, with the Metal data-flow rules run by the
    parse child once its share of the parse is done, when one runs (rule_pool)."""
    key = metal_key(_enabled(config or Config()), only)
    work = (key, lambda metal_tree: metal_findings(metal_tree, key), flow_lead) if key[0] else None
    return lint_tree(load_tree(root, overlay, metal_work=work), config, only)


def lint_tree(tree: Tree, config: Config | None = None, only_paths: list[str] | None = None) -> LintResult:
    config = config or Config()
    index = Index(tree, scope=only_paths)
    rules = _enabled(config)
    pending, tree.metal_work = tree.metal_work, None  # its value is read once
    metal = pending[1] if pending is not None and pending[0] == metal_key(rules, only_paths) else None
    if pending is not None and metal is None:
        pending[1].drop()
    failed: dict[str, Exception] = {}
    findings: list[Finding] = run_rules(index, rules, metal, failed)  # on two processes when that pays
    findings = filter_suppressed(findings, tree, index)
    findings = [f for f in findings if not config.ignored_in(f.code, f.path)]
    if config.severity:
        findings = [
            dataclasses.replace(f, severity=Severity(config.severity.get(f.code, f.severity))) for f in findings
        ]
    if only_paths is not None:
        findings = [
            f for f in findings if under(f.path, only_paths) or (f.code == "MPS001" and _touches(f, index, only_paths))
        ]
    findings = sorted(set(findings), key=lambda f: (f.path, f.line, f.column, f.code, f.message))
    if failed:
        raise RulesFailed(LintResult(tree, index, findings), failed) from next(iter(failed.values()))
    return LintResult(tree, index, findings)


def _enabled(config: Config) -> dict:
    return {code: rule for code, rule in all_rules().items() if config.enabled(code)}


def _touches(f: Finding, index: Index, prefixes: list[str]) -> bool:
    """MPS001 is about a family: report it when any file of the family is among the given ones
    (its yaml, the old MPSGraph implementation, the new host stub, the Metal functor)."""
    entry = index.entries.get(f.overload or "")
    if entry is None:
        return False
    return any(under(p, prefixes) for p in family_files(index, entry.base_name))


def family_files(index: Index, family: str) -> set[str]:
    files = {index.tree.yaml.path}
    for e in index.families.get(family, ()):
        r = index.routes[e.overload_name]
        if r.defined_at:
            files.add(r.defined_at.path)
    names = {c.name for p in list(files) if p in index.tree.hosts for c in index.tree.hosts[p].kernel_calls if c.name}
    for name in names:
        files.update(r.path for r in index.functor_registrations.get(name, ()))
    return files

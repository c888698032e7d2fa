"""Lint a tree: read -> index -> rules -> findings."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from migrate.config import Config
from migrate.index import Index, under
from migrate.model import Finding, Severity
from migrate.rulebook import all_rules
from migrate.suppress import filter_suppressed
from migrate.tree import Tree


@dataclass
class LintResult:
    tree: Tree
    index: Index
    findings: list[Finding]


def lint_tree(tree: Tree, config: Config | None = None, only_paths: list[str] | None = None) -> LintResult:
    config = config or Config()
    index = Index(tree, scope=only_paths)
    rules = [rule for code, rule in all_rules().items() if config.enabled(code)]
    findings = run_rules(rules, index, beside=only_paths is None and len(tree.metals) >= BESIDE_MIN_METAL)
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
    return LintResult(tree, index, findings)


# The review rules: their per-file analyses (Metal data flow, host bodies) are work the index
# rules never share, so on a whole tree a forked child runs them while this process runs the rest.
BESIDE = frozenset({"MPS016", "MPS017", "MPS018", "MPS019", "MPS020", "MPS021"})
BESIDE_MIN_METAL = 8  # Metal sources (files and inline) before a child pays


def run_rules(rules: list, index: Index, beside: bool = False) -> list[Finding]:
    """Every rule's findings; with ``beside`` (and an idle core) the BESIDE rules run in a child."""
    from migrate.parse_pool import idle_workers, run_beside

    theirs = [r for r in rules if r.code in BESIDE] if beside and idle_workers() > 1 else []
    child = run_beside(lambda: [f for r in theirs for f in r.run(index)]) if theirs else None
    if child is None:
        theirs = []
    findings = [f for r in rules if r not in theirs for f in r.run(index)]
    if child is not None:
        got = child.result()  # None: the child failed, so its rules run here
        findings += got if got is not None else [f for r in theirs for f in r.run(index)]
    return findings


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

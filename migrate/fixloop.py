"""Apply fixes to a fixed point in memory, then write every changed file atomically."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from migrate.apply import atomic_write, plan_fixes
from migrate.config import Config
from migrate.errors import UsageError
from migrate.lint import LintResult, lint_root, lint_tree
from migrate.model import Finding

MAX_ROUNDS = 8


@dataclass
class FixOutcome:
    original: dict[str, bytes]  # path -> bytes as first read (only files that changed)
    new: dict[str, bytes]  # path -> bytes after all rounds
    applied: list[Finding] = field(default_factory=list)
    dropped: list[tuple[Finding, str]] = field(default_factory=list)
    result: LintResult | None = None  # lint of the fixed tree
    rounds: int = 0


def fix_to_fixed_point(
    root: Path, config: Config | None = None, only: list[str] | None = None, unsafe: bool = False, keep=None, tree=None
) -> FixOutcome:
    """Lint, apply non-overlapping fixes in memory, re-lint; repeat until nothing applies.

    ``keep(finding) -> bool`` limits which findings' fixes are applied (e.g. one family);
    ``tree``: the tree at ``root`` when the caller has read it already.
    A removal often exposes the next one (a dead function's include): the loop gets them all,
    so a second ``--fix`` is a no-op.
    """
    overlay: dict[str, bytes] = {}
    result = lint_tree(tree, config, only) if tree is not None else lint_root(root, None, config, only)
    original = dict(result.tree.sources)
    out = FixOutcome(original={}, new={})
    for _ in range(MAX_ROUNDS):
        candidates = [f for f in result.findings if f.fix and (keep is None or keep(f, result.index))]
        plan = plan_fixes(candidates, result.tree.sources, unsafe=unsafe)
        out.dropped.extend(plan.dropped)
        if not plan.new_texts:
            break
        out.rounds += 1
        out.applied.extend(plan.applied)
        overlay.update(plan.new_texts)
        result = lint_root(root, {**original, **overlay}, config, only)  # no re-read from disk
    out.result = result
    for path, data in overlay.items():
        if data != original.get(path):
            out.original[path] = original[path]
            out.new[path] = data
    return out


def write_outcome(root: Path, outcome: FixOutcome) -> None:
    """Write all changed files, or none if any of them changed on disk since it was read."""
    for path, old in outcome.original.items():
        try:
            current = (root / path).read_bytes()
        except FileNotFoundError as exc:
            if old:
                raise UsageError(f"cannot read before writing: {exc.strerror or exc}", str(root / path)) from None
            current = b""  # a file the change creates
        except OSError as exc:
            raise UsageError(f"cannot read before writing: {exc.strerror or exc}", str(root / path)) from None
        if current != old:
            raise UsageError("file changed on disk since it was read; nothing written", str(root / path))
    for path in sorted(outcome.new):
        old = outcome.original[path]
        atomic_write(root / path, outcome.new[path], old if old or (root / path).exists() else None)


def family_of(f: Finding, index) -> str | None:
    """The operator family a finding is about."""
    if f.family:
        return f.family
    if f.overload and f.overload in index.entries:
        return index.entries[f.overload].base_name
    if f.kernel:
        m = re.match(r"^(.*?)(?:_(?:scalar|tensor|out))*_(?:out_)?mps_?$", f.kernel)
        return m.group(1) if m else f.kernel
    return None

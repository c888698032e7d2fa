"""mps-migrate lint."""
from __future__ import annotations

import sys
from pathlib import Path

from migrate.config import load_config
from migrate.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from migrate.lint import lint_tree
from migrate.output.render import render, statistics
from migrate.tree import find_root, load_tree

HELP = "report MPSGraph routes and broken links between yaml, host stubs and Metal kernels"
FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "lintrunner")


def parse_codes(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def add_arguments(lint) -> None:
    lint.add_argument("paths", nargs="*", default=["."], help="files or folders inside one PyTorch tree (default: .)")
    lint.add_argument("--format", "--output-format", dest="format", default="full", choices=FORMATS)
    lint.add_argument("--select", type=parse_codes, help="comma-separated codes or prefixes to enable")
    lint.add_argument("--extend-select", type=parse_codes, default=[])
    lint.add_argument("--ignore", type=parse_codes, default=None, help="comma-separated codes or prefixes to disable")
    lint.add_argument("--extend-ignore", type=parse_codes, default=[], help="disable these too, keeping the configured ignores")
    lint.add_argument("--statistics", action="store_true", help="count findings per rule")
    lint.add_argument("--fix", action="store_true", help="apply safe fixes")
    lint.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    lint.add_argument("--diff", action="store_true", help="print fixes as a unified diff, write nothing")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    lint.add_argument("-o", "--output", type=Path, help="write the report to this file")


def resolve_paths(paths: list[str]) -> tuple[Path, list[str] | None]:
    roots = {find_root(Path(p)) for p in paths}
    if len(roots) > 1:
        raise UsageError("paths belong to different PyTorch trees: " + ", ".join(sorted(map(str, roots))))
    root = roots.pop()
    rels = []
    for p in paths:
        rel = Path(p).resolve().relative_to(root).as_posix()
        if rel == ".":
            return root, None
        rels.append(rel)
    return root, rels


def run(args) -> int:
    root, only = resolve_paths(args.paths)
    config = load_config(root).apply_flags(args.select, args.extend_select, args.ignore, args.extend_ignore)
    if args.diff or args.fix:
        return apply_fixes(args, root, config, only)
    tree = load_tree(root)
    findings = lint_tree(tree, config, only).findings
    fixed_texts: dict[str, tuple[str, str]] = {}
    if args.format == "lintrunner":
        from migrate.fixloop import fix_to_fixed_point

        outcome = fix_to_fixed_point(root, config, only, unsafe=args.unsafe_fixes)
        fixed_texts = {p: (outcome.original[p].decode("utf-8", "replace"), new.decode("utf-8", "replace"))
                       for p, new in outcome.new.items()}
    report(args, root, tree.sources, findings, fixed_texts)
    if args.format == "lintrunner" or args.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if findings else EXIT_OK


def apply_fixes(args, root: Path, config, only, keep=None, tree=None, on_written=None) -> int:
    """--diff: print what the fixes change, write nothing. --fix: write, then report what remains
    (``on_written(index of the fixed tree)`` runs after the write)."""
    from migrate.apply import unified_diff
    from migrate.fixloop import fix_to_fixed_point, write_outcome

    outcome = fix_to_fixed_point(root, config, only, unsafe=args.unsafe_fixes, keep=keep, tree=tree)
    for f, why in outcome.dropped:
        print(f"mps-migrate: fix for {f.code} at {f.path}:{f.line} skipped: {why}", file=sys.stderr)
    if args.diff:
        diff = "".join(unified_diff(p, outcome.original[p], outcome.new[p]) for p in sorted(outcome.new))
        _emit(args, diff)
        return EXIT_FINDINGS if diff else EXIT_OK
    write_outcome(root, outcome)
    n = len(outcome.applied)
    if n:
        print(f"mps-migrate: applied {n} fix{'es' if n != 1 else ''} in {len(outcome.new)} file(s)", file=sys.stderr)
    remaining = outcome.result.findings
    if keep is not None:
        remaining = [f for f in remaining if keep(f, outcome.result.index)]
    report(args, root, outcome.result.tree.sources, remaining, {})
    if on_written is not None:
        on_written(outcome.result.index)
    if args.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if remaining else EXIT_OK


def report(args, root: Path, sources, findings, fixed_texts) -> None:
    if args.statistics:
        _emit(args, statistics(findings))
    else:
        _emit(args, render(findings, args.format, root, sources, fixed_texts))


def _emit(args, text: str) -> None:
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)

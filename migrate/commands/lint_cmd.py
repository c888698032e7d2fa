"""mps-migrate lint."""
from __future__ import annotations

import sys
from pathlib import Path

from migrate.apply import atomic_write, plan_fixes, unified_diff
from migrate.config import load_config
from migrate.errors import UsageError
from migrate.lint import lint_tree
from migrate.output.render import render, statistics
from migrate.tree import find_root, load_tree

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
HELP = "report MPSGraph routes and broken links between yaml, host stubs and Metal kernels"
FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "lintrunner")


def _codes(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def add_arguments(lint) -> None:
    lint.add_argument("paths", nargs="*", default=["."], help="files or folders inside one PyTorch tree (default: .)")
    lint.add_argument("--format", "--output-format", dest="format", default="full", choices=FORMATS)
    lint.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable")
    lint.add_argument("--extend-select", type=_codes, default=[])
    lint.add_argument("--ignore", type=_codes, default=None, help="comma-separated codes or prefixes to disable")
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
    config = load_config(root)
    if args.select is not None:
        config.select = list(args.select)
    config.select += args.extend_select
    if args.ignore is not None:
        config.ignore = list(args.ignore)
    tree = load_tree(root)
    result = lint_tree(tree, config, only)
    findings = result.findings
    out = []

    if args.diff or args.fix or args.format == "lintrunner":
        plan = plan_fixes(findings, tree.sources, unsafe=args.unsafe_fixes)
        for f, why in plan.dropped:
            print(f"mps-migrate: fix for {f.code} at {f.path}:{f.line} skipped: {why}", file=sys.stderr)
        if args.diff:
            diff = "".join(unified_diff(p, tree.sources[p], new) for p, new in sorted(plan.new_texts.items()))
            _emit(args, diff)
            return EXIT_FINDINGS if diff else EXIT_OK
        if args.fix:
            for p, new in sorted(plan.new_texts.items()):
                atomic_write(root / p, new, tree.sources[p])
            if plan.new_texts:
                tree = load_tree(root)
                findings = lint_tree(tree, config, only).findings
                n = len(plan.applied)
                print(f"mps-migrate: applied {n} fix{'es' if n != 1 else ''} in {len(plan.new_texts)} file(s)", file=sys.stderr)
        fixed_texts = {p: (tree.sources[p].decode("utf-8", "replace"), new.decode("utf-8", "replace"))
                       for p, new in plan.new_texts.items()} if args.format == "lintrunner" and not args.fix else {}
    else:
        fixed_texts = {}

    if args.statistics:
        out.append(statistics(findings))
    else:
        out.append(render(findings, args.format, root, tree.sources, fixed_texts))
    _emit(args, "".join(out))
    if args.format == "lintrunner" or args.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if findings else EXIT_OK


def _emit(args, text: str) -> None:
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)

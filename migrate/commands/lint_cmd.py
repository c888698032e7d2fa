"""mps-migrate lint."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from migrate.config import load_config
from migrate.errors import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK, RulesFailed, UsageError
from migrate.output.render import render, statistics
from migrate.output.summary import failing, summary
from migrate.result_cache import lint_findings
from migrate.rulebook import SEVERITIES
from migrate.tree import find_root

# migrate.apply, migrate.baseline and migrate.lint are imported where used: a pre-commit run
# served from the result cache needs none of them (startup time).

HELP = "report MPSGraph routes and broken links between yaml, host stubs and Metal kernels"
FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "lintrunner")
HUMAN = ("full", "concise")  # formats whose stdout may end with the summary; the others get it on stderr


def parse_codes(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def add_arguments(lint) -> None:
    lint.add_argument("paths", nargs="*", default=["."], help="files or folders inside one PyTorch tree (default: .)")
    lint.add_argument("--format", "--output-format", dest="format", default="full", choices=FORMATS)
    lint.add_argument("--select", type=parse_codes, help="comma-separated codes or prefixes to enable")
    lint.add_argument("--extend-select", type=parse_codes, default=[])
    lint.add_argument("--ignore", type=parse_codes, default=None, help="comma-separated codes or prefixes to disable")
    lint.add_argument(
        "--extend-ignore", type=parse_codes, default=[], help="disable these too, keeping the configured ignores"
    )
    lint.add_argument("--statistics", action="store_true", help="count findings per rule")
    lint.add_argument("--fix", action="store_true", help="apply safe fixes")
    lint.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    lint.add_argument("--diff", action="store_true", help="print fixes as a unified diff, write nothing")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    lint.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default="warning",
        help="exit 1 only for findings at or above this severity (default: warning; advice alone exits 0)",
    )
    lint.add_argument(
        "--since",
        metavar="REV",
        help="report and fix only findings the same files did not have at git revision REV (hooks: HEAD)",
    )
    lint.add_argument("--baseline", type=Path, metavar="FILE", help="do not report the findings recorded in FILE")
    lint.add_argument(
        "--write-baseline", type=Path, metavar="FILE", help="record every current finding in FILE, exit 0"
    )
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


def known_findings(args, root: Path, config, only, current: list | None = None) -> Counter | None:
    """Fingerprints not to report: the --baseline file's and the --since revision's; None without either.
    ``current``: this run's findings when known; when it has none, the revision is checked, not linted."""
    if not args.baseline and not args.since:
        return None
    from migrate.baseline import known_at_revision, read_baseline

    known = read_baseline(args.baseline) if args.baseline else Counter()
    if args.since:
        known += known_at_revision(root, args.since, config, only, lint=current is None or bool(current))
    return known


def run(args) -> int:
    root, only = resolve_paths(args.paths)
    config = load_config(root).apply_flags(args.select, args.extend_select, args.ignore, args.extend_ignore)
    if args.write_baseline and (args.diff or args.fix):
        raise UsageError("--write-baseline records findings; it does not combine with --fix or --diff")
    if args.diff or args.fix:
        return apply_fixes(args, root, config, only, known=known_findings(args, root, config, only))
    failure = None
    if args.format == "lintrunner":  # its fix loop starts from this tree
        from migrate.lint import lint_root

        result = lint_root(root, None, config, only)
        tree, every, sources = result.tree, result.findings, result.tree.sources
    else:
        tree = None
        try:
            every, sources = lint_findings(root, config, only)
        except RulesFailed as exc:  # bugs: the other rules' findings are reported, then the failed rules named
            if args.write_baseline:  # a baseline without a rule's findings would hide them later
                raise
            failure, every, sources = exc, exc.result.findings, exc.result.tree.sources
    if args.write_baseline:
        from migrate.apply import atomic_write
        from migrate.baseline import baseline_text

        atomic_write(args.write_baseline, baseline_text(every, sources).encode())
        print(f"mps-migrate: wrote a baseline of {len(every)} finding(s) to {args.write_baseline}", file=sys.stderr)
        return EXIT_OK
    known = known_findings(args, root, config, only, every)
    findings = every
    if known is not None:
        from migrate.baseline import subtract

        findings = subtract(every, known, sources)
    fixed_texts: dict[str, tuple[str, str]] = {}
    if args.format == "lintrunner":
        from migrate.fixloop import fix_to_fixed_point

        outcome = fix_to_fixed_point(root, config, only, unsafe=args.unsafe_fixes, keep=_unknown(known), tree=tree)
        fixed_texts = {
            p: (outcome.original[p].decode("utf-8", "replace"), new.decode("utf-8", "replace"))
            for p, new in outcome.new.items()
        }
    report(args, root, sources, findings, fixed_texts, hidden=len(every) - len(findings))
    if failure is not None:
        for line in failure.lines():
            print(f"mps-migrate: {line}", file=sys.stderr)
        return EXIT_INTERNAL
    if args.format == "lintrunner" or args.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if failing(findings, args.fail_on) else EXIT_OK


def _unknown(known: Counter | None):
    """``keep`` for the fix loop: only findings not in ``known``."""
    if known is None:
        return None
    from migrate.baseline import fingerprint

    return lambda f, index: fingerprint(f, index.tree.sources) not in known


def apply_fixes(
    args, root: Path, config, only, keep=None, tree=None, on_written=None, known=None, family: str | None = None
) -> int:
    """--diff: print what the fixes change, write nothing. --fix: write, then report what remains
    (``on_written(index of the fixed tree)`` runs after the write). ``known``: findings left alone."""
    from migrate.apply import unified_diff
    from migrate.fixloop import fix_to_fixed_point, write_outcome

    new = _unknown(known)
    both = keep if new is None else new if keep is None else (lambda f, ix: keep(f, ix) and new(f, ix))
    outcome = fix_to_fixed_point(root, config, only, unsafe=args.unsafe_fixes, keep=both, tree=tree)
    for f, why in outcome.dropped:
        print(f"mps-migrate: fix for {f.code} at {f.path}:{f.line} skipped: {why}", file=sys.stderr)
    if not outcome.new:
        print("mps-migrate: nothing to fix" + (f" for {family}" if family else ""), file=sys.stderr)
    if args.diff:
        diff = "".join(unified_diff(p, outcome.original[p], outcome.new[p]) for p in sorted(outcome.new))
        if diff or args.output:
            _emit(args, diff, f"a diff of {len(outcome.new)} file(s)")
        return EXIT_FINDINGS if diff else EXIT_OK
    write_outcome(root, outcome)
    n = len(outcome.applied)
    if n:
        print(f"mps-migrate: applied {n} fix{'es' if n != 1 else ''} in {len(outcome.new)} file(s)", file=sys.stderr)
    remaining = outcome.result.findings
    if keep is not None:
        remaining = [f for f in remaining if keep(f, outcome.result.index)]
    from migrate.baseline import subtract

    shown = remaining if known is None else subtract(remaining, known, outcome.result.tree.sources)
    report(args, root, outcome.result.tree.sources, shown, {}, hidden=len(remaining) - len(shown))
    if on_written is not None:
        on_written(outcome.result.index)
    if args.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if failing(shown, args.fail_on) else EXIT_OK


def report(args, root: Path, sources, findings, fixed_texts, hidden: int = 0) -> None:
    """The findings in the chosen format, then (except for lintrunner) the summary."""
    if args.statistics:
        _emit(args, statistics(findings), f"statistics of {len(findings)} finding(s)")
    else:
        _emit(
            args,
            render(findings, args.format, root, sources, fixed_texts),
            f"{len(findings)} finding(s) ({args.format})",
        )
    if args.format == "lintrunner" and not args.statistics:
        return
    text = summary(findings, args.fail_on, hidden)
    if args.output or not (args.statistics or args.format in HUMAN):
        sys.stderr.write(text)
    else:
        sys.stdout.write(text)  # full: the findings end with a blank line already


def _emit(args, text: str, what: str) -> None:
    if args.output:
        from migrate.apply import atomic_write

        atomic_write(args.output, text.encode("utf-8"))
        print(f"mps-migrate: wrote {what} to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)

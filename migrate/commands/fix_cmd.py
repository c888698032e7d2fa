"""mps-migrate fix FAMILY: every fix for one operator family."""

from __future__ import annotations

from pathlib import Path

from migrate.commands.lint_cmd import FORMATS, apply_fixes
from migrate.config import load_config
from migrate.errors import UsageError
from migrate.fixloop import family_of
from migrate.opinfo import print_next_steps
from migrate.rulebook import SEVERITIES
from migrate.model import Finding
from migrate.tree import find_root

HELP = "apply every fix for one operator family (dispatch rewrite, dead code, stale includes and xfails)"


def add_arguments(p) -> None:
    p.add_argument("family", help="operator family, e.g. atan2 (covers atan2.out, atan2_, atan2, ...)")
    p.add_argument("--root", type=Path, default=Path("."), help="any path inside the PyTorch tree")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (stale xfails)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff, write nothing")
    p.add_argument("--format", default="full", choices=FORMATS, help="report format for what remains")
    p.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default="warning",
        help="exit 1 only for remaining findings at or above this severity (default: warning)",
    )
    p.add_argument("-o", "--output", type=Path)


def run(args) -> int:
    root = find_root(args.root, (args.command, args.family))
    from migrate.index import Index
    from migrate.tree import load_tree

    fam = args.family[:-1] if args.family.endswith("_") and not args.family.endswith("__") else args.family
    tree = load_tree(root)
    if fam not in Index(tree).families:
        raise UsageError(f"no operator family {args.family!r} in native_functions.yaml")

    def keep(f: Finding, index) -> bool:
        return family_of(f, index) == fam

    args.fix = not args.diff
    args.statistics = False
    args.exit_zero = False
    return apply_fixes(
        args,
        root,
        load_config(root),
        None,
        keep=keep,
        tree=tree,
        family=fam,
        on_written=lambda index: print_next_steps(index, fam),
    )

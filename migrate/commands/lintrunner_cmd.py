"""mps-migrate lintrunner: the adapter lintrunner runs (`command = [..., 'lintrunner', '@{{PATHSFILE}}']`).

Prints lintrunner JSON lines and always exits 0, as lintrunner requires: its own failures
(bad paths, unreadable trees, crashes) become one message with ``path`` null.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from migrate.commands.lint_cmd import parse_codes
from migrate.errors import RulesFailed, UsageError

HELP = "lintrunner adapter: lint the files listed in @PATHSFILE, print lintrunner JSON lines, exit 0"


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="*", help="files, or @FILE holding one path per line (lintrunner's {{PATHSFILE}})")
    p.add_argument("--select", type=parse_codes, help="comma-separated codes or prefixes to enable")
    p.add_argument("--ignore", type=parse_codes, default=None, help="comma-separated codes or prefixes to disable")
    p.add_argument(
        "--extend-ignore", type=parse_codes, default=[], help="disable these too, keeping the configured ignores"
    )
    p.add_argument("--unsafe-fixes", action="store_true", help="also offer fixes marked unsafe")
    p.add_argument(
        "--since",
        metavar="REV",
        help="report only findings the same files did not have at git revision REV (e.g. HEAD)",
    )


def failure(description: str, name: str = "mps-migrate failed") -> str:
    return (
        json.dumps(
            {
                "path": None,
                "line": None,
                "char": None,
                "code": "MPSMIGRATE",
                "severity": "error",
                "name": name,
                "original": None,
                "replacement": None,
                "description": description,
            }
        )
        + "\n"
    )


def expand(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if p.startswith("@"):
            try:
                text = Path(p[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot read the paths file: {exc.strerror or exc}", p[1:]) from None
            out += [line.strip() for line in text.splitlines() if line.strip()]
        else:
            out.append(p)
    return out


def lint_files(args, files: list[str]) -> str:
    from migrate.apply import plan_fixes
    from migrate.baseline import known_at_revision, subtract
    from migrate.config import load_config
    from migrate.lint import lint_root
    from migrate.output.render import lintrunner
    from migrate.tree import find_root

    out = []
    by_root: dict[Path, list[str]] = {}
    for f in files:
        try:
            root = find_root(Path(f))
        except UsageError as exc:
            out.append(failure(str(exc), "path outside any PyTorch tree"))
            continue
        by_root.setdefault(root, []).append(Path(f).resolve().relative_to(root).as_posix())
    for root, rels in sorted(by_root.items()):
        config = load_config(root).apply_flags(args.select, (), args.ignore, args.extend_ignore)
        try:
            result, failed = lint_root(root, None, config, rels), None
        except RulesFailed as exc:  # the other rules' findings, no fixes, and a failure naming the rule
            result, failed = exc.result, exc
        tree, findings = result.tree, result.findings
        if args.since:
            findings = subtract(findings, known_at_revision(root, args.since, config, rels), tree.sources)
        if failed is not None:
            out.append(lintrunner(findings, root, {}, []))
            out += [failure(line, "a rule failed") for line in failed.lines()]
            continue
        plan = plan_fixes(findings, tree.sources, unsafe=args.unsafe_fixes)
        texts = {
            p: (tree.sources[p].decode("utf-8", "replace"), new.decode("utf-8", "replace"))
            for p, new in plan.new_texts.items()
        }
        out.append(lintrunner(findings, root, texts, plan.applied))
    return "".join(out)


def run(args) -> int:
    try:
        text = lint_files(args, expand(args.paths))
    except UsageError as exc:
        text = failure(str(exc))
    except Exception:  # lintrunner shows this as a general linter failure instead of a crash
        text = failure("internal error, please report it:\n" + traceback.format_exc())
    sys.stdout.write(text)
    return 0

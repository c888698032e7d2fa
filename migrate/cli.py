"""Command line: mps-migrate {lint,explain,rule} ..."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from migrate import __version__
from migrate.errors import UsageError

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mps-migrate", description=__doc__)
    p.add_argument("--version", action="version", version=f"mps-migrate {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    lint = sub.add_parser("lint", help="report MPSGraph routes and broken links between yaml, host stubs and kernels")
    lint.add_argument("paths", nargs="*", default=["."], help="files or folders inside one PyTorch tree (default: .)")
    lint.add_argument("--format", "--output-format", dest="format", default="full",
                      choices=("full", "concise", "json", "json-lines", "sarif", "github", "lintrunner"))
    lint.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable")
    lint.add_argument("--extend-select", type=_codes, default=[])
    lint.add_argument("--ignore", type=_codes, default=None, help="comma-separated codes or prefixes to disable")
    lint.add_argument("--statistics", action="store_true", help="count findings per rule")
    lint.add_argument("--fix", action="store_true", help="apply safe fixes")
    lint.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    lint.add_argument("--diff", action="store_true", help="print fixes as a unified diff, write nothing")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    lint.add_argument("-o", "--output", type=Path, help="write the report to this file")

    ex = sub.add_parser("explain", help="print the MPS route of every overload of an operator family")
    ex.add_argument("op", nargs="?", help="family (atan2) or overload (atan2.out)")
    ex.add_argument("--all", action="store_true", help="every overload of the yaml")
    ex.add_argument("--root", type=Path, default=Path("."), help="any path inside the PyTorch tree")
    ex.add_argument("--format", choices=("text", "json"), default="text")

    rule = sub.add_parser("rule", help="print the documentation of a rule")
    rule.add_argument("code", nargs="?", help="MPS001 ...")
    rule.add_argument("--all", action="store_true", help="list every rule")
    rule.add_argument("--format", choices=("text", "json"), default="text")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "lint":
            from migrate.commands.lint_cmd import run_lint
            return run_lint(args)
        if args.command == "explain":
            from migrate.commands.explain_cmd import run_explain
            return run_explain(args)
        if args.command == "rule":
            return run_rule(args)
    except UsageError as exc:
        print(f"mps-migrate: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("mps-migrate: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    return EXIT_ERROR


def run_rule(args) -> int:
    from migrate.rulebook import all_rules

    rules = all_rules()
    if args.all or not args.code:
        if args.format == "json":
            print(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity, "fix": r.fix_safety}
                              for r in rules.values()], indent=2))
        else:
            for r in rules.values():
                print(f"{r.code}  {r.name:<28} {r.severity:<8} {r.summary.split(chr(10))[0]}")
        return EXIT_OK
    code = args.code.upper()
    if code not in rules:
        raise UsageError(f"unknown rule {args.code!r} (known: {', '.join(rules)})")
    r = rules[code]
    if args.format == "json":
        print(json.dumps({"code": r.code, "name": r.name, "severity": r.severity, "message": r.message,
                          "summary": r.summary, "why": r.why, "example": r.example, "fix": r.fix,
                          "fix_safety": r.fix_safety}, indent=2))
    else:
        print(r.doc(), end="")
    return EXIT_OK

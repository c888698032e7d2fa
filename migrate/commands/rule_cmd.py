"""mps-migrate rule: documentation of one rule, or the list of all."""

from __future__ import annotations

import json
import re
import shutil
import textwrap

from migrate.errors import UsageError
from migrate.registry import all_rules

HELP = "print the documentation of a rule (or --all to list them)"


def add_arguments(p) -> None:
    p.add_argument("code", nargs="?", help="MPS001 ...")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def run(args) -> int:
    rules = all_rules()
    if args.all or not args.code:
        if args.format == "markdown":
            print(rule_table(), end="")
        elif args.format == "json":
            print(
                json.dumps(
                    [
                        {"code": r.code, "name": r.name, "severity": r.severity, "fix": r.fix_safety}
                        for r in rules.values()
                    ],
                    indent=2,
                )
            )
        else:
            width = max(80, shutil.get_terminal_size((100, 24)).columns)
            for r in rules.values():
                head = f"{r.code}  {r.name:<28} {r.severity:<8} "
                print(
                    textwrap.fill(
                        first_sentence(r.doc.summary),
                        width,
                        initial_indent=head,
                        subsequent_indent=" " * len(head),
                        break_on_hyphens=False,
                        break_long_words=False,
                    )
                )
        return 0
    code = args.code.upper()
    if code not in rules:
        raise UsageError(f"unknown rule {args.code!r} (known: {', '.join(rules)})")
    r = rules[code]
    if args.format == "json":
        d = r.doc
        print(
            json.dumps(
                {
                    "code": r.code,
                    "name": r.name,
                    "severity": r.severity,
                    "message": r.message_template,
                    "summary": d.summary,
                    "why": d.why,
                    "example": d.example,
                    "fix": d.fix,
                    "fix_safety": d.fix_safety,
                },
                indent=2,
            )
        )
    else:
        print(r.text(), end="")
    return 0


def rule_table() -> str:
    """The rule table of docs/rules.md (kept in sync by a test)."""
    rows = ["| code | name | severity | finds | fix |", "|---|---|---|---|---|"]
    for r in all_rules().values():
        rows.append(f"| {r.code} | {r.name} | {r.severity} | {' '.join(r.doc.summary.split())} | {r.fix_safety} |")
    return "\n".join(rows) + "\n"


def first_sentence(text: str) -> str:
    """What a rule finds, in one sentence (its summary's first)."""
    return re.split(r"(?<=\.)\s", " ".join(text.split()), maxsplit=1)[0]

"""mps-migrate explain: the static, MPS-focused dispatch table of a family."""

from __future__ import annotations

import json
from pathlib import Path

from migrate.errors import UsageError
from migrate.index import Index
from migrate.tree import find_root, load_tree

HELP = "print the MPS route of every overload of an operator family"


def add_arguments(ex) -> None:
    ex.add_argument("op", nargs="?", help="family (atan2) or overload (atan2.out)")
    ex.add_argument("--all", action="store_true", help="every overload of the yaml")
    ex.add_argument("--root", type=Path, default=Path("."), help="any path inside the PyTorch tree")
    ex.add_argument("--format", choices=("text", "json"), default="text")


def select_routes(ix: Index, op: str | None, all_: bool):
    if all_:
        return list(ix.routes.values())
    if not op:
        raise UsageError("give an operator (e.g. atan2) or --all")
    if op in ix.entries and "." in op:
        return [ix.routes[op]]
    family = op[:-1] if op.endswith("_") and not op.endswith("__") else op
    entries = ix.families.get(family)
    if not entries:
        raise UsageError(f"no operator {op!r} in {ix.tree.yaml.path}")
    return [ix.routes[e.overload_name] for e in entries]


def run(args) -> int:
    root = find_root(args.root, (args.command, args.op))
    ix = Index(load_tree(root))
    routes = select_routes(ix, args.op, args.all)
    if args.format == "json":
        print(json.dumps([r.to_json() for r in routes], indent=2))
        return 0
    width = max(len(r.overload) for r in routes)
    for r in routes:
        print(
            f"{r.overload:<{width}}  {r.impl:<10} via {r.via_label:<14} kernel {r.kernel or '-'}"
            f"{'  @ ' + r.defined_at.where if r.defined_at else ''}"
        )
        for hop in r.hops:
            print(f"{'':<{width}}    -> {hop}")
    return 0
